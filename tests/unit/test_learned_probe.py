"""The position probe of chapter 4 and the similarity helpers."""

import numpy as np
import pytest
import torch

import posenc_lib as pe


@pytest.fixture(scope="module")
def hard():
    return pe.train_position_probe(target_width=0.0)


@pytest.fixture(scope="module")
def soft():
    return pe.train_position_probe(target_width=2.0)


def test_targets_one_hot_and_gaussian():
    one_hot = pe.position_targets(4, 6)
    torch.testing.assert_close(one_hot, torch.eye(4, 6))
    gauss = pe.position_targets(5, 9, target_width=1.5)
    torch.testing.assert_close(gauss.sum(-1), torch.ones(5))
    assert torch.equal(gauss.argmax(-1), torch.arange(5))
    assert gauss[2, 1] == pytest.approx(gauss[2, 3].item())  # symmetric around the true position
    assert gauss[2, 1] > gauss[2, 0] > 0


def test_training_learns_the_task(hard, soft):
    for probe in (hard, soft):
        assert len(probe.losses) == 300
        assert probe.losses[-1] < 0.05 * probe.losses[0]
        assert probe.accuracy > 0.95


def test_soft_targets_make_neighbours_similar_hard_targets_do_not(hard, soft):
    trained = slice(0, 48)
    near_soft = pe.similarity_by_offset(pe.cosine_similarity_matrix(soft.positions.weight[trained]), 1)[1]
    near_hard = pe.similarity_by_offset(pe.cosine_similarity_matrix(hard.positions.weight[trained]), 1)[1]
    assert near_soft > 0.8
    assert abs(near_hard) < 0.3


def test_unseen_rows_keep_their_initial_values(hard):
    assert torch.equal(hard.positions.weight[48:], hard.initial_table[48:])
    assert not torch.allclose(hard.positions.weight[:48], hard.initial_table[:48])


def test_weight_decay_only_shrinks_unseen_rows():
    probe = pe.train_position_probe(steps=50, weight_decay=0.1, lr=0.01)
    ratio = probe.positions.weight[48:] / probe.initial_table[48:]
    torch.testing.assert_close(ratio, torch.full_like(ratio, (1 - 0.01 * 0.1) ** 50), rtol=1e-4, atol=0)


def test_seeded_and_side_effect_free():
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    threads = torch.get_num_threads()
    a = pe.train_position_probe(steps=20, seed=5)
    assert torch.equal(torch.rand(3), expected_next)  # the global RNG was not consumed
    assert torch.get_num_threads() == threads
    b = pe.train_position_probe(steps=20, seed=5)
    c = pe.train_position_probe(steps=20, seed=6)
    assert a.losses == b.losses and torch.equal(a.positions.weight, b.positions.weight)
    assert not torch.equal(a.initial_table, c.initial_table)


@pytest.mark.parametrize(
    "kwargs,exc,pattern",
    [
        ({"train_len": 65}, ValueError, "train_len must be <= max_len=64"),
        ({"steps": 0}, ValueError, "steps must be a positive integer"),
        ({"lr": 0}, ValueError, "lr must be a finite positive number"),
        ({"target_width": -1.0}, ValueError, "target_width must be a finite number >= 0"),
        ({"weight_decay": float("nan")}, ValueError, "weight_decay"),
        ({"seed": 1.5}, TypeError, "seed must be an int"),
        ({"d_model": "32"}, TypeError, "d_model must be a positive integer"),
    ],
)
def test_probe_bad_input(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        pe.train_position_probe(**kwargs)


def test_cosine_similarity_matrix():
    table = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0], [1.0, 1.0]])
    sim = pe.cosine_similarity_matrix(table)
    expected = torch.tensor(
        [[1, 0, -1, 2**-0.5], [0, 1, 0, 2**-0.5], [-1, 0, 1, -(2**-0.5)], [2**-0.5, 2**-0.5, -(2**-0.5), 1]]
    )
    torch.testing.assert_close(sim, expected.float())
    with pytest.raises(ValueError, match="all-zero row"):
        pe.cosine_similarity_matrix(torch.zeros(3, 2))
    with pytest.raises(ValueError, match="table must be a 2-D floating-point"):
        pe.cosine_similarity_matrix(torch.ones(2, 3, 4))
    with pytest.raises(TypeError, match="table must be a torch.Tensor"):
        pe.cosine_similarity_matrix([[1.0, 0.0]])


def test_similarity_by_offset():
    sim = torch.arange(16.0).reshape(4, 4)
    torch.testing.assert_close(pe.similarity_by_offset(sim), torch.tensor([7.5, 6.0, 4.5, 3.0]))
    torch.testing.assert_close(pe.similarity_by_offset(sim, 1), torch.tensor([7.5, 6.0]))
    with pytest.raises(ValueError, match="max_offset must be an integer in 0..3"):
        pe.similarity_by_offset(sim, 4)
    with pytest.raises(ValueError, match="square"):
        pe.similarity_by_offset(torch.zeros(3, 4))

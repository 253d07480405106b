"""Chapter 4's checker (how many training sequences look up each row of a learned table) fails on the stub and
on typical wrong answers (each with its own hint, not the general one), and on answers that call the library
module or the checker's reference; it passes the notebook's solution and right answers written another way."""

import numpy as np
import pytest
import torch

import posenc_lib as pe
from _helpers import checker_contract
from posenc_lib.exercises import check_updates_per_row
from posenc_lib.exercises.learned import UPDATES_HINT, reference_updates_per_row


def updates_solution(lengths, max_len):
    """The notebook's solution."""
    rows = torch.arange(max_len, device=lengths.device)
    return (rows[:, None] < lengths[None, :]).sum(dim=1)


def updates_numpy_loop(lengths, max_len):
    """Another right answer: a loop in NumPy, int32."""
    counts = np.zeros(max_len, dtype=np.int32)
    for n in lengths.tolist():
        counts[:n] += 1
    return counts


def updates_by_autograd(lengths, max_len):
    """Another right answer, by computation: the gradient of a plain nn.Embedding, float."""
    table = torch.nn.Embedding(max_len, 1)
    sum(table(torch.arange(n)).sum() for n in lengths.tolist()).backward()
    return table.weight.grad[:, 0]


def updates_by_bincount(lengths, max_len):
    """Another right answer: how many sequences have each length, summed from the end."""
    per_length = torch.bincount(lengths, minlength=max_len + 1)[1:]  # sequences of length 1 .. max_len
    return per_length.flip(0).cumsum(0).flip(0)


def updates_off_by_one(lengths, max_len):
    return (torch.arange(max_len)[:, None] <= lengths[None]).sum(dim=1)


def updates_reversed(lengths, max_len):
    return (torch.arange(max_len)[:, None] >= lengths[None]).sum(dim=1)


def updates_reached_or_not(lengths, max_len):
    return torch.arange(max_len) < lengths.max()


def updates_as_fractions(lengths, max_len):
    return updates_solution(lengths, max_len) / len(lengths)


def updates_up_to_the_longest(lengths, max_len):
    return updates_solution(lengths, int(lengths.max()))


def updates_counts_tokens(lengths, max_len):
    return ((torch.arange(max_len)[:, None] < lengths[None]) * lengths[None]).sum(dim=1)


WRONG_ANSWERS = [
    (updates_off_by_one, "off by one"),
    (updates_reversed, "too short to reach row p"),
    (updates_reached_or_not, "whether a row is reached"),
    (updates_as_fractions, "fractions"),
    (updates_up_to_the_longest, "max_len of them"),
    (updates_counts_tokens, "counted tokens"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_updates_per_row, updates_solution, WRONG_ANSWERS
)


def test_wrong_answers_get_a_specific_hint_not_the_general_one():
    for wrong, _ in WRONG_ANSWERS:
        result = check_updates_per_row(wrong)
        assert result.hint and result.hint != UPDATES_HINT, wrong.__name__


def test_right_answers_written_another_way_pass():
    assert check_updates_per_row(updates_numpy_loop)
    assert check_updates_per_row(updates_by_autograd)
    assert check_updates_per_row(updates_by_bincount)


def test_the_reference_counts_the_sequences_longer_than_each_row():
    counts = reference_updates_per_row(torch.tensor([3, 5, 5, 8]), 10)
    assert counts.tolist() == [4, 4, 4, 3, 3, 1, 1, 1, 0, 0]
    assert reference_updates_per_row(torch.tensor([48] * 32), 64)[47:49].tolist() == [32, 0]


def test_an_answer_that_uses_the_library_module_fails(capsys):
    def via_module(lengths, max_len):  # a right answer, by the gradient of the library's module
        module = pe.LearnedPositionalEmbedding(d_model=1, max_len=max_len)
        sum(module(torch.zeros(1, n, 1)).sum() for n in lengths.tolist()).backward()
        return module.weight.grad[:, 0]

    result = check_updates_per_row(via_module)
    assert not result and result.reason == "calls the library"
    assert "LearnedPositionalEmbedding" in capsys.readouterr().out


def test_an_answer_that_calls_the_reference_fails(capsys):
    result = check_updates_per_row(lambda lengths, max_len: reference_updates_per_row(lengths, max_len))
    assert not result and result.reason == "calls the library"
    assert "reference_updates_per_row" in capsys.readouterr().out
    assert reference_updates_per_row(torch.tensor([2]), 3).tolist() == [1, 1, 0]  # restored afterwards


def test_the_reference_refuses_bad_input():
    with pytest.raises(TypeError, match="lengths"):
        reference_updates_per_row(torch.tensor([1.0, 2.0]), 4)
    with pytest.raises(ValueError, match="max_len"):
        reference_updates_per_row(torch.tensor([5]), 4)
    with pytest.raises(ValueError, match="max_len"):
        reference_updates_per_row(torch.tensor([1]), 0)

"""posenc_lib.training and posenc_lib.tasks: the loop learns, is seeded, reports per step; the tasks are what they claim."""

import io
import math

import pytest
import torch
import torch.nn.functional as F

from posenc_lib import tasks, training
from posenc_lib.model import TransformerConfig, build_model
from posenc_lib.tasks import IGNORE_INDEX

pytestmark = pytest.mark.usefixtures("one_thread")


def tiny_copy_setup(seed: int = 0, scheme: str = "rope"):
    config = TransformerConfig(
        vocab_size=9, n_outputs=8, scheme=scheme, causal=True, d_model=32, n_heads=2, n_layers=1, d_ff=64, max_len=12
    )
    model = build_model(config, seed=seed)
    next_batch = lambda g: tasks.lag_copy_batch(16, 12, 8, 1, generator=g)  # noqa: E731  (8 tokens + BOS)
    return model, next_batch


def test_training_lowers_the_loss_on_a_tiny_task():
    model, next_batch = tiny_copy_setup()
    history = training.train(model, next_batch, steps=120, seed=0, lr=1e-2, progress=False)
    first = sum(h["loss"] for h in history[:10]) / 10
    last = sum(h["loss"] for h in history[-10:]) / 10
    assert first > 1.8  # about log(8) = 2.08 at the start
    assert last < 0.5 * first
    tokens, targets = tasks.lag_copy_batch(64, 12, 8, 1, generator=torch.Generator().manual_seed(99))
    assert training.accuracy(training.predict(model, tokens), targets) > 0.5  # chance is 1/8


def test_history_has_one_entry_per_step_with_the_schedule():
    model, next_batch = tiny_copy_setup()
    history = training.train(model, next_batch, steps=40, seed=0, lr=1e-3, warmup=4, progress=False)
    assert [h["step"] for h in history] == list(range(40))
    assert set(history[0]) == {"step", "loss", "accuracy", "lr", "grad_norm"}
    lrs = [h["lr"] for h in history]
    assert lrs[:4] == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3])
    assert lrs[-1] == pytest.approx(1e-4)
    assert all(a >= b for a, b in zip(lrs[3:], lrs[4:]))  # non-increasing after warm-up
    assert all(0.0 <= h["accuracy"] <= 1.0 and math.isfinite(h["loss"]) for h in history)
    assert not model.training  # returned in eval mode


def test_same_seed_same_run_different_seed_different_run():
    runs = []
    for model_seed, data_seed in [(0, 0), (0, 0), (0, 1), (1, 0)]:
        model, next_batch = tiny_copy_setup(seed=model_seed)
        runs.append([h["loss"] for h in training.train(model, next_batch, steps=15, seed=data_seed, progress=False)])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2] and runs[0] != runs[3]


def test_progress_bar_goes_to_the_given_file_and_can_be_switched_off(capsys):
    model, next_batch = tiny_copy_setup()
    sink = io.StringIO()
    training.train(model, next_batch, steps=5, seed=0, progress=True, desc="tiny", progress_file=sink)
    assert "tiny" in sink.getvalue() and "/5 [" in sink.getvalue() and "loss=" in sink.getvalue()
    training.train(model, next_batch, steps=5, seed=0, progress=False)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_metrics_ignore_unscored_targets():
    # (2, 3, 2): predictions [[0, 1, 0], [1, 1, 0]]
    logits = torch.tensor([[[5.0, 0.0], [0.0, 5.0], [5.0, 0.0]], [[0.0, 5.0], [0.0, 5.0], [5.0, 0.0]]])
    targets = torch.tensor([[IGNORE_INDEX, 1, 1], [IGNORE_INDEX, 0, 0]])
    assert training.accuracy(logits, targets) == pytest.approx(0.5)
    by_pos = training.accuracy_by_position(logits, targets)
    assert math.isnan(by_pos[0]) and by_pos[1:].tolist() == [0.5, 0.5]
    nll = F.cross_entropy(logits.reshape(-1, 2), targets.reshape(-1), ignore_index=IGNORE_INDEX, reduction="none").view(
        2, 3
    )
    torch.testing.assert_close(training.loss_by_position(logits, targets)[1:], nll[:, 1:].mean(0))
    torch.testing.assert_close(training.loss_fn(logits, targets), nll[:, 1:].mean())
    buckets = training.bucket_means(torch.tensor([float("nan"), 1.0, 0.0, 0.5, 0.25]), 2)
    torch.testing.assert_close(buckets, torch.tensor([1.0, 0.25, 0.25]))


def test_order_batch_is_balanced_and_labelled_by_order():
    tokens, labels = tasks.order_batch(64, 10, 12, generator=torch.Generator().manual_seed(0))
    assert tokens.shape == (64, 10) and labels.tolist().count(1) == 32
    for row, label in zip(tokens, labels):
        a, b = row.tolist().index(tasks.TOKEN_A), row.tolist().index(tasks.TOKEN_B)
        assert label == int(a < b)
    # the second half is the first with A and B swapped: same multisets, opposite labels
    assert torch.equal(tokens[:32].sort(1).values, tokens[32:].sort(1).values)
    assert torch.equal(labels[:32], 1 - labels[32:])


def test_order_eval_set_groups_of_four():
    tokens, labels = tasks.order_eval_set(50, 9, 12, seed=3)
    groups, group_labels = tokens.view(50, 4, 9), labels.view(50, 4)
    assert torch.equal(groups[:, 2], groups[:, 0].flip(1)) and torch.equal(groups[:, 3], groups[:, 1].flip(1))
    assert torch.all(group_labels.sum(1) == 2)
    assert torch.equal(group_labels[:, 0], 1 - group_labels[:, 1]) and torch.equal(
        group_labels[:, 0], 1 - group_labels[:, 2]
    )
    again, _ = tasks.order_eval_set(50, 9, 12, seed=3)
    assert torch.equal(tokens, again)


def test_lag_copy_targets():
    tokens, targets = tasks.lag_copy_batch(4, 10, 16, 3, generator=torch.Generator().manual_seed(0))
    assert torch.all(tokens[:, 0] == 16) and tokens[:, 1:].max() < 16  # BOS, then content
    assert torch.all(targets[:, :4] == IGNORE_INDEX)
    assert torch.equal(targets[:, 4:], tokens[:, 1:-3])
    tokens, targets = tasks.lag_copy_batch(4, 10, 16, 3, generator=torch.Generator().manual_seed(0), bos=False)
    assert tokens.max() < 16 and torch.all(targets[:, :3] == IGNORE_INDEX)
    assert torch.equal(targets[:, 3:], tokens[:, :-3])


def test_markov_language_follows_its_rule_and_its_optimum():
    rule = tasks.markov_rule(6, seed=1)
    for bos in (False, True):
        tokens, targets = tasks.markov_batch(
            8, 20, rule, p_rule=1.0, generator=torch.Generator().manual_seed(0), bos=bos
        )
        assert tokens.shape == targets.shape == (8, 20)
        first = 1 if bos else 0
        assert torch.all(tokens[:, 0] == 6) == bos
        assert torch.all(targets[:, : first + 1] == IGNORE_INDEX)
        assert torch.equal(targets[:, :-1][:, first + 1 :], tokens[:, first + 2 :])  # the target is the next token
        content = tokens[:, first:]
        assert torch.equal(content[:, 2:], rule[content[:, :-2], content[:, 1:-1]])
        # every scored target follows the rule from the two tokens before it
        scored = targets[:, first + 1 :]
        assert torch.equal(scored, rule[tokens[:, first:-1], tokens[:, first + 1 :]])
    assert tasks.markov_optimum(6, 1.0) == (1.0, 0.0)
    accuracy, loss = tasks.markov_optimum(6, 0.0)
    assert accuracy == pytest.approx(1 / 6) and loss == pytest.approx(math.log(6))
    # with noise, the rule is followed at about the stated rate
    tokens, _ = tasks.markov_batch(400, 30, rule, p_rule=0.8, generator=torch.Generator().manual_seed(1), bos=False)
    rate = (tokens[:, 2:] == rule[tokens[:, :-2], tokens[:, 1:-1]]).float().mean().item()
    assert rate == pytest.approx(tasks.markov_optimum(6, 0.8)[0], abs=0.01)


BAD = [
    (
        lambda: training.train(torch.zeros(3), lambda g: None, steps=1, seed=0),
        TypeError,
        "model must be a torch.nn.Module",
    ),
    (lambda: training.train(torch.nn.Linear(2, 2), None, steps=1, seed=0), TypeError, "next_batch must be callable"),
    (
        lambda: training.train(torch.nn.Linear(2, 2), lambda g: None, steps=0, seed=0),
        ValueError,
        "steps must be a positive integer",
    ),
    (
        lambda: training.train(torch.nn.Linear(2, 2), lambda g: None, steps=1, seed=0, lr=-1.0),
        ValueError,
        "lr must be a finite positive",
    ),
    (
        lambda: training.train(torch.nn.Linear(2, 2), lambda g: None, steps=1, seed=None),
        TypeError,
        "seed must be an int",
    ),
    (
        lambda: training.accuracy(torch.zeros(3, 2), torch.zeros(4, dtype=torch.long)),
        ValueError,
        "must agree on the leading dimensions",
    ),
    (
        lambda: training.accuracy_by_position(torch.zeros(3, 2), torch.zeros(3, dtype=torch.long)),
        ValueError,
        r"logits must have shape \(b, s, c\)",
    ),
    (lambda: training.bucket_means(torch.zeros(2, 2), 2), ValueError, "values must be 1-D"),
    (lambda: training.bucket_means(torch.zeros(4), 0), ValueError, "bucket_size must be a positive integer"),
    (lambda: tasks.order_batch(5, 8, 12, generator=torch.Generator()), ValueError, "batch_size must be even"),
    (lambda: tasks.order_batch(4, 1, 12, generator=torch.Generator()), ValueError, "seq_len must be >= 2"),
    (lambda: tasks.order_batch(4, 8, 2, generator=torch.Generator()), ValueError, "vocab_size must be >= 3"),
    (lambda: tasks.order_batch(4, 8, 12, generator=0), TypeError, "generator must be a torch.Generator"),
    (lambda: tasks.a_before_b(torch.tensor([[0, 0, 1]])), ValueError, "exactly one A"),
    (
        lambda: tasks.lag_copy_batch(4, 5, 8, 4, generator=torch.Generator()),
        ValueError,
        "lag must be smaller than the number of content tokens",
    ),
    (
        lambda: tasks.markov_batch(2, 5, torch.zeros(3, 4, dtype=torch.long), p_rule=0.5, generator=torch.Generator()),
        ValueError,
        "rule must be a square",
    ),
    (
        lambda: tasks.markov_batch(2, 5, tasks.markov_rule(4, seed=0), p_rule=1.5, generator=torch.Generator()),
        ValueError,
        "p_rule must be a probability",
    ),
]


@pytest.mark.parametrize("call,exc,pattern", BAD, ids=[f"case{i}" for i in range(len(BAD))])
def test_bad_input_is_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_predict_and_train_move_batches_to_the_model_s_device():
    """A model on another device (here `meta`) gets its batches there; nothing is computed on the CPU by mistake."""
    model, _ = tiny_copy_setup()
    tokens, _ = tasks.lag_copy_batch(6, 12, 8, 1, generator=torch.Generator().manual_seed(1))  # CPU tensors
    logits = training.predict(model.to("meta"), tokens, batch_size=4)
    assert logits.device.type == "meta" and logits.shape == (6, 12, 8)
    on_meta, targets = tasks.lag_copy_batch(6, 12, 8, 1, generator=torch.Generator().manual_seed(1), device="meta")
    assert on_meta.device.type == targets.device.type == "meta"

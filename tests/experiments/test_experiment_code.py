"""The pieces of experiments/ that chapter 12's numbers rest on, checked on small models in a few seconds."""

import copy

import pytest
import torch

import posenc_lib as pe
import run_experiments as script
from posenc_lib import rope_scaling, training
from posenc_lib.model import TransformerConfig, build_model

extension = script.extension  # experiments/context_extension.py

L = 8  # trained length of the small models below


def small_decoder(scheme: str, seed: int = 0) -> torch.nn.Module:
    config = TransformerConfig(
        vocab_size=9, n_outputs=8, scheme=scheme, causal=True, max_len=L, d_model=32, n_heads=2, n_layers=2, d_ff=32
    )
    return build_model(config, seed=seed)


def copy_data(seq_len: int, n: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    return pe.tasks.lag_copy_batch(n, seq_len, 8, 2, generator=torch.Generator().manual_seed(0))


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: one thread is faster


@pytest.mark.parametrize("method", extension.METHODS)
def test_each_method_uses_the_library_frequencies(method):
    head_dim, factor, seq_len = 16, 4, 4 * L
    theta = pe.rope_frequencies(head_dim)
    expected = {
        "plain": theta,
        "linear": rope_scaling.linear_scaling_frequencies(theta, factor),
        "ntk": rope_scaling.ntk_aware_frequencies(theta, factor),
        "dynamic_ntk": rope_scaling.ntk_aware_frequencies(theta, seq_len / L),
        "yarn": rope_scaling.yarn_frequencies(theta, factor, L),
        "llama3": rope_scaling.llama3_frequencies(theta, factor, L),
    }[method]
    rope = extension.method_rope(method, head_dim, factor, L, seq_len)
    torch.testing.assert_close(rope.frequencies.double(), expected)
    expected_factor = rope_scaling.yarn_attention_factor(factor) if method == "yarn" else 1.0
    x = torch.randn(1, 1, 5, head_dim)
    plain = pe.RotaryEmbedding(head_dim, seq_len, frequencies=expected)
    torch.testing.assert_close(rope(x), plain(x) * expected_factor)


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method must be one of"):
        extension.method_rope("rerope", 16, 2, L, 2 * L)


def test_with_method_changes_a_copy_and_plain_changes_nothing():
    model = small_decoder("rope")
    tokens, _ = copy_data(4 * L)
    before = training.predict(model, tokens)
    stretched = extension.with_method(model, "linear", 4, L, 4 * L)
    assert not torch.allclose(training.predict(stretched, tokens), before)
    torch.testing.assert_close(training.predict(model, tokens), before)  # the original is untouched
    plain = extension.with_method(model, "plain", 4, L, 4 * L)
    torch.testing.assert_close(training.predict(plain, tokens), before)


def test_dynamic_ntk_is_plain_up_to_L_and_ntk_at_the_current_length():
    model = small_decoder("rope")
    tokens, targets = copy_data(4 * L)
    dynamic = extension.dynamic_correct_by_position(model, tokens, targets, L, bucket=L)  # (n, 4L)
    plain = extension.correct_by_position(model, tokens, targets)
    torch.testing.assert_close(dynamic[:, :L], plain[:, :L], equal_nan=True)
    for factor in (2, 3, 4):  # bucket ending at factor * L: NTK-aware scaling with that factor
        ntk = extension.with_method(model, "ntk", factor, L, factor * L)
        hits = extension.correct_by_position(ntk, tokens[:, : factor * L], targets[:, : factor * L])
        torch.testing.assert_close(dynamic[:, (factor - 1) * L : factor * L], hits[:, -L:], equal_nan=True)


def test_fine_tune_trains_a_copy_on_the_longer_length_with_the_same_batches_for_every_method():
    model = small_decoder("rope")
    seen = []

    def batch(batch_size, seq_len, generator):
        tokens, targets = pe.tasks.lag_copy_batch(batch_size, seq_len, 8, 2, generator=generator)
        seen.append(tokens)
        return tokens, targets

    before = copy.deepcopy(model.state_dict())
    tuned = {
        m: extension.fine_tune(model, m, 2, L, batch, steps=2, batch_size=4, lr=1e-3, seed=5) for m in ("plain", "yarn")
    }
    assert [t.shape for t in seen] == [(4, 2 * L)] * 4
    torch.testing.assert_close(seen[0], seen[2])  # the same data for both methods
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, before[name])  # the trained model is untouched
    assert not torch.equal(tuned["plain"].head.weight, model.head.weight)
    torch.testing.assert_close(
        tuned["yarn"].rope.frequencies.double(), rope_scaling.yarn_frequencies(pe.rope_frequencies(16), 2, L)
    )


def test_summarize_gives_exact_region_means_and_bucket_curves():
    train_len, bucket = script.DECODER["train_len"], script.DECODER["bucket"]
    hits = torch.zeros(3, 4 * train_len)
    hits[:, :train_len] = 1.0
    hits[0, train_len : 2 * train_len] = 1.0  # one of three sequences right between L and 2L
    hits[:, 0] = float("nan")  # not scored
    summary = script.summarize(hits)
    assert summary["regions"] == {"inside": 1.0, "2x": pytest.approx(1 / 3, abs=1e-5), "4x": 0.0}  # 5 digits
    assert len(summary["accuracy_by_position"]) == 4 * train_len // bucket
    assert script.summarize(hits[:, : 2 * train_len])["regions"].keys() == {"inside", "2x"}


def test_attention_by_offset_reads_the_weights_at_each_offset():
    model = small_decoder("none")
    tokens, _ = copy_data(script.ATTENTION["queries"][1])
    weights = script.attention_weights(model, tokens)  # per layer (n, h, s, s)
    assert len(weights) == 2 and weights[0].shape == (16, 2, tokens.shape[1], tokens.shape[1])
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(16, 2, tokens.shape[1]))
    result = script.attention_by_offset(model, tokens)
    assert torch.tensor(result["by_offset"]).shape == (2, 2, script.ATTENTION["offsets"])
    start, stop = script.ATTENTION["queries"]
    for layer, head, offset in ((0, 0, 0), (1, 1, 3)):
        manual = torch.stack([weights[layer][:, head, q, q - offset] for q in range(start, stop)]).mean()
        assert result["by_offset"][layer][head][offset] == pytest.approx(manual.item(), rel=1e-3)
        bos = weights[layer][:, head, start:stop, 0].mean()
        assert result["on_bos"][layer][head] == pytest.approx(bos.item(), rel=1e-3)


def test_alibi_slope_scale_scales_the_bias_inside_the_block_only():
    model = small_decoder("alibi")
    tokens, _ = copy_data(L)
    plain = script.attention_weights(model, tokens)[0]
    with script.alibi_slope_scale(1e-12):  # practically no bias: the weights of `none` with these weights
        flat = script.attention_weights(model, tokens)[0]
    torch.testing.assert_close(script.attention_weights(model, tokens)[0], plain)  # restored
    none = small_decoder("none")
    none.load_state_dict(model.state_dict())
    torch.testing.assert_close(flat, script.attention_weights(none, tokens)[0])
    with pytest.raises(ValueError, match="scale must be > 0"), script.alibi_slope_scale(0.0):
        pass


def test_the_sliding_window_changes_nothing_within_the_window():
    model = small_decoder("rope")
    tokens, _ = copy_data(4 * L)
    full, windowed = training.predict(model, tokens), training.predict(model, tokens, window=L)
    torch.testing.assert_close(windowed[:, :L], full[:, :L])
    assert not torch.allclose(windowed[:, L:], full[:, L:])

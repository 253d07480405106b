"""posenc_lib.same_weights: chapter 9's six schemes on one set of weights, T5's table drawn from a seed."""

from __future__ import annotations

import pytest
import torch

from posenc_lib.model import TransformerConfig, build_model, count_parameters
from posenc_lib.same_weights import COMPARED_SCHEMES, draw_t5_table, first_changed_stage, models_under_schemes

IDS = torch.tensor([[5, 17, 3, 42, 8, 1]])  # (b, s)


def _nope(**overrides):
    config = TransformerConfig(
        vocab_size=64, scheme="none", causal=True, d_model=32, n_heads=4, max_len=64, **overrides
    )
    return build_model(config, seed=0)


def test_every_model_runs_the_same_blocks_and_t5_adds_its_table_only():
    nope = _nope()
    models = models_under_schemes(nope)
    assert tuple(models) == COMPARED_SCHEMES
    for model in models.values():
        assert model.blocks is nope.blocks and model.token_embedding is nope.token_embedding
    t5 = models["t5"].relative_bias
    assert count_parameters(models["t5"]) - count_parameters(nope) == t5.num_buckets * 4 == 128


def test_the_drawn_t5_table_is_seeded_nonzero_and_leaves_the_global_state():
    state = torch.random.get_rng_state()
    a = models_under_schemes(_nope(), ("t5",), seed=3)["t5"].relative_bias.table.weight
    b = models_under_schemes(_nope(), ("t5",), seed=3)["t5"].relative_bias.table.weight
    c = models_under_schemes(_nope(), ("t5",), seed=4)["t5"].relative_bias.table.weight
    assert torch.equal(torch.random.get_rng_state(), state)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, c)
    assert 0.5 < a.std().item() < 1.5  # N(0, 1) draws, 128 of them
    half = models_under_schemes(_nope(), ("t5",), seed=3, t5_std=0.5)["t5"].relative_bias.table.weight
    torch.testing.assert_close(half, 0.5 * a)


def test_first_changed_stage_names_where_each_scheme_acts():
    models = models_under_schemes(_nope())
    with torch.no_grad():
        traces = {scheme: model.trace(IDS)[0] for scheme, model in models.items()}
    first = {scheme: first_changed_stage(traces[scheme], traces["none"]) for scheme in COMPARED_SCHEMES}
    assert first == {
        "none": None,
        "sinusoidal": "x",
        "learned": "x",
        "rope": "q",
        "alibi": "scores",
        "t5": "scores",
    }
    # the scores move by exactly the drawn bias: T5's table entry for the bucket of r = j - i
    bias = models["t5"].relative_bias(IDS.shape[1])  # (n_h, s, s)
    gap = traces["t5"]["scores"] - traces["none"]["scores"]  # (b, n_h, s, s)
    visible = torch.isfinite(gap)
    torch.testing.assert_close(gap[visible], bias.expand_as(gap)[visible])


def test_a_zero_t5_table_changes_nothing_and_is_reported_as_none():
    nope = _nope()
    zero = nope.with_scheme("t5")  # T5RelativeBias starts at zero
    with torch.no_grad():
        assert first_changed_stage(zero.trace(IDS)[0], nope.trace(IDS)[0]) is None


def test_draw_t5_table_follows_the_model_dtype():
    nope = _nope().to(torch.float64)
    model = models_under_schemes(nope, ("t5",))["t5"]
    assert model.relative_bias.table.weight.dtype == torch.float64
    assert model.relative_bias.table.weight.abs().sum() > 0


def test_bad_input_is_refused_naming_the_argument():
    nope = _nope()
    with pytest.raises(TypeError, match="model"):
        models_under_schemes("nope")
    with pytest.raises(TypeError, match="schemes"):
        models_under_schemes(nope, "t5")
    with pytest.raises(ValueError, match="schemes"):
        models_under_schemes(nope, ("t6",))
    with pytest.raises(ValueError, match="schemes"):
        models_under_schemes(nope, ())
    with pytest.raises(ValueError, match="t5_std"):
        models_under_schemes(nope, t5_std=0.0)
    with pytest.raises(ValueError, match="scheme 't5'"):
        draw_t5_table(nope)
    with pytest.raises(TypeError, match="trace must"):
        first_changed_stage(None, {})
    with pytest.raises(ValueError, match="missing"):
        first_changed_stage({"x": torch.zeros(1)}, {"x": torch.zeros(1)})

"""posenc_lib.model: shapes, that every positional scheme acts exactly where it should, the symmetries the
chapters rely on, sliding windows, swapping the RoPE module, and every scheme on the meta device and in bf16/fp16."""

import pytest
import torch

import posenc_lib as pe
import posenc_lib.model as model_module
from posenc_lib import tasks, training
from posenc_lib.model import (
    ADDED_TO_INPUT,
    INSIDE_ATTENTION,
    SCHEMES,
    TRACE_STAGES,
    Block,
    TinyTransformer,
    TransformerConfig,
    build_model,
    count_parameters,
    merge_heads,
    split_heads,
)

VOCAB = 12
SMALL = {"d_model": 32, "n_heads": 4, "n_layers": 2, "d_ff": 64, "max_len": 16}
D, H = SMALL["d_model"], SMALL["n_heads"]

pytestmark = pytest.mark.usefixtures("one_thread")


def encoder(scheme: str, seed: int = 0, **overrides) -> TinyTransformer:
    return build_model(
        TransformerConfig(vocab_size=VOCAB, scheme=scheme, causal=False, n_outputs=2, **{**SMALL, **overrides}),
        seed=seed,
    )


def decoder(scheme: str, seed: int = 0, **overrides) -> TinyTransformer:
    return build_model(
        TransformerConfig(vocab_size=VOCAB, scheme=scheme, causal=True, **{**SMALL, **overrides}), seed=seed
    )


def random_tokens(b: int, s: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (b, s), generator=torch.Generator().manual_seed(seed))


def same_weights(causal: bool = True) -> dict[str, TinyTransformer]:
    """One model per scheme, all sharing the weights of the NoPE model."""
    reference = (decoder if causal else encoder)("none", seed=5)
    return {scheme: reference.with_scheme(scheme) for scheme in SCHEMES}


def traces(tokens, *, causal=True, offset=0) -> dict[str, dict[str, torch.Tensor]]:
    """The first block's trace under every scheme, same weights."""
    with torch.no_grad():
        return {scheme: model.trace(tokens, offset=offset)[0] for scheme, model in same_weights(causal).items()}


def differs(a, b):
    return not torch.equal(a, b)


# --- shapes and structure ------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_output_shapes(scheme):
    tokens = random_tokens(3, 10)
    assert encoder(scheme)(tokens).shape == (3, 2)
    assert decoder(scheme)(tokens).shape == (3, 10, VOCAB)
    assert decoder(scheme).hidden_states(tokens).shape == (3, 10, D)


def test_split_and_merge_heads_are_inverse_views():
    x = torch.randn(2, 5, D)
    heads = split_heads(x, H)
    assert heads.shape == (2, H, 5, D // H)
    torch.testing.assert_close(heads[:, 1, 3], x[:, 3, D // H : 2 * D // H])  # head 1 of token 3
    torch.testing.assert_close(merge_heads(heads), x)


def test_trace_shapes_and_stage_names():
    tokens = random_tokens(2, 7, seed=1)
    model = decoder("rope")
    trace = model.trace(tokens)
    assert len(trace) == SMALL["n_layers"]
    t = trace[0]
    assert list(t) == list(TRACE_STAGES)
    assert t["x"].shape == t["out"].shape == t["attn_out"].shape == (2, 7, D)
    for stage in ("q_proj", "k_proj", "v", "q", "k"):
        assert t[stage].shape == (2, H, 7, D // H)
    assert t["scores"].shape == t["weights"].shape == (2, H, 7, 7)
    torch.testing.assert_close(trace[1]["x"], trace[0]["out"])  # block 2 reads block 1's output


@pytest.mark.parametrize("scheme", SCHEMES)
def test_forward_equals_the_traced_run(scheme):
    model, tokens = decoder(scheme), random_tokens(2, 9, seed=2)
    with torch.no_grad():
        trace = model.trace(tokens)
        torch.testing.assert_close(trace[0]["x"], model.embed(tokens))
        torch.testing.assert_close(model.ln_final(trace[-1]["out"]), model.hidden_states(tokens))
        torch.testing.assert_close(model.head(model.ln_final(trace[-1]["out"])), model(tokens))


def test_only_the_chosen_scheme_has_position_modules():
    expected = {
        "none": (type(None), type(None), type(None)),
        "sinusoidal": (pe.SinusoidalPositionalEncoding, type(None), type(None)),
        "learned": (pe.LearnedPositionalEmbedding, type(None), type(None)),
        "rope": (type(None), pe.RotaryEmbedding, type(None)),
        "alibi": (type(None), type(None), type(None)),
        "t5": (type(None), type(None), pe.T5RelativeBias),
    }
    assert set(expected) == set(SCHEMES)
    for scheme in SCHEMES:
        model = encoder(scheme)
        assert (type(model.position), type(model.rope), type(model.relative_bias)) == expected[scheme], scheme


@pytest.mark.parametrize("causal", [False, True])
def test_t5_adds_its_learned_bias_to_every_block(causal):
    """The t5 model is the NoPE model plus T5RelativeBias(s) in every block's scores, one table for all blocks."""
    config = TransformerConfig(vocab_size=VOCAB, scheme="t5", causal=causal, **SMALL)
    model = build_model(config, seed=0)
    assert model.relative_bias.bidirectional is not causal
    with torch.no_grad():
        model.relative_bias.table.weight.normal_(generator=torch.Generator().manual_seed(1))
    tokens = torch.randint(0, VOCAB, (2, 9), generator=torch.Generator().manual_seed(2))
    bias = model.relative_bias(9)  # (n_h, s, s)
    x = model.embed(tokens)
    for block in model.blocks:
        x = block(x, bias=bias)
    with torch.no_grad():
        torch.testing.assert_close(model.hidden_states(tokens), model.ln_final(x))
        nope = model.with_scheme("none")
        assert (model(tokens) - nope(tokens)).abs().max() > 1e-3  # the bias changes the output
    model(tokens).sum().backward()
    grad = model.relative_bias.table.weight.grad
    assert grad is not None and grad.abs().sum() > 0  # the table trains


def test_only_the_learned_table_adds_parameters():
    models = same_weights()
    counts = {scheme: count_parameters(model) for scheme, model in models.items()}
    assert counts["learned"] - counts["none"] == SMALL["max_len"] * D
    assert counts["sinusoidal"] == counts["rope"] == counts["alibi"] == counts["none"]
    blocks = {count_parameters(model.blocks[0]) for model in models.values()}
    # no biases in the projections: 4 d^2 (attention) + 2 d d_ff + d_ff + d (MLP) + 4 d (two LayerNorms)
    assert blocks == {4 * D * D + 2 * D * SMALL["d_ff"] + SMALL["d_ff"] + 5 * D}
    gpt2_style = TransformerConfig(vocab_size=VOCAB, d_model=D, n_heads=H, d_ff=4 * D, projection_bias=True)
    assert count_parameters(Block(gpt2_style)) == 12 * D * D + 13 * D  # GPT-2's block


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned", "rope"])
def test_position_module_is_called(scheme):
    model = decoder(scheme)
    calls = []
    module = model.rope if scheme == "rope" else model.position
    module.register_forward_hook(lambda module, args, out: calls.append(args[0].shape))
    model(random_tokens(2, 7))
    if scheme == "rope":  # queries and keys of every layer, (b, n_h, s, d_h)
        assert calls == [(2, H, 7, D // H)] * (2 * SMALL["n_layers"])
    else:  # once, on the token embeddings (b, s, d)
        assert calls == [(2, 7, D)]


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_bias_is_computed_once_and_reaches_every_layer(monkeypatch, causal):
    seen_bias, seen_alibi = [], []
    real_alibi, real_attention = model_module.alibi_bias, model_module.attention

    def spy_alibi(*args, **kwargs):
        seen_alibi.append(kwargs)
        return real_alibi(*args, **kwargs)

    def spy_attention(q, k, v, **kwargs):
        seen_bias.append(kwargs["bias"])
        return real_attention(q, k, v, **kwargs)

    monkeypatch.setattr(model_module, "alibi_bias", spy_alibi)
    monkeypatch.setattr(model_module, "attention", spy_attention)
    (decoder if causal else encoder)("alibi")(random_tokens(2, 6))
    assert [kwargs["causal"] for kwargs in seen_alibi] == [causal]
    assert len(seen_bias) == SMALL["n_layers"]
    torch.testing.assert_close(seen_bias[0], real_alibi(H, 6, causal=causal))


# --- each scheme changes exactly the tensors it should ---------------------------------------------


def test_embed_without_added_positions_is_the_token_embedding():
    tokens = random_tokens(2, 7, seed=1)
    for scheme, model in same_weights().items():
        unchanged = torch.equal(model.embed(tokens), model.token_embedding(tokens))
        assert unchanged == (scheme not in ADDED_TO_INPUT), scheme


def test_additive_schemes_change_the_input_and_everything_after():
    t = traces(random_tokens(2, 7, seed=1))
    for scheme in ADDED_TO_INPUT:
        assert all(differs(t[scheme][stage], t["none"][stage]) for stage in TRACE_STAGES), scheme


def test_rope_changes_q_and_k_only_after_the_projection():
    t = traces(random_tokens(2, 7, seed=1))
    for stage in ("x", "q_proj", "k_proj", "v"):
        assert torch.equal(t["rope"][stage], t["none"][stage]), stage
    for stage in ("q", "k", "scores", "weights", "out"):
        assert differs(t["rope"][stage], t["none"][stage]), stage
    torch.testing.assert_close(t["rope"]["q"][:, :, 0], t["none"]["q"][:, :, 0])  # position 0: angle 0


def test_alibi_changes_the_scores_by_exactly_the_bias():
    t = traces(random_tokens(2, 7, seed=1))
    for stage in ("x", "q_proj", "k_proj", "v", "q", "k"):
        assert torch.equal(t["alibi"][stage], t["none"][stage]), stage
    bias = pe.alibi_bias(H, 7)  # (n_h, s, s), -inf above the diagonal
    finite = torch.isfinite(bias).expand_as(t["alibi"]["scores"])
    torch.testing.assert_close(t["alibi"]["scores"][finite], (t["none"]["scores"] + bias)[finite])
    assert differs(t["alibi"]["weights"], t["none"]["weights"])


def test_causal_mask_gives_zero_weight_to_future_keys():
    for scheme, t in traces(random_tokens(2, 7, seed=1)).items():
        assert torch.all(t["weights"].triu(1) == 0), scheme
        future = ~pe.causal_mask(7, 7)
        assert torch.all(t["scores"][..., future] == float("-inf")), scheme
        assert torch.isfinite(t["scores"][..., ~future]).all(), scheme
        torch.testing.assert_close(t["weights"].sum(-1), torch.ones(2, H, 7))


@pytest.mark.parametrize("scheme", INSIDE_ATTENTION + ("none",))
def test_relative_schemes_give_the_same_scores_at_any_offset(scheme):
    tokens = random_tokens(2, 7, seed=1)
    start, shifted = traces(tokens)[scheme], traces(tokens, offset=9)[scheme]
    torch.testing.assert_close(shifted["scores"], start["scores"], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(shifted["out"], start["out"], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("scheme", ADDED_TO_INPUT)
def test_absolute_schemes_change_with_the_offset(scheme):
    tokens = random_tokens(2, 7, seed=1)
    start, shifted = traces(tokens)[scheme], traces(tokens, offset=9)[scheme]
    assert (shifted["scores"] - start["scores"]).nan_to_num(0, 0, 0).abs().max() > 1e-3


def test_rope_offset_is_the_position_of_the_first_token():
    """Rotating at offset p is rotating at positions p .. p + s - 1: the queries equal apply_rope's."""
    model = decoder("rope")
    trace = model.trace(random_tokens(1, 5, seed=3), offset=7)[0]
    torch.testing.assert_close(trace["q"], pe.apply_rope(trace["q_proj"], torch.arange(7, 12)))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_scheme_changes_the_output(scheme):
    """Same weights except the positional part: the output differs from `none` unless the scheme is `none`.

    T5's table starts at zero (no preference until training shapes it), so an untrained t5 model is NoPE.
    """
    tokens = random_tokens(2, 9)
    models = same_weights()
    different = not torch.allclose(models["none"](tokens), models[scheme](tokens), atol=1e-6)
    assert different == (scheme not in ("none", "t5"))


def test_with_scheme_shares_the_weights_themselves():
    base = decoder("none", seed=1)
    rope = base.with_scheme("rope")
    learned_a, learned_b, learned_c = (base.with_scheme("learned", seed=s) for s in (0, 0, 1))
    assert rope.token_embedding is base.token_embedding and rope.blocks is base.blocks and rope.head is base.head
    assert rope.config == TransformerConfig(vocab_size=VOCAB, scheme="rope", causal=True, **SMALL)
    torch.testing.assert_close(learned_a.position.weight, learned_b.position.weight)
    assert not torch.equal(learned_a.position.weight, learned_c.position.weight)
    with torch.no_grad():  # a change to one model is a change to the other
        rope.blocks[0].mlp[0].weight.add_(1.0)
    assert torch.equal(base.blocks[0].mlp[0].weight, rope.blocks[0].mlp[0].weight)
    assert base.with_scheme("none").training == base.training


# --- the symmetries the chapters rely on ---------------------------------------------------------


def test_none_encoder_is_permutation_equivariant_and_its_pooled_output_invariant():
    model = encoder("none")
    tokens = random_tokens(4, 12)
    hidden, logits = model.hidden_states(tokens), model(tokens)
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        perm = torch.randperm(12, generator=generator)
        torch.testing.assert_close(model.hidden_states(tokens[:, perm]), hidden[:, perm], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(model(tokens[:, perm]), logits, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned", "rope", "alibi"])
def test_other_encoders_are_not_permutation_invariant(scheme):
    model = encoder(scheme)
    tokens = random_tokens(4, 12)
    perm = torch.tensor([3, 0, 7, 1, 11, 5, 2, 9, 4, 10, 6, 8])  # not a reversal
    assert (model(tokens[:, perm]) - model(tokens)).abs().max() > 1e-4


def test_symmetric_alibi_encoder_cannot_tell_a_sequence_from_its_reversal():
    """The encoder's ALiBi bias -m|i-j| only sees distance, not direction: reversing the input reverses the hidden states."""
    model = encoder("alibi")
    tokens = random_tokens(4, 12)
    torch.testing.assert_close(
        model.hidden_states(tokens.flip(1)), model.hidden_states(tokens).flip(1), atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(model(tokens.flip(1)), model(tokens), atol=1e-5, rtol=1e-5)
    rope = encoder("rope")  # RoPE's score depends on the signed offset j - i
    assert (rope(tokens.flip(1)) - rope(tokens)).abs().max() > 1e-4


@pytest.mark.parametrize("scheme,seed", [("none", 0), ("none", 1), ("alibi", 0), ("alibi", 1)])
def test_blind_encoders_score_exactly_one_half_on_the_grouped_eval_set(scheme, seed):
    """Whatever the weights, every group of four shares its logits among rows with opposite labels."""
    model = encoder(scheme, seed=seed)
    with torch.no_grad():  # make the weights far from initial: the claim must not depend on them
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(seed)))
    tokens, labels = tasks.order_eval_set(64, 10, VOCAB, seed=5)
    assert training.accuracy(training.predict(model, tokens), labels) == 0.5


@pytest.mark.parametrize("scheme", SCHEMES)
def test_decoder_is_causal(scheme):
    model = decoder(scheme)
    tokens = random_tokens(2, 12)
    changed = tokens.clone()
    changed[:, 8:] = (changed[:, 8:] + 1) % VOCAB
    out, out_changed = model(tokens), model(changed)
    torch.testing.assert_close(out_changed[:, :8], out[:, :8])
    assert (out_changed[:, 8:] - out[:, 8:]).abs().max() > 1e-4


def test_none_decoder_is_not_permutation_equivariant():
    """The causal mask alone leaks order; the decoder without positions is not blind."""
    model = decoder("none")
    tokens = random_tokens(2, 10)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(1))
    assert (model(tokens[:, perm]) - model(tokens)[:, perm]).abs().max() > 1e-4


# --- past the training length ------------------------------------------------------------------------


def test_learned_table_raises_past_max_len_and_clamping_reuses_the_last_row():
    model = decoder("learned")
    long = random_tokens(2, 24)
    with pytest.raises(ValueError, match=r"position 23 requested.*only has positions 0\.\.15"):
        model(long)
    with pytest.raises(ValueError, match=r"position 17 requested"):
        model(long[:, :10], offset=8)
    clamped = model(long, clamp_positions=True)
    torch.testing.assert_close(clamped[:, :16], model(long[:, :16]))  # causal: the prefix is unaffected
    same = torch.full((1, 24), 5)  # the same token everywhere: rows differ only by their position vector
    last = SMALL["max_len"] - 1
    table = model.position.weight.detach()  # (max_len, d)
    with torch.no_grad():
        token = model.token_embedding(same)  # (1, 24, d)
        # every position p gets row min(p, max_len - 1): rows 0..15 in order, then row 15 for positions 16..23
        x = model.embed(same, clamp_positions=True)
        torch.testing.assert_close(x, token + table[torch.arange(24).clamp(max=last)])
        assert not torch.allclose(x[0, 14], x[0, 15], atol=1e-4)  # the rows differ: the check above can fail
        # with an offset: positions 20..29 are all past the table
        shifted = model.embed(same[:, :10], offset=20, clamp_positions=True)
        torch.testing.assert_close(shifted, token[:, :10] + table[last])
    with pytest.raises(ValueError, match="clamp_positions only applies to scheme='learned'"):
        decoder("rope")(long, clamp_positions=True)


@pytest.mark.parametrize("scheme", ["sinusoidal", "rope", "alibi", "none"])
def test_function_schemes_run_past_max_len_and_keep_the_prefix(scheme):
    model = decoder(scheme)
    long = random_tokens(2, 40)
    out = model(long)
    assert out.shape == (2, 40, VOCAB) and torch.isfinite(out).all()
    torch.testing.assert_close(out[:, :16], model(long[:, :16]), atol=1e-5, rtol=1e-5)


def test_sinusoidal_positions_past_the_table_are_the_formula():
    model = decoder("sinusoidal")
    tokens = random_tokens(1, 30)
    with torch.no_grad():
        added = model.embed(tokens, offset=5) - model.token_embedding(tokens)  # positions 5 .. 34, table has 16
    expected = pe.sinusoidal_encoding(35, D)[5:]  # (30, d)
    torch.testing.assert_close(added[0], expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(added[0, :11], model.position.pe[5:16], atol=1e-6, rtol=0)  # inside the table: same rows


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("window", [1, 3, 6])
def test_a_one_layer_window_is_the_model_run_on_the_window_alone(scheme, window):
    """With one layer, query i under window w sees exactly tokens i-w+1 .. i at their own positions."""
    model, tokens = decoder(scheme, n_layers=1), random_tokens(2, 12, seed=4)
    windowed = model(tokens, window=window)
    for i in range(12):
        start = max(0, i - window + 1)
        alone = model(tokens[:, start : i + 1], offset=start)[:, -1]  # the same positions, nothing else in view
        torch.testing.assert_close(windowed[:, i], alone, atol=2e-5, rtol=2e-5)
    assert (windowed - model(tokens)).abs().max() > 1e-4  # the window did cut something


@pytest.mark.parametrize("scheme", SCHEMES)
def test_window_weights_are_zero_outside_and_match_the_reference_inside(scheme):
    model, tokens, window = decoder(scheme), random_tokens(2, 10, seed=5), 4
    bias = pe.alibi_bias(H, 10) if scheme == "alibi" else None
    for t in model.trace(tokens, window=window):
        allowed = pe.causal_mask(10, 10, window=window)
        assert torch.all(t["weights"][..., ~allowed] == 0)
        expected = pe.attention(t["q"], t["k"], t["v"], bias=bias, causal=True, window=window)[1]
        torch.testing.assert_close(t["weights"], expected)
    torch.testing.assert_close(model(tokens, window=10), model(tokens))  # a window as long as the input: no change


# --- replacing the shared RoPE module -------------------------------------------------------------------


def test_replacing_rope_changes_the_rotation_of_every_block():
    model, tokens = decoder("rope", n_layers=3), random_tokens(2, 10, seed=6)
    d_h = D // H
    before = model(tokens)
    model.rope = pe.RotaryEmbedding(d_h, frequencies=pe.rope_frequencies(d_h))  # the same frequencies: same output
    torch.testing.assert_close(model(tokens), before)
    model.rope = pe.RotaryEmbedding(d_h, frequencies=pe.rope_frequencies(d_h) / 4)  # position interpolation by 4
    calls = []
    model.rope.register_forward_hook(lambda *args: calls.append(1))
    after = model(tokens)
    assert len(calls) == 2 * 3 and (after - before).abs().max() > 1e-3
    trace = model.trace(tokens)[2]  # the last block rotates with the new frequencies
    torch.testing.assert_close(trace["q"], pe.apply_rope(trace["q_proj"], frequencies=pe.rope_frequencies(d_h) / 4))
    plain = model.trace(tokens)[0]
    model.rope = pe.RotaryEmbedding(d_h, frequencies=pe.rope_frequencies(d_h) / 4, attention_factor=1.5)  # YaRN-style
    scaled = model.trace(tokens)[0]
    finite = torch.isfinite(plain["scores"])
    torch.testing.assert_close(scaled["scores"][finite], 1.5**2 * plain["scores"][finite], atol=1e-5, rtol=1e-5)


# --- devices and precisions -------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("causal", [False, True])
def test_every_scheme_runs_on_the_meta_device(scheme, causal):
    model = (decoder if causal else encoder)(scheme).to("meta")
    length = 40 if scheme != "learned" else 16  # past max_len: the sinusoidal rows are computed, the RoPE cache grows
    tokens = torch.zeros(2, length, dtype=torch.long, device="meta")
    out = model(tokens, offset=0 if scheme == "learned" else 3)
    assert out.device.type == "meta"
    assert out.shape == ((2, length, VOCAB) if causal else (2, 2))
    trace = model.trace(tokens, window=4 if causal else None)
    for t in trace:
        assert set(t) == set(TRACE_STAGES)
        assert all(tensor.device.type == "meta" for tensor in t.values())
        assert t["scores"].shape == (2, H, length, length)
    if scheme == "learned":
        assert model(tokens[:, :8], offset=8, clamp_positions=True).device.type == "meta"


def test_a_model_built_on_the_meta_device_runs_there():
    with torch.device("meta"):
        model = TinyTransformer(TransformerConfig(vocab_size=VOCAB, scheme="alibi", causal=True, **SMALL))
    assert model.head.weight.device.type == "meta"
    assert model(torch.zeros(1, 20, dtype=torch.long, device="meta")).device.type == "meta"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_scheme_runs_in_half_precision_close_to_float32(scheme, dtype):
    model, tokens = decoder(scheme), random_tokens(2, 12 if scheme == "learned" else 30, seed=7)
    with torch.no_grad():
        reference = model(tokens, offset=0 if scheme == "learned" else 2)
        half = model.to(dtype)
        out = half(tokens, offset=0 if scheme == "learned" else 2)
    assert out.dtype == dtype and torch.isfinite(out).all()
    error = (out.float() - reference).abs().max() / reference.abs().max()
    assert error < 0.05, f"{scheme} in {dtype}: relative error {error:.3f}"


def test_the_positional_tables_keep_float32_in_a_half_precision_model():
    model = decoder("rope").to(torch.bfloat16)
    assert model.head.weight.dtype == torch.bfloat16
    assert all(buffer.dtype in (torch.float32, torch.float64) for buffer in model.rope.buffers())
    sinusoidal = decoder("sinusoidal").to(torch.float16)
    assert sinusoidal.position.pe.dtype == torch.float32


# --- seeding ------------------------------------------------------------------------------------------------


def test_build_model_is_seeded_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    a, b, c = encoder("rope", seed=7), encoder("rope", seed=7), encoder("rope", seed=8)
    assert torch.rand(1) == expected_next
    for (name, pa), pb in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(pa, pb), name
    assert not torch.equal(a.head.weight, c.head.weight)


def test_models_differing_only_in_the_mask_or_a_function_scheme_start_from_the_same_weights():
    """build_model draws the same numbers for the same sizes: chapters rely on it to compare masks and schemes."""
    a = build_model(TransformerConfig(vocab_size=VOCAB, scheme="none", causal=False, n_outputs=VOCAB, **SMALL), seed=3)
    for other in (
        decoder("none", seed=3),
        decoder("rope", seed=3),
        decoder("alibi", seed=3),
        decoder("sinusoidal", seed=3),
    ):
        for (name, pa), pb in zip(a.named_parameters(), other.parameters()):
            assert torch.equal(pa, pb), name

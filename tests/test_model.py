"""posenc_lib.model: shapes, that every positional scheme is really used, and the symmetries the chapter relies on."""

import pytest
import torch

import posenc_lib.model as model_module
from posenc_lib import tasks, training
from posenc_lib.model import SCHEMES, TinyTransformer, TransformerConfig, build_model

VOCAB = 12
SMALL = {"d_model": 32, "n_heads": 4, "n_layers": 2, "d_ff": 64, "max_len": 16}


pytestmark = pytest.mark.usefixtures("one_thread")


def encoder(scheme: str, seed: int = 0, **overrides) -> TinyTransformer:
    return build_model(TransformerConfig(vocab_size=VOCAB, scheme=scheme, causal=False, n_outputs=2, **{**SMALL, **overrides}), seed=seed)


def decoder(scheme: str, seed: int = 0, **overrides) -> TinyTransformer:
    return build_model(TransformerConfig(vocab_size=VOCAB, scheme=scheme, causal=True, **{**SMALL, **overrides}), seed=seed)


def random_tokens(b: int, s: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (b, s), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_output_shapes(scheme):
    tokens = random_tokens(3, 10)
    assert encoder(scheme)(tokens).shape == (3, 2)
    assert decoder(scheme)(tokens).shape == (3, 10, VOCAB)
    assert decoder(scheme).hidden_states(tokens).shape == (3, 10, SMALL["d_model"])


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_experiment_models_are_small(scheme):
    config = TransformerConfig(vocab_size=16, scheme=scheme, causal=True, d_model=64, n_heads=4, n_layers=2, d_ff=128, max_len=32)
    n = TinyTransformer(config).num_parameters()
    assert 50_000 < n < 300_000


def test_only_the_chosen_scheme_has_position_modules():
    for scheme in SCHEMES:
        model = encoder(scheme)
        present = {name for name in ("sinusoidal", "learned", "rope") if getattr(model, name) is not None}
        assert present == ({scheme} & {"sinusoidal", "learned", "rope"})


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned", "rope"])
def test_position_module_is_called(scheme):
    model = decoder(scheme)
    calls = []
    getattr(model, scheme).register_forward_hook(lambda module, args, out: calls.append(args[0].shape))
    model(random_tokens(2, 7))
    if scheme == "rope":  # queries and keys of every layer, (b, h, s, head_dim)
        assert calls == [(2, 4, 7, 8)] * (2 * SMALL["n_layers"])
    else:  # once, on the token embeddings (b, s, d)
        assert calls == [(2, 7, SMALL["d_model"])]


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_bias_is_computed_and_reaches_attention(monkeypatch, causal):
    seen_bias, seen_alibi = [], []
    real_alibi, real_attention = model_module.alibi_bias, model_module.attention

    def spy_alibi(*args, **kwargs):
        seen_alibi.append(kwargs)
        return real_alibi(*args, **kwargs)

    def spy_attention(q, k, v, *, bias=None, causal=False):
        seen_bias.append(bias)
        return real_attention(q, k, v, bias=bias, causal=causal)

    monkeypatch.setattr(model_module, "alibi_bias", spy_alibi)
    monkeypatch.setattr(model_module, "attention", spy_attention)
    (decoder if causal else encoder)("alibi")(random_tokens(2, 6))
    assert seen_alibi == [{"causal": causal}]
    assert len(seen_bias) == SMALL["n_layers"]
    torch.testing.assert_close(seen_bias[0], real_alibi(4, 6, causal=causal))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_scheme_changes_the_output(scheme):
    """Same weights except the positional part: the output differs from `none` unless the scheme is `none`."""
    tokens = random_tokens(2, 9)
    base = decoder("none", seed=3)
    other = decoder(scheme, seed=3)
    other.load_state_dict(base.state_dict(), strict=False)  # shared weights; positional tables keep their own
    differs = not torch.allclose(base(tokens), other(tokens), atol=1e-6)
    assert differs == (scheme != "none")


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
    torch.testing.assert_close(model.hidden_states(tokens.flip(1)), model.hidden_states(tokens).flip(1), atol=1e-5, rtol=1e-5)
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
    """The causal mask alone leaks order (chapter 1); the decoder without positions is not blind."""
    model = decoder("none")
    tokens = random_tokens(2, 10)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(1))
    assert (model(tokens[:, perm]) - model(tokens)[:, perm]).abs().max() > 1e-4


def test_learned_table_raises_past_max_len_and_clamping_reuses_the_last_row():
    model = decoder("learned")
    long = random_tokens(2, 24)
    with pytest.raises(ValueError, match=r"position 23 requested.*only has positions 0\.\.15"):
        model(long)
    clamped = model(long, clamp_positions=True)
    torch.testing.assert_close(clamped[:, :16], model(long[:, :16]))  # causal: the prefix is unaffected
    # every position >= 15 gets row 15: a token repeated past the table looks the same at positions 15 and 20
    same = torch.full((1, 24), 5)
    hidden = model.hidden_states(same, clamp_positions=True)
    assert not torch.allclose(hidden[0, 10], hidden[0, 12], atol=1e-4)
    with pytest.raises(ValueError, match="clamp_positions only applies to scheme='learned'"):
        decoder("rope")(long, clamp_positions=True)


@pytest.mark.parametrize("scheme", ["sinusoidal", "rope", "alibi", "none"])
def test_function_schemes_run_past_max_len_and_keep_the_prefix(scheme):
    model = decoder(scheme)
    long = random_tokens(2, 40)
    out = model(long)
    assert out.shape == (2, 40, VOCAB) and torch.isfinite(out).all()
    torch.testing.assert_close(out[:, :16], model(long[:, :16]), atol=1e-5, rtol=1e-5)


def test_sinusoidal_table_grows_with_the_same_values():
    model = decoder("sinusoidal")
    model(random_tokens(1, 40))
    assert model.sinusoidal.max_len >= 40
    from posenc_lib import sinusoidal_encoding

    torch.testing.assert_close(model.sinusoidal.pe, torch.from_numpy(sinusoidal_encoding(model.sinusoidal.max_len, SMALL["d_model"])).float())


def test_build_model_is_seeded_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    a, b, c = encoder("rope", seed=7), encoder("rope", seed=7), encoder("rope", seed=8)
    assert torch.rand(1) == expected_next
    for (name, pa), pb in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(pa, pb), name
    assert not torch.equal(a.head.weight, c.head.weight)


BAD = [
    (lambda: TransformerConfig(vocab_size=8, scheme="nope"), ValueError, "scheme must be one of 'none', 'sinusoidal'"),
    (lambda: TransformerConfig(vocab_size=0), ValueError, "vocab_size must be a positive integer"),
    (lambda: TransformerConfig(vocab_size=8, d_model=30, n_heads=4), ValueError, "d_model must be divisible by n_heads"),
    (lambda: TransformerConfig(vocab_size=8, d_model=12, n_heads=4), ValueError, "head_dim .* must be even"),
    (lambda: TransformerConfig(vocab_size=8, causal="yes"), TypeError, "causal must be a bool"),
    (lambda: TransformerConfig(vocab_size=8, n_outputs=0), ValueError, "n_outputs"),
    (lambda: TinyTransformer({"vocab_size": 8}), TypeError, "config must be a TransformerConfig"),
    (lambda: encoder("none")(torch.zeros(2, 5)), TypeError, "tokens must be an integer tensor"),
    (lambda: encoder("none")(torch.tensor([[1, 2, VOCAB]])), ValueError, r"tokens must be ids in 0\.\.11"),
    (lambda: encoder("none")(torch.tensor([1, 2, 3])), ValueError, "tokens must have at least 2 dimensions"),
    (lambda: encoder("none")(torch.zeros(1, 2, 3, dtype=torch.long)), ValueError, r"tokens must have shape \(b, s\)"),
    (lambda: encoder("none")([[1, 2]]), TypeError, "tokens must be a torch.Tensor"),
    (lambda: build_model(TransformerConfig(vocab_size=8), seed="0"), TypeError, "seed must be an int"),
]


@pytest.mark.parametrize("call,exc,pattern", BAD, ids=[f"case{i}" for i in range(len(BAD))])
def test_bad_input_is_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()

"""Bad input must fail early with an error that names the argument and says what was expected."""

import numpy as np
import pytest
import torch

import posenc_lib as pe

CASES = [
    # (callable, exception type, pattern the message must contain)
    (lambda: pe.sinusoidal_encoding(0, 8), ValueError, "seq_len must be a positive integer"),
    (lambda: pe.sinusoidal_encoding(-3, 8), ValueError, "seq_len"),
    (lambda: pe.sinusoidal_encoding(4, 0), ValueError, "d_model must be a positive integer"),
    (lambda: pe.sinusoidal_encoding(4.5, 8), TypeError, "seq_len must be a positive integer"),
    (lambda: pe.sinusoidal_encoding(True, 8), TypeError, "seq_len"),
    (lambda: pe.sinusoidal_encoding(4, 8, layout="sincos"), ValueError, "layout must be one of"),
    (lambda: pe.sinusoidal_encoding(4, 8, base=0), ValueError, "base must be a finite positive number"),
    (lambda: pe.sinusoidal_encoding(4, 8, dtype=np.int32), TypeError, "dtype"),
    (lambda: pe.shift_matrix(1, 5), ValueError, "d_model must be even"),
    (lambda: pe.SinusoidalPositionalEncoding(8, max_len=0), ValueError, "max_len"),
    (lambda: pe.LearnedPositionalEmbedding(8, 0), ValueError, "max_len"),
    (lambda: pe.LearnedPositionalEmbedding(4, 8)(torch.zeros(1, 3, 5)), ValueError, "d_model=4"),
    (lambda: pe.rope_frequencies(7), ValueError, "head_dim must be even"),
    (lambda: pe.rope_frequencies(0), ValueError, "head_dim must be a positive integer"),
    (lambda: pe.apply_rope(torch.zeros(2, 5, 7)), ValueError, r"head_dim \(x.shape\[-1\]\) must be even"),
    (lambda: pe.apply_rope(torch.zeros(8)), ValueError, "x must have at least 2 dimensions"),
    (lambda: pe.apply_rope(np.zeros((4, 8))), TypeError, "x must be a torch.Tensor"),
    (lambda: pe.apply_rope(torch.zeros(4, 8, dtype=torch.int64)), TypeError, "floating-point"),
    (lambda: pe.apply_rope(torch.zeros(4, 8), layout="neox"), ValueError, "layout must be one of 'half', 'interleaved'"),
    (lambda: pe.apply_rope(torch.zeros(4, 8), torch.arange(3)), ValueError, r"positions must have shape \(s,\) = \(4,\)"),
    (lambda: pe.apply_rope(torch.zeros(4, 8), -1), ValueError, "positions .* must be >= 0"),
    (lambda: pe.apply_rope(torch.zeros(4, 8), [0, 1, 2, 3]), TypeError, "positions must be"),
    (lambda: pe.apply_rope(torch.zeros(4, 8), frequencies=torch.ones(3)), ValueError, "frequencies must have shape"),
    (lambda: pe.RotaryEmbedding(8)(torch.zeros(2, 6)), ValueError, "head_dim=8"),
    (lambda: pe.RotaryEmbedding(8, layout="x"), ValueError, "layout"),
    (lambda: pe.alibi_slopes(0), ValueError, "n_heads must be a positive integer"),
    (lambda: pe.alibi_slopes(2.5), TypeError, "n_heads must be a positive integer"),
    (lambda: pe.alibi_slopes(-4), ValueError, "n_heads"),
    (lambda: pe.alibi_bias(4, 0), ValueError, "q_len"),
    (lambda: pe.alibi_bias(4, 5, 3), ValueError, "k_len >= q_len"),
    (lambda: pe.alibi_bias(4, 5, dtype=torch.int32), TypeError, "dtype"),
    (lambda: pe.attention(torch.zeros(3, 4), torch.zeros(3, 5), torch.zeros(3, 5)), ValueError, "same last dimension"),
    (lambda: pe.attention(torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(2, 4)), ValueError, "same length s_k"),
    (lambda: pe.attention(torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(3, 4), bias=torch.zeros(2, 2)), ValueError, "bias of shape .* must broadcast to the scores"),
    (lambda: pe.attention(torch.zeros(5, 4), torch.zeros(3, 4), torch.zeros(3, 4), causal=True), ValueError, "s_k >= s_q"),
    (lambda: pe.embed_words("the cat", 4), TypeError, "words must be a non-empty list"),
]


@pytest.mark.parametrize("call,exc,pattern", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_bad_input_raises_clear_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_lib as pe


def loop_reference(seq_len: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """Straight from the formula, one entry at a time (pair k shares frequency base^(-2k/d))."""
    table = np.zeros((seq_len, d_model))
    for p in range(seq_len):
        for col in range(d_model):
            k = col // 2
            angle = p / base ** (2 * k / d_model)
            table[p, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table


@pytest.mark.parametrize("seq_len,d_model", [(1, 1), (7, 2), (13, 6), (9, 7), (50, 64), (3, 5)])
def test_interleaved_matches_formula(seq_len, d_model):
    np.testing.assert_allclose(pe.sinusoidal_encoding(seq_len, d_model), loop_reference(seq_len, d_model), atol=1e-12)


def test_position_zero_is_sin0_cos0():
    row = pe.sinusoidal_encoding(1, 6)[0]
    np.testing.assert_array_equal(row, [0, 1, 0, 1, 0, 1])


def test_odd_width_ends_with_a_sine_column():
    table = pe.sinusoidal_encoding(20, 5)
    omega_last = 10000.0 ** (-4 / 5)
    np.testing.assert_allclose(table[:, 4], np.sin(np.arange(20) * omega_last), atol=1e-12)


@pytest.mark.parametrize("d_model", [4, 7, 10])
def test_concatenated_is_a_column_permutation_of_interleaved(d_model):
    inter = pe.sinusoidal_encoding(30, d_model)
    concat = pe.sinusoidal_encoding(30, d_model, layout="concatenated")
    order = list(range(0, d_model, 2)) + list(range(1, d_model, 2))
    np.testing.assert_allclose(concat, inter[:, order], atol=1e-12)


def test_float32_close_to_float64():
    t64 = pe.sinusoidal_encoding(2048, 128)
    t32 = pe.sinusoidal_encoding(2048, 128, dtype=np.float32)
    assert t32.dtype == np.float32
    assert np.abs(t32 - t64).max() < 5e-4


def test_wavelengths_span_2pi_to_nearly_2pi_base():
    omega = pe.sinusoidal_frequencies(512)
    wavelengths = 2 * np.pi / omega
    assert wavelengths[0] == pytest.approx(2 * np.pi)
    assert 2 * np.pi * 10000 * 0.95 < wavelengths[-1] < 2 * np.pi * 10000
    assert np.all(np.diff(wavelengths) > 0)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(min_value=-50, max_value=50), half=st.integers(min_value=1, max_value=16))
def test_shift_is_a_fixed_rotation_for_every_position(k, half):
    d_model = 2 * half
    table = pe.sinusoidal_encoding(200, d_model)  # (s, d)
    shift = pe.shift_matrix(k, d_model)  # (d, d)
    lo, hi = max(0, -k), min(200, 200 - k)
    np.testing.assert_allclose(table[lo:hi] @ shift.T, table[lo + k : hi + k], atol=1e-9)
    np.testing.assert_allclose(shift @ shift.T, np.eye(d_model), atol=1e-12)  # orthogonal


def test_module_adds_table_and_rejects_long_input():
    module = pe.SinusoidalPositionalEncoding(d_model=6, max_len=10)
    x = torch.zeros(2, 4, 6)
    out = module(x)
    np.testing.assert_allclose(out[0].numpy(), pe.sinusoidal_encoding(4, 6), atol=1e-6)
    np.testing.assert_allclose(module(x, offset=3)[1].numpy(), pe.sinusoidal_encoding(7, 6)[3:], atol=1e-6)
    with pytest.raises(ValueError, match="max_len=10"):
        module(torch.zeros(1, 11, 6))
    with pytest.raises(ValueError, match="d_model=6"):
        module(torch.zeros(1, 3, 5))

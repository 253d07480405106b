import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_lib as pe


def loop_reference(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """Straight from the formula, one entry at a time (pair l shares frequency base^(-2l/d))."""
    table = [[0.0] * d_model for _ in range(seq_len)]
    for p in range(seq_len):
        for col in range(d_model):
            pair = col // 2
            angle = p / base ** (2 * pair / d_model)
            table[p][col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return torch.tensor(table, dtype=torch.float64)


@pytest.mark.parametrize("seq_len,d_model", [(1, 1), (7, 2), (13, 6), (9, 7), (50, 64), (3, 5)])
def test_interleaved_matches_formula(seq_len, d_model):
    table = pe.sinusoidal_encoding(seq_len, d_model, dtype=torch.float64)
    torch.testing.assert_close(table, loop_reference(seq_len, d_model), atol=1e-12, rtol=0)


def test_returns_a_float32_torch_tensor_by_default():
    table = pe.sinusoidal_encoding(10, 8)
    assert isinstance(table, torch.Tensor) and table.dtype == torch.float32 and table.shape == (10, 8)
    torch.testing.assert_close(table, loop_reference(10, 8).float())
    assert pe.sinusoidal_encoding(3, 4, dtype=torch.bfloat16).dtype == torch.bfloat16


def test_position_zero_is_sin0_cos0():
    row = pe.sinusoidal_encoding(1, 6)[0]
    assert row.tolist() == [0, 1, 0, 1, 0, 1]


def test_odd_width_ends_with_a_sine_column():
    table = pe.sinusoidal_encoding(20, 5, dtype=torch.float64)
    theta_last = 10000.0 ** (-4 / 5)
    torch.testing.assert_close(
        table[:, 4], torch.sin(torch.arange(20, dtype=torch.float64) * theta_last), atol=1e-12, rtol=0
    )


@pytest.mark.parametrize("d_model", [4, 7, 10])
def test_concatenated_is_a_column_permutation_of_interleaved(d_model):
    inter = pe.sinusoidal_encoding(30, d_model, dtype=torch.float64)
    concat = pe.sinusoidal_encoding(30, d_model, layout="concatenated", dtype=torch.float64)
    order = list(range(0, d_model, 2)) + list(range(1, d_model, 2))
    torch.testing.assert_close(concat, inter[:, order], atol=1e-12, rtol=0)


def test_offset_gives_the_later_rows():
    full = pe.sinusoidal_encoding(700, 12, dtype=torch.float64)
    torch.testing.assert_close(
        pe.sinusoidal_encoding(50, 12, offset=650, dtype=torch.float64), full[650:], atol=1e-13, rtol=0
    )


def test_float32_close_to_float64():
    t64 = pe.sinusoidal_encoding(2048, 128, dtype=torch.float64)
    t32 = pe.sinusoidal_encoding(2048, 128)
    assert (t32.double() - t64).abs().max() < 3e-7


def test_wavelengths_span_2pi_to_nearly_2pi_base():
    lengths = pe.wavelengths(pe.sinusoidal_frequencies(512))
    assert lengths[0].item() == pytest.approx(2 * math.pi)
    assert 2 * math.pi * 10000 * 0.95 < lengths[-1].item() < 2 * math.pi * 10000
    assert torch.all(lengths.diff() > 0)


@settings(max_examples=40, deadline=None)
@given(delta=st.integers(min_value=-50, max_value=50), half=st.integers(min_value=1, max_value=16))
def test_shift_is_a_fixed_rotation_for_every_position(delta, half):
    d_model = 2 * half
    table = pe.sinusoidal_encoding(200, d_model, dtype=torch.float64)  # (s, d)
    shift = pe.shift_matrix(delta, d_model)  # (d, d)
    assert shift.dtype == torch.float64 and shift.shape == (d_model, d_model)
    lo, hi = max(0, -delta), min(200, 200 - delta)
    torch.testing.assert_close(table[lo:hi] @ shift.T, table[lo + delta : hi + delta], atol=1e-9, rtol=0)
    torch.testing.assert_close(shift @ shift.T, torch.eye(d_model, dtype=torch.float64), atol=1e-12, rtol=0)


def test_shift_by_a_fraction_composes():
    torch.testing.assert_close(pe.shift_matrix(0.25, 8) @ pe.shift_matrix(0.75, 8), pe.shift_matrix(1, 8))


def test_module_adds_table_and_serves_positions_past_max_len():
    module = pe.SinusoidalPositionalEncoding(d_model=6, max_len=10)
    x = torch.zeros(2, 4, 6)
    torch.testing.assert_close(module(x)[0], pe.sinusoidal_encoding(4, 6))
    torch.testing.assert_close(module(x, offset=3)[1], pe.sinusoidal_encoding(7, 6)[3:])
    long = module(torch.zeros(1, 11, 6))  # one position past the table: computed, not refused
    torch.testing.assert_close(long[0], pe.sinusoidal_encoding(11, 6))
    far = module(torch.zeros(1, 2, 6), offset=10**6)
    torch.testing.assert_close(far[0], pe.sinusoidal_encoding(2, 6, offset=10**6))
    assert module.pe.shape == (10, 6)  # the table did not grow
    with pytest.raises(ValueError, match="d_model=6"):
        module(torch.zeros(1, 3, 5))


def test_module_float64_input_gets_float64_rows():
    module = pe.SinusoidalPositionalEncoding(8, 16)
    out = module(torch.zeros(5, 8, dtype=torch.float64), offset=3)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, loop_reference(8, 8)[3:], atol=1e-14, rtol=0)

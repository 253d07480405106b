"""The sinusoidal helpers added for chapter 3: the loop reference, the layout permutation, the dot product by distance."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_lib as pe


@pytest.mark.parametrize("seq_len,d_model", [(1, 1), (1, 6), (5, 7), (30, 16), (17, 3)])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_loop_matches_vectorised(seq_len, d_model, base):
    loop = pe.sinusoidal_encoding_loop(seq_len, d_model, base=base)
    assert loop.shape == (seq_len, d_model) and loop.dtype == torch.float64
    np.testing.assert_allclose(
        loop, pe.sinusoidal_encoding(seq_len, d_model, base=base, dtype=torch.float64), atol=1e-12
    )


def test_loop_first_rows_by_hand():
    table = pe.sinusoidal_encoding_loop(2, 4)
    assert table[0].tolist() == [0, 1, 0, 1]
    np.testing.assert_allclose(table[1], [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)], atol=1e-15)


@pytest.mark.parametrize(
    "call,exc,pattern",
    [
        (lambda: pe.sinusoidal_encoding_loop(0, 4), ValueError, "seq_len must be a positive integer"),
        (lambda: pe.sinusoidal_encoding_loop(3, 2.0), TypeError, "d_model must be a positive integer"),
        (lambda: pe.sinusoidal_encoding_loop(3, 4, base=-1), ValueError, "base must be a finite positive number"),
        (lambda: pe.interleaved_to_concatenated_permutation(0), ValueError, "d_model"),
        (lambda: pe.sinusoidal_dot_by_distance(1, 5), ValueError, "d_model must be even"),
        (lambda: pe.sinusoidal_dot_by_distance("far", 4), TypeError, "distance must be a real number"),
        (lambda: pe.sinusoidal_dot_by_distance(torch.tensor([1, np.inf]), 4), ValueError, "distance must be finite"),
        (lambda: pe.sinusoidal_dot_by_distance([1, 2], 4), TypeError, "distance must be a real number"),
    ],
)
def test_bad_input(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


@pytest.mark.parametrize("d_model", [1, 2, 5, 8, 13])
def test_permutation_maps_interleaved_to_concatenated_and_back(d_model):
    perm = pe.interleaved_to_concatenated_permutation(d_model)
    assert sorted(perm.tolist()) == list(range(d_model))
    assert perm.dtype == torch.int64
    inter = pe.sinusoidal_encoding(40, d_model)
    concat = pe.sinusoidal_encoding(40, d_model, layout="concatenated")
    assert torch.equal(inter[:, perm], concat)
    assert torch.equal(concat[:, torch.argsort(perm)], inter)


@settings(max_examples=30, deadline=None)
@given(half=st.integers(min_value=1, max_value=32), start=st.integers(min_value=0, max_value=3000))
def test_dot_product_depends_only_on_distance(half, start):
    d_model = 2 * half
    table = pe.sinusoidal_encoding(200, d_model, offset=start, dtype=torch.float64)  # positions start .. start + 199
    distances = torch.arange(0, 100)
    dots = table[distances] @ table[0]  # (100,): PE(start + k) . PE(start)
    torch.testing.assert_close(dots, pe.sinusoidal_dot_by_distance(distances, d_model), atol=1e-9, rtol=0)
    later = table[50 + distances] @ table[50]  # another start, same distances
    torch.testing.assert_close(later, dots, atol=1e-9, rtol=0)


def test_dot_product_shape_symmetry_and_peak():
    k = torch.arange(-40, 41).reshape(9, 9)
    dots = pe.sinusoidal_dot_by_distance(k, 32)
    assert dots.shape == (9, 9) and dots.dtype == torch.float64
    torch.testing.assert_close(dots, pe.sinusoidal_dot_by_distance(-k, 32))
    assert pe.sinusoidal_dot_by_distance(0, 32).item() == pytest.approx(16.0)
    assert pe.sinusoidal_dot_by_distance(np.float32(0.0), 32).item() == pytest.approx(16.0)
    assert torch.all(dots[k != 0] < 16.0)


def test_odd_width_dot_product_would_depend_on_position():
    """Why odd d is rejected: the lone sine column makes PE(p).PE(p+k) vary with p."""
    table = pe.sinusoidal_encoding(3000, 3, dtype=torch.float64)  # the lone sine column turns with theta = 10000^(-2/3)
    dots = torch.einsum("pd,pd->p", table[:-3], table[3:])  # PE(p) . PE(p + 3) for every p
    assert dots.std() > 0.1

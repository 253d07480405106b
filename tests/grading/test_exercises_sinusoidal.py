"""Chapter 3's checkers (the next row of the table from the row alone; the shift matrix M_Δ) fail on the stub and on typical wrong answers
(with the matching hint), and pass on right answers written in several valid forms."""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_next_row, check_shift_matrix
from posenc_lib.exercises.sinusoidal import NEXT_ROW_HINT, SHIFT_HINT


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- check_next_row --------------------------------------------------------------------------


def next_by_pairs(row):
    """A right answer: each pair (sin a, cos a) turned by θ_l with the angle-addition formulas."""
    row = np.asarray(row, dtype=np.float64)
    frequencies = 10000.0 ** (-2.0 * np.arange(len(row) // 2) / len(row))  # (d/2,)
    sines, cosines = row[0::2], row[1::2]
    out = np.empty_like(row)
    out[0::2] = sines * np.cos(frequencies) + cosines * np.sin(frequencies)
    out[1::2] = cosines * np.cos(frequencies) - sines * np.sin(frequencies)
    return out


def next_by_complex_numbers(row):
    """A right answer written differently: pairs as complex numbers cos + i sin, times e^{i θ}, in torch."""
    row = torch.as_tensor(row, dtype=torch.float64)
    d = row.shape[0]
    frequencies = 10000.0 ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    z = torch.complex(row[1::2], row[0::2]) * torch.polar(torch.ones_like(frequencies), frequencies)
    return torch.stack([z.imag, z.real], dim=1).reshape(d).float()


def next_by_decoding(row):
    """A right answer that recovers p from the slowest pair (p < 2π / θ_last here), then uses the formula."""
    row = np.asarray(row, dtype=np.float64)
    d = len(row)
    frequencies = 10000.0 ** (-2.0 * np.arange(d // 2) / d)
    angle = math.atan2(row[-2], row[-1]) % (2 * math.pi)
    p = round(angle / frequencies[-1]) if d > 2 else round(math.atan2(row[0], row[1]) % (2 * math.pi))
    out = np.empty(d)
    out[0::2], out[1::2] = np.sin((p + 1) * frequencies), np.cos((p + 1) * frequencies)
    return out


def turn(row, frequencies, *, concatenated=False):
    row = np.asarray(row, dtype=np.float64)
    half = len(row) // 2
    s, c = (row[:half], row[half:]) if concatenated else (row[0::2], row[1::2])
    new_s, new_c = s * np.cos(frequencies) + c * np.sin(frequencies), c * np.cos(frequencies) - s * np.sin(frequencies)
    return np.concatenate([new_s, new_c]) if concatenated else np.stack([new_s, new_c], axis=1).reshape(-1)


def own_theta(d, power=2.0):
    return 10000.0 ** (-power * np.arange(d // 2) / d)


NEXT_ROW_WRONG = {
    "turns backwards": (lambda row: turn(row, -own_theta(len(row))), "PE(p - 1)"),
    "doubled exponent": (lambda row: turn(row, own_theta(len(row), 4.0)), "doubled the exponent"),
    "one radian for every pair": (lambda row: turn(row, np.ones(len(row) // 2)), "by 1 radian"),
    "concatenated pairs": (lambda row: turn(row, own_theta(len(row)), concatenated=True), "concatenated layout"),
    "unchanged": (lambda row: np.array(row), "returns the row it was given"),
    "forgot to return": (lambda row: None, "returned None"),
}


def test_next_row_checker_fails_the_stub(capsys):
    assert not check_next_row(stub)
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize("name", NEXT_ROW_WRONG)
def test_next_row_checker_fails_wrong_answers_with_the_right_hint(name, capsys):
    wrong, hint = NEXT_ROW_WRONG[name]
    result = check_next_row(wrong)
    assert not result
    assert hint in capsys.readouterr().out
    assert result.hint != NEXT_ROW_HINT  # a specific hint, not the general one


@pytest.mark.parametrize("answer", [next_by_pairs, next_by_complex_numbers, next_by_decoding])
def test_next_row_checker_passes_right_answers(answer):
    assert check_next_row(answer)


def test_next_row_checker_fails_an_answer_that_calls_the_library(capsys):
    result = check_next_row(lambda row: pe.shift_matrix(1, len(row)).numpy() @ row)
    assert not result and result.reason == "calls the library"
    assert "posenc_lib.shift_matrix" in capsys.readouterr().out


def test_the_next_row_reference_is_the_library_table():
    """What the checker expects is the next row of posenc_lib's interleaved table."""
    table = pe.sinusoidal_encoding(1002, 16, dtype=torch.float64).numpy()
    np.testing.assert_allclose(next_by_pairs(table[1000]), table[1001], atol=1e-12)


# --- check_shift_matrix ---------------------------------------------------------------------


def theta(d_model):
    return 10000.0 ** (-2.0 * np.arange(d_model // 2) / d_model)  # (d/2,)


def interleaved(delta, d_model, *, frequencies=None, sign=1.0):
    """The interleaved M_Δ, block by block, written with NumPy (no posenc_lib)."""
    frequencies = theta(d_model) if frequencies is None else frequencies
    m = np.zeros((d_model, d_model))
    for pair, w in enumerate(frequencies):
        c, s = math.cos(delta * w), math.sin(delta * w)
        m[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = [[c, sign * s], [-sign * s, c]]
    return m


ORDER = {d: np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)]) for d in range(2, 129, 2)}


def by_blocks(delta, d_model):
    """A right answer: [[C, S], [-S, C]] with diagonal C = diag(cos Δθ), S = diag(sin Δθ)."""
    c, s = np.diag(np.cos(delta * theta(d_model))), np.diag(np.sin(delta * theta(d_model)))
    return np.block([[c, s], [-s, c]])


def by_reordering(delta, d_model):
    """A right answer: P M_Δ P^T with the library's permutation (allowed), in float32 torch."""
    order = pe.interleaved_to_concatenated_permutation(d_model)
    return torch.from_numpy(interleaved(delta, d_model)).float()[order][:, order]


def by_least_squares(delta, d_model):
    """A right answer: solve PE(p + Δ) = M PE(p) for M from the concatenated table itself."""
    full = pe.sinusoidal_encoding(60_100, d_model, layout="concatenated", dtype=torch.float64).numpy()
    start = np.arange(50, 60_000, 37)
    solution, *_ = np.linalg.lstsq(full[start], full[start + delta], rcond=None)  # table[p] @ M^T = table[p + Δ]
    return solution.T


def test_the_checker_fails_the_stub():
    assert not check_shift_matrix(stub)


WRONG = {
    "interleaved (first edition's answer)": (interleaved, "interleaved layout"),
    "rows only": (lambda delta, d: interleaved(delta, d)[ORDER[d]], "only the rows"),
    "columns only": (lambda delta, d: interleaved(delta, d)[:, ORDER[d]], "only the columns"),
    "inverse order": (
        lambda delta, d: interleaved(delta, d)[np.argsort(ORDER[d])][:, np.argsort(ORDER[d])],
        "inverse order",
    ),
    "wrong direction": (lambda delta, d: by_blocks(-delta, d), "wrong way"),
    "one angle for every pair": (
        lambda delta, d: interleaved(delta, d, frequencies=np.ones(d // 2))[ORDER[d]][:, ORDER[d]],
        "its own angle",
    ),
    "identity": (lambda delta, d: np.eye(d), "does not depend on"),
    "wrong size": (lambda delta, d: np.eye(d + 1), "the shape is"),
}


@pytest.mark.parametrize("name", WRONG)
def test_the_checker_fails_typical_wrong_answers_with_their_hint(name, capsys):
    wrong, hint = WRONG[name]
    result = check_shift_matrix(wrong)
    assert not result
    assert hint in capsys.readouterr().out
    if name != "wrong size":
        assert result.hint != SHIFT_HINT


@pytest.mark.parametrize(
    "answer", [by_blocks, by_reordering, by_least_squares], ids=["blocks", "reordered", "least-squares"]
)
def test_the_checker_passes_right_answers(answer):
    assert check_shift_matrix(answer)


def test_the_checker_fails_an_answer_that_calls_the_library(capsys):
    def reordered_library(delta, d_model):
        order = pe.interleaved_to_concatenated_permutation(d_model)
        return pe.shift_matrix(delta, d_model)[order][:, order]

    result = check_shift_matrix(reordered_library)
    assert not result and result.reason == "calls the library"
    assert "posenc_lib.shift_matrix" in capsys.readouterr().out


def test_the_reference_shifts_the_concatenated_table():
    """What the checker expects really is PE(p + Δ) = M_Δ PE(p) for the library's concatenated table."""
    d_model, delta = 16, 5
    table = pe.sinusoidal_encoding(40, d_model, layout="concatenated", dtype=torch.float64).numpy()  # (40, d)
    m = by_blocks(delta, d_model)
    np.testing.assert_allclose(table[:-delta] @ m.T, table[delta:], atol=1e-12)

"""The checkers of the second edition's exercises 2.2 and 3.2.

check_shift_matrix (3.2): M_Δ of the concatenated sinusoidal layout. It fails the stub, the first
edition's interleaved answer and every typical wrong answer (each with its specific hint), and an answer
that calls posenc_lib's shift_matrix; it passes right answers written in three ways (blocks C and S, the
interleaved matrix reordered, least squares on the table).

check_position_share (2.2): (c, share) for a drawn position vector. It fails the stub and each typical
slip with its hint, and passes answers written with torch, NumPy and plain Python.
"""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_position_share, check_shift_matrix
from posenc_lib.exercises.analogy import SHARE_HINT
from posenc_lib.exercises.sinusoidal import SHIFT_HINT


def stub(*args):
    raise NotImplementedError()


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


# --- check_position_share (exercise 2.2) -------------------------------------------------------------


def share_torch(vector, d_model):
    v = torch.tensor(vector, dtype=torch.float64)
    c = v.norm() / math.sqrt(len(vector) / 2)  # rows of the width-n table have norm sqrt(n/2)
    return c, c * math.sqrt(d_model / 2) / math.sqrt(d_model)


def share_numpy(vector, d_model):
    c = np.linalg.norm(vector) / np.sqrt(len(vector) / 2)
    return np.array([c, c / np.sqrt(2)], dtype=np.float32)  # the share does not depend on d


def share_python(vector, d_model):
    c = math.sqrt(sum(x * x for x in vector) / (len(vector) / 2))
    return [c, c / math.sqrt(2)]


def test_the_share_checker_fails_the_stub():
    assert not check_position_share(stub)


SHARE_WRONG = {
    "row norm sqrt(n)": (
        lambda v, d: (np.linalg.norm(v) / math.sqrt(len(v)), np.linalg.norm(v) / math.sqrt(len(v)) / math.sqrt(2)),
        "not sqrt(n)",
    ),
    "word norm sqrt(d/2), or share = c": (lambda v, d: (share_python(v, d)[0],) * 2, "not sqrt(d/2)"),
    "table width d_model": (
        lambda v, d: (np.linalg.norm(v) / math.sqrt(d / 2), np.linalg.norm(v) / math.sqrt(d / 2) / math.sqrt(2)),
        "len(vector)",
    ),
    "inverted share": (lambda v, d: (share_python(v, d)[0], 1 / share_python(v, d)[1]), "other way round"),
    "numbers of the picture, hard-coded": (lambda v, d: (0.0442, 0.0312), "a drawn vector of 6 entries"),
}


@pytest.mark.parametrize("name", SHARE_WRONG)
def test_the_share_checker_fails_typical_slips_with_their_hint(name, capsys):
    wrong, hint = SHARE_WRONG[name]
    result = check_position_share(wrong)
    assert not result and result.hint != SHARE_HINT
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer", [share_torch, share_numpy, share_python], ids=["torch", "numpy", "python"])
def test_the_share_checker_passes_right_answers(answer):
    assert check_position_share(answer)


def test_the_drawn_vector_gives_the_numbers_the_chapter_states():
    c, share = share_python([0.02, 0.01, 0.05, 0.03], 512)
    assert abs(c - 0.044) < 0.0005 and abs(share - 0.031) < 0.0005

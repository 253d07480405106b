"""The checkers of chapters 2-4: each fails on the stub, on an answer that calls the library it asks the
student to write, and on typical wrong answers (each with its specific hint), and passes right answers
written in several valid forms. (check_shift_matrix and check_position_share: tests/grading/test_exercises_shift_and_share.py.)"""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_add_positions, check_position_lookup, check_sinusoidal
from posenc_lib.exercises.analogy import ADD_HINT
from posenc_lib.exercises.learned import LOOKUP_HINT
from posenc_lib.exercises.sinusoidal import SINUSOIDAL_HINT


def stub(*args):
    raise NotImplementedError()


# --- check_sinusoidal ---------------------------------------------------------------------------


def table(
    seq_len,
    d_model,
    *,
    exponent=lambda k, d: 2 * k / d,
    cos_exponent=None,
    swap=False,
    first=0,
    concatenated=False,
    dtype=np.float64,
):
    """A sinusoidal table written with NumPy (no posenc_lib), with one mistake switched on if asked."""
    cos_exponent = cos_exponent or exponent
    p = np.arange(first, first + seq_len, dtype=np.float64)[:, None]  # (s, 1)
    sines = p / 10000.0 ** exponent(np.arange((d_model + 1) // 2), d_model)  # (s, ceil(d/2)) angles
    cosines = p / 10000.0 ** cos_exponent(np.arange(d_model // 2), d_model)  # (s, floor(d/2))
    even, odd = (np.cos(sines), np.sin(cosines)) if swap else (np.sin(sines), np.cos(cosines))
    if concatenated:
        return np.concatenate([even, odd], axis=1).astype(dtype)
    out = np.zeros((seq_len, d_model), dtype=dtype)
    out[:, 0::2], out[:, 1::2] = even, odd
    return out


def sinusoidal_student_loop(seq_len, d_model):
    """A right answer as a double loop, returning a torch tensor."""
    out = torch.zeros(seq_len, d_model, dtype=torch.float64)
    for p in range(seq_len):
        for c in range(d_model):
            angle = p / 10000 ** (2 * (c // 2) / d_model)
            out[p, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return out


SINUSOIDAL_WRONG = {
    "off-by-one exponent 2(k+1)/d": (
        lambda s, d: table(s, d, exponent=lambda k, d: 2 * (k + 1) / d),
        "off by one pair",
    ),
    "odd column uses its own index": (
        lambda s, d: table(s, d, cos_exponent=lambda k, d: (2 * k + 1) / d),
        "SAME frequency",
    ),
    "exponent 2i/d with i the column index": (
        lambda s, d: table(s, d, exponent=lambda k, d: 4 * k / d),
        "doubled the index",
    ),
    "sin and cos swapped": (lambda s, d: table(s, d, swap=True), "swapped"),
    "concatenated layout": (lambda s, d: table(s, d, concatenated=True), "concatenated layout"),
    "positions start at 1": (lambda s, d: table(s, d, first=1), "positions start at 0"),
    "exponent sign flipped": (lambda s, d: table(s, d, exponent=lambda k, d: -2 * k / d), "sign is flipped"),
    "an extra column for odd d": (lambda s, d: table(s, d + d % 2), "d_model + 1 columns"),
    "a list of lists of zeros": (lambda s, d: np.zeros((s, d)).tolist(), "every entry of your result is 0"),
    "forgot to return": (lambda s, d: None, "returned None"),
    "crashes on odd d": (
        lambda s, d: table(s, d) if d % 2 == 0 else np.zeros((s, d))[:, ::3] @ np.ones((2, 2)),
        "odd d_model: the last column",
    ),
}


def test_sinusoidal_checker_fails_the_stub(capsys):
    assert not check_sinusoidal(stub)
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize("name", SINUSOIDAL_WRONG)
def test_sinusoidal_checker_fails_wrong_answers_with_the_right_hint(name, capsys):
    wrong, hint = SINUSOIDAL_WRONG[name]
    result = check_sinusoidal(wrong)
    assert not result
    assert hint in capsys.readouterr().out
    assert result.hint != SINUSOIDAL_HINT  # a specific hint, not the general one


def test_sinusoidal_checker_passes_solutions():
    assert check_sinusoidal(table)
    assert check_sinusoidal(sinusoidal_student_loop)
    assert check_sinusoidal(lambda s, d: torch.from_numpy(table(s, d, dtype=np.float32)))  # float32, torch


@pytest.mark.parametrize(
    "call",
    [
        lambda s, d: pe.sinusoidal_encoding(s, d),
        lambda s, d: pe.sinusoidal_encoding_loop(s, d),
        lambda s, d: pe.SinusoidalPositionalEncoding(d, s)(torch.zeros(1, s, d))[0],
        lambda s, d: np.sin(np.arange(s)[:, None] * pe.sinusoidal_frequencies(d)),
    ],
)
def test_sinusoidal_checker_fails_an_answer_that_calls_the_library(call, capsys):
    result = check_sinusoidal(call)
    assert not result and result.reason == "calls the library"
    assert "switched off" in capsys.readouterr().out


# --- check_position_lookup ----------------------------------------------------------------------


def lookup_solution(table, positions):
    max_len = table.shape[0]
    for p in positions.tolist():
        if not 0 <= p < max_len:
            raise ValueError(
                f"position {p} requested, but the table has positions 0..{max_len - 1} (max_len={max_len})"
            )
    return table[positions]


class PositionError(ValueError):
    """A subclass of ValueError, as a library of the student's own might define."""


def lookup_with_own_error(table, positions):
    bad = positions[(positions < 0) | (positions >= table.shape[0])]
    if bad.numel():
        raise PositionError(f"position {int(bad[0])} is outside the table (max_len={table.shape[0]})")
    return table[positions]


def lookup_bare(table, positions):
    return table[positions]


def lookup_embedding(table, positions):
    return torch.nn.functional.embedding(positions, table)


def lookup_off_by_one(table, positions):
    if positions.max() > table.shape[0]:
        raise ValueError(f"position {positions.max()} too large for max_len={table.shape[0]}")
    return table[positions]


def lookup_upper_only(table, positions):
    if positions.max() >= table.shape[0]:
        raise ValueError(f"position {int(positions.max())} too large for max_len={table.shape[0]}")
    return table[positions]


def lookup_vague_message(table, positions):
    if positions.min() < 0 or positions.max() >= table.shape[0]:
        raise ValueError("bad position")
    return table[positions]


def lookup_index_error(table, positions):
    if positions.min() < 0 or positions.max() >= table.shape[0]:
        raise IndexError(f"position {int(positions.max())} >= max_len={table.shape[0]}")
    return table[positions]


def lookup_refuses_the_last_row(table, positions):
    if positions.min() < 0 or positions.max() >= table.shape[0] - 1:
        raise ValueError(f"position {int(positions.max())}, max_len={table.shape[0]}")
    return table[positions]


def lookup_clamps(table, positions):
    return table[positions.clamp(0, table.shape[0] - 1)]


def test_lookup_checker_fails_the_stub():
    assert not check_position_lookup(stub)


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lookup_bare, "IndexError"),
        (lookup_embedding, "IndexError"),
        (lookup_off_by_one, "use >="),
        (lookup_upper_only, "negative position"),
        (lookup_vague_message, "must contain the position and max_len"),
        (lookup_index_error, "raise ValueError (or a subclass of it), not IndexError"),
        (lookup_refuses_the_last_row, "max_len - 1 is the last row"),
        (lookup_clamps, "returned rows: raise ValueError"),
    ],
    ids=[
        "bare-indexing",
        "F.embedding",
        "off-by-one",
        "upper-only",
        "vague-message",
        "index-error",
        "refuses-last",
        "clamps",
    ],
)
def test_lookup_checker_fails_wrong_answers(wrong, hint, capsys):
    result = check_position_lookup(wrong)
    assert not result and result.hint != LOOKUP_HINT
    assert hint in capsys.readouterr().out


def test_lookup_checker_passes_solutions():
    assert check_position_lookup(lookup_solution)
    assert check_position_lookup(lookup_with_own_error)  # a subclass of ValueError is a ValueError


def test_lookup_checker_fails_an_answer_that_uses_the_library_module(capsys):
    def via_module(table, positions):  # the library's module raises a ValueError naming position and max_len
        module = pe.LearnedPositionalEmbedding(max_len=table.shape[0], d_model=table.shape[1])
        with torch.no_grad():
            module.embedding.weight.copy_(table)
        if positions.min() < 0:
            raise ValueError(f"position {int(positions.min())} is negative; max_len={table.shape[0]}")
        top = int(positions.max())
        if top >= table.shape[0]:
            module(torch.zeros(1, top + 1, table.shape[1]))  # raises the library's ValueError
        return table[positions]

    result = check_position_lookup(via_module)
    assert not result and result.reason == "calls the library"
    assert "LearnedPositionalEmbedding" in capsys.readouterr().out


def test_lookup_checker_rejects_non_callables():
    assert not check_position_lookup("table[positions]")


# --- check_add_positions (the library is part of this exercise: it asks for pe.sinusoidal_encoding) -----


def positions_table(seq_len, d_model, first=0):
    """Rows first .. first + s - 1 of the interleaved table, written with NumPy (no posenc_lib)."""
    return torch.from_numpy(table(seq_len, d_model, first=first)).float()  # (s, d)


def add_solution(words, d_model, first=0):
    return pe.embed_words(words, d_model) + positions_table(len(words), d_model, first)


def add_with_offset(words, d_model, first=0):
    """The notebook's solution: the library table with offset=."""
    return pe.embed_words(words, d_model) + pe.sinusoidal_encoding(len(words), d_model, offset=first)


def add_by_slicing(words, d_model, first=0):
    """A right answer written differently: the rows of a longer table, in float64 NumPy."""
    longer = pe.sinusoidal_encoding(first + len(words), d_model, dtype=torch.float64)  # (first + s, d)
    return (pe.embed_words(words, d_model, dtype=torch.float64) + longer[first:]).numpy()


def test_add_positions_checker_fails_the_stub():
    assert not check_add_positions(stub)


ADD_WRONG = {
    "restarts-at-0": (lambda w, d, f=0: add_solution(w, d), "restarts at position 0"),
    "off-by-one": (lambda w, d, f=0: add_solution(w, d, f + 1), "off by one"),
    "same-row-for-all": (lambda w, d, f=0: pe.embed_words(w, d) + positions_table(1, d, f), "the same position vector"),
    "no-positions": (lambda w, d, f=0: pe.embed_words(w, d), "word vectors alone"),
    "positions-only": (lambda w, d, f=0: positions_table(len(w), d, f), "position vectors alone"),
    "concatenated": (
        lambda w, d, f=0: torch.cat([pe.embed_words(w, d), positions_table(len(w), d, f)], -1),
        "concatenated",
    ),
    "multiplied": (lambda w, d, f=0: pe.embed_words(w, d) * positions_table(len(w), d, f), "multiplied"),
}


@pytest.mark.parametrize("name", ADD_WRONG)
def test_add_positions_checker_fails_wrong_answers(name, capsys):
    wrong, hint = ADD_WRONG[name]
    result = check_add_positions(wrong)
    assert not result and result.hint != ADD_HINT
    assert hint in capsys.readouterr().out


def test_add_positions_checker_passes_right_answers():
    assert check_add_positions(add_solution)
    assert check_add_positions(add_with_offset)
    assert check_add_positions(add_by_slicing)


def test_add_positions_checker_fails_the_two_argument_answer_of_the_first_edition(capsys):
    result = check_add_positions(lambda w, d: add_solution(w, d))
    assert not result and result.reason == "raised"


def test_add_positions_checker_fails_an_answer_that_calls_the_library_module(capsys):
    def with_the_module(words, d_model, first=0):
        return pe.SinusoidalPositionalEncoding(d_model)(pe.embed_words(words, d_model), offset=first)

    result = check_add_positions(with_the_module)
    assert not result and result.reason == "calls the library"
    assert "SinusoidalPositionalEncoding" in capsys.readouterr().out

"""Chapter 4's checker (a position lookup that refuses positions past the table) fails on the stub and on
typical wrong answers (with the matching hint), and passes on right answers."""

import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_position_lookup
from posenc_lib.exercises.learned import LOOKUP_HINT


def stub(*args, **kwargs):
    raise NotImplementedError()


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

"""Checker for chapter 1 (why order matters): which reorderings does a position table leave unchanged?

- ``check_table_symmetries(fn)``: ``fn(table)``, with ``table`` a position table of shape ``(s, d)``
  (row ``p`` is the vector added at position ``p``), returns every ordering ``perm`` of the ``s``
  positions with ``table[perm]`` equal to ``table`` (rows equal to float round-off count as equal): the
  reorderings a model that adds this table to its token vectors still cannot see. The chapter only
  says that "any table with distinct rows would do"; the exercise asks for the symmetries a table
  leaves when it does not. The reference, :func:`reference_symmetries`, is switched off while the
  answer runs, so an answer cannot import it.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..sinusoidal import sinusoidal_encoding
from ._core import Case, CheckResult, Diagnosis, check_function

ROUND_OFF = 1e-6  # rows closer than this (largest entry difference) are the same vector


def _rows_equal(table: torch.Tensor, atol: float) -> torch.Tensor:
    """``(s, s)`` bool: rows ``i`` and ``j`` of ``table`` ``(s, d)`` agree entry by entry within ``atol``."""
    return (table[:, None, :] - table[None, :, :]).abs().amax(dim=-1) <= atol  # (s, s)


def reference_symmetries(table: torch.Tensor, atol: float = ROUND_OFF) -> list[tuple[int, ...]]:
    """Every ordering ``perm`` of the ``s`` rows of ``table`` ``(s, d)`` with ``table[perm]`` equal to ``table``.

    The rows fall into classes of equal vectors; an ordering leaves the table unchanged exactly when
    it moves each position to a position of its own class, so the orderings are the products of the
    permutations inside each class (their number is the product of the classes' sizes factorial).
    Returned sorted, each as a tuple of ``s`` ints.
    """
    if not isinstance(table, torch.Tensor) or table.dim() != 2:
        raise ValueError(f"table must be a 2-D tensor (s, d), got {type(table).__name__}")
    same = _rows_equal(table.double(), atol)  # (s, s)
    s = table.shape[0]
    classes: list[list[int]] = []
    for p in range(s):
        for members in classes:
            if bool(same[p, members[0]]):
                members.append(p)
                break
        else:
            classes.append([p])
    result = []
    for shuffles in itertools.product(*(itertools.permutations(members) for members in classes)):
        perm = [0] * s
        for members, shuffled in zip(classes, shuffles):
            for target, source in zip(members, shuffled):
                perm[target] = source
        result.append(tuple(perm))
    return sorted(result)


class _Orderings:
    """The expected answer: sorted orderings, shown by their count and the first few."""

    def __init__(self, orderings: list[tuple[int, ...]]):
        self.orderings = tuple(orderings)

    def __repr__(self) -> str:
        count = len(self.orderings)
        shown = ", ".join(str(p) for p in self.orderings[:3])
        return f"{count} ordering{'s' if count != 1 else ''}: {shown}{', ...' if count > 3 else ''}"


def _as_orderings(got: Any) -> list[tuple[int, ...]] | None:
    """The student's orderings as tuples of Python ints, or None if the value is not a collection of orderings."""
    if isinstance(got, np.ndarray):
        got = torch.from_numpy(got) if got.dtype.kind in "iu" else None
    if isinstance(got, torch.Tensor):
        if got.dim() != 2 or got.is_floating_point():
            return None
        return [tuple(int(v) for v in row) for row in got.tolist()]
    if not isinstance(got, (list, tuple, set, frozenset)):
        return None
    out = []
    for perm in got:
        if isinstance(perm, np.ndarray):
            perm = torch.from_numpy(perm) if perm.dtype.kind in "iu" else None
        if isinstance(perm, torch.Tensor):
            if perm.dim() != 1 or perm.is_floating_point():
                return None
            perm = perm.tolist()
        if not isinstance(perm, (list, tuple)) or any(isinstance(v, bool) for v in perm):
            return None
        try:
            out.append(tuple(operator.index(v) for v in perm))  # ints, NumPy ints
        except TypeError:
            return None
    return out


def _compare(got: Any, expected: _Orderings | list[tuple[int, ...]]) -> bool:
    """The same set of orderings, in any order, each listed once (``expected``: the answer or a wrong answer's)."""
    orderings = _as_orderings(got)
    wanted = expected.orderings if isinstance(expected, _Orderings) else _as_orderings(expected)
    if orderings is None or wanted is None:
        return False
    return len(orderings) == len(set(orderings)) and set(orderings) == set(wanted)


def _explain(got: Any, expected: _Orderings) -> str:
    """Form problems read off the result: not orderings, not permutations, repeats, a missing identity."""
    orderings = _as_orderings(got)
    s = len(expected.orderings[0])
    if orderings is None:
        return (
            "return a list of orderings, each a tuple (or list, or integer tensor) of the s positions, "
            "e.g. [(0, 1, 2), (1, 0, 2)]."
        )
    if any(sorted(p) != list(range(s)) for p in orderings):
        return f"each ordering must list every position 0 .. {s - 1} exactly once (a permutation of the {s} rows)."
    if len(orderings) != len(set(orderings)):
        return "your list holds the same ordering more than once: list each one once."
    if tuple(range(s)) not in orderings:
        return "the identity ordering (nothing moves) always leaves the table unchanged: include it."
    return ""


# --- the typical wrong answers -----------------------------------------------------------------------------


def _brute_force(table: torch.Tensor, same: Callable[[torch.Tensor, torch.Tensor], bool]) -> list[tuple[int, ...]]:
    """Try every ordering of the rows of ``table`` ``(s, d)``, keep those ``same`` accepts."""
    return [perm for perm in itertools.permutations(range(table.shape[0])) if same(table[list(perm)], table)]


def _exact(table: torch.Tensor) -> list[tuple[int, ...]]:
    """Typical wrong answer: rows compared with exact equality."""
    return _brute_force(table, torch.equal)


def _default_allclose(table: torch.Tensor) -> list[tuple[int, ...]]:
    """Typical wrong answer: ``torch.allclose`` with its default tolerances (atol=1e-8, relative 1e-5)."""
    return _brute_force(table, torch.allclose)


def _loose(table: torch.Tensor) -> list[tuple[int, ...]]:
    """Typical wrong answer: a tolerance far above round-off (rows compared to two decimals)."""
    return _brute_force(table, lambda a, b: bool(torch.allclose(a, b, atol=1e-2)))


def _single_swaps(table: torch.Tensor) -> list[tuple[int, ...]]:
    """Typical wrong answer: the identity and each swap of two equal rows, but no combination of swaps."""
    s = table.shape[0]
    same = _rows_equal(table.double(), ROUND_OFF)
    out = [tuple(range(s))]
    for i, j in itertools.combinations(range(s), 2):
        if bool(same[i, j]):
            perm = list(range(s))
            perm[i], perm[j] = j, i
            out.append(tuple(perm))
    return out


DIAGNOSES = [
    Diagnosis(
        "you returned only the identity: when two positions have the same row, exchanging them leaves the "
        "table unchanged too, so those orderings belong in the list.",
        lambda table: [tuple(range(table.shape[0]))],
    ),
    Diagnosis(
        "you returned every ordering whatever the table: an ordering counts only if table[perm] equals table, "
        "so positions with different rows must stay where they are.",
        lambda table: list(itertools.permutations(range(table.shape[0]))),
    ),
    Diagnosis(
        "you compared rows with exact equality: rows that are the same vector mathematically (a sinusoid one "
        "wavelength later) differ in float32 by round-off of about 1e-7. Compare with an absolute tolerance "
        "(e.g. torch.allclose(..., atol=1e-6)).",
        _exact,
    ),
    Diagnosis(
        "torch.allclose with its default tolerances is relative (rtol=1e-5) plus a tiny atol=1e-8: an entry "
        "that should be 0 but is 1.7e-7 fails it. Pass an absolute tolerance near round-off, e.g. atol=1e-6.",
        _default_allclose,
    ),
    Diagnosis(
        "your tolerance is too loose: rows 1e-3 apart are different vectors (two different positions), not "
        "round-off. Use a tolerance near float round-off (about 1e-6).",
        _loose,
    ),
    Diagnosis(
        "you listed the identity and the swaps of two equal rows, but not their combinations: with classes "
        "of equal rows, any reordering inside each class (also several swaps at once, or a 3-cycle) leaves "
        "the table unchanged; a class of k rows gives k! orderings, and the classes multiply.",
        _single_swaps,
    ),
    Diagnosis(
        "the identity ordering (nothing moves) always leaves the table unchanged: include it.",
        lambda table: [p for p in reference_symmetries(table) if p != tuple(range(table.shape[0]))] or None,
    ),
]

SYMMETRY_HINT = (
    "group the positions into classes of equal rows (equal within about 1e-6); an ordering leaves the table "
    "unchanged exactly when it sends every position to a position of its own class. Return each such ordering "
    "once, as a tuple perm with table[perm] equal to table."
)


def _cases() -> list[Case]:
    def case(label: str, table: torch.Tensor, hint: str = "") -> Case:
        return Case(label, (table,), expected=_Orderings(reference_symmetries(table)), hint=hint)

    vector = torch.tensor([0.3, -1.2, 0.5, 0.8])  # (d,) = (4,)
    wavelength_3 = 2 * math.pi * torch.arange(6, dtype=torch.float32) / 3  # (s,) angles
    pair_rows = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))  # (3, d)
    scattered = torch.randn(2, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)  # (2, d)
    return [
        case(
            "the sinusoidal table of 5 positions, d = 8 (the chapter's)",
            sinusoidal_encoding(5, 8),
            "every row is different: only the identity leaves the table unchanged.",
        ),
        case(
            "a zero table of 4 positions (no positional information at all)",
            torch.zeros(4, 3),
            "all rows are equal: every one of the 4! orderings leaves the table unchanged.",
        ),
        case(
            "one vector per pair of positions (0 and 1 share one, 2 and 3 the next, 4 and 5 the last)",
            pair_rows.repeat_interleave(2, dim=0),  # (6, d)
            "three classes of two equal rows: 2! * 2! * 2! = 8 orderings.",
        ),
        case(
            "rows [sin, cos] of one sinusoid of wavelength 3, positions 0..5, float32",
            torch.stack([wavelength_3.sin(), wavelength_3.cos()], dim=1),  # (6, 2)
            "rows p and p + 3 are the same vector up to float32 round-off (about 1e-7): compare with a tolerance.",
        ),
        case(
            "rows p / 1000 times one vector, 5 positions (neighbouring rows 1e-3 apart)",
            torch.arange(5.0)[:, None] / 1000 * vector,  # (5, d)
            "rows 1e-3 apart are different positions: a tolerance near round-off (1e-6) keeps them apart.",
        ),
        case(
            "5 positions, float64: rows 0 and 3 equal, rows 1, 2 and 4 equal",
            scattered[torch.tensor([0, 1, 1, 0, 1])],  # (5, d)
            "classes need not be neighbours: {0, 3} and {1, 2, 4} give 2! * 3! = 12 orderings.",
        ),
    ]


def check_table_symmetries(fn: Callable[[torch.Tensor], Any]) -> CheckResult:
    """Check ``fn(table) -> orderings``: every ``perm`` with ``table[perm] == table`` (to round-off), each once.

    ``table`` is ``(s, d)``. Any collection of orderings in any order passes (tuples, lists or a
    ``(k, s)`` integer tensor). The answer runs with :func:`reference_symmetries` switched off.
    """
    return check_function(
        "Reorderings a table cannot see",
        fn,
        _cases(),
        hint=SYMMETRY_HINT,
        diagnoses=DIAGNOSES,
        compare=_compare,
        explain=_explain,
        forbidden=[reference_symmetries],
    )

"""Checker for the learned-positions chapter's coding exercise: a lookup that refuses positions it does not have.

The student writes ``fn(table, positions)`` with ``table`` of shape ``(max_len, d)``
and ``positions`` a 1-D integer tensor ``(s,)``. It must return ``table[positions]``,
``(s, d)``, when every position is in ``0 .. max_len - 1``, and otherwise raise a
``ValueError`` whose message names the offending position and ``max_len``.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function


def _outcome(fn: Callable[..., Any]) -> Callable[..., tuple[str, Any]]:
    """Wrap ``fn`` so that a raised exception becomes a value ``(exception name, message)``."""

    def run(*args: Any) -> tuple[str, Any]:
        try:
            return ("returned", fn(*args))
        except NotImplementedError:
            raise
        except Exception as error:  # the exercise is about which error is raised
            return (type(error).__name__, str(error))

    return run


def _compare(got: tuple[str, Any], expected: tuple[str, Any]) -> bool:
    kind, value = got
    expected_kind, expected_value = expected
    if kind != expected_kind:
        return False
    if kind == "returned":
        return arrays_close(value, expected_value)
    if kind == "ValueError" and isinstance(expected_value, tuple):  # the message must name these
        return all(str(part) in value for part in expected_value)
    return value == expected_value


def _bare_indexing(table: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    return table[positions]


def _upper_check_only(table: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    if int(positions.max()) >= table.shape[0]:
        raise ValueError(f"position {int(positions.max())} is past max_len={table.shape[0]}")
    return table[positions]


def check_position_lookup(fn: Callable[[torch.Tensor, torch.Tensor], Any]) -> CheckResult:
    """Check a position lookup that serves ``0 .. max_len - 1`` and raises a clear ``ValueError`` otherwise."""
    if not callable(fn):
        return check_function("Refuse positions the table does not have", fn, [], hint="")
    generator = torch.Generator().manual_seed(7)
    table = torch.randn(8, 3, generator=generator)  # max_len = 8, d = 3

    def case(label: str, positions: list[int], bad: int | None = None) -> Case:
        index = torch.tensor(positions)
        if bad is None:
            expected: tuple[str, Any] = ("returned", table[index])
        else:
            expected = ("ValueError", (bad, 8))  # its message must name the position and max_len
        return Case(label, (table, index), {}, expected)

    cases = [
        case("max_len=8, positions [0, 1, 2]", [0, 1, 2]),
        case("max_len=8, positions [5, 7] (7 is the last one there is)", [5, 7]),
        case("max_len=8, positions [6, 7, 8] (8 is one past the end)", [6, 7, 8], bad=8),
        case("max_len=8, positions [3, 20]", [3, 20], bad=20),
        case("max_len=8, positions [-1, 0] (a negative position)", [-1, 0], bad=-1),
    ]
    diagnoses = [
        Diagnosis(
            "position max_len is one past the end: a table of max_len rows has positions 0 .. max_len - 1. "
            "A bare table[positions] (or a check with > instead of >=) lets it through to an IndexError that "
            "does not say what went wrong; check 0 <= p < max_len yourself (use >=) and raise a ValueError.",
            _outcome(_bare_indexing),
        ),
        Diagnosis(
            "you check only the upper end: a negative position must be refused too (tensor indexing would "
            "quietly count it from the end).",
            _outcome(_upper_check_only),
        ),
    ]
    return check_function(
        "Refuse positions the table does not have",
        _outcome(fn),
        cases,
        hint="return table[positions] when 0 <= every position < max_len = table.shape[0]; otherwise raise "
        "ValueError with a message that names the offending position and max_len.",
        diagnoses=diagnoses,
        compare=_compare,
    )

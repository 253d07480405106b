"""Checker for the learned-positions chapter's coding exercise: a lookup that refuses positions it does not have.

The student writes ``fn(table, positions)`` with ``table`` of shape ``(max_len, d)``
and ``positions`` a 1-D integer tensor ``(s,)``. It must return ``table[positions]``,
``(s, d)``, when every position is in ``0 .. max_len - 1``, and otherwise raise a
``ValueError`` (or a subclass of it) whose message names the offending position and
``max_len``. The answer runs with :class:`posenc_lib.LearnedPositionalEmbedding` switched off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..learned import LearnedPositionalEmbedding
from ._core import Case, CheckResult, arrays_close, check_function, describe

LOOKUP_HINT = (
    "return table[positions] when 0 <= every position < max_len = table.shape[0]; otherwise raise "
    "ValueError with a message that names the offending position and max_len."
)


class _Outcome(tuple):
    """``("returned", value)``, ``("raised", exception)`` or, as expected value, ``("raised", (position, max_len))``."""

    def __repr__(self) -> str:
        kind, value = self
        if kind == "returned":
            return describe(value)
        if isinstance(value, tuple):
            return f"a ValueError whose message names position {value[0]} and max_len={value[1]}"
        return f"{type(value).__name__}: {value}"


def _outcome(fn: Callable[..., Any]) -> Callable[..., _Outcome]:
    """Wrap ``fn`` so that a raised exception becomes a value ``("raised", exception)``."""

    def run(*args: Any) -> _Outcome:
        try:
            return _Outcome(("returned", fn(*args)))
        except NotImplementedError:
            raise
        except Exception as error:  # the exercise is about which error is raised
            return _Outcome(("raised", error))

    return run


def _compare(got: tuple[str, Any], expected: tuple[str, Any]) -> bool:
    """Rows within tolerance; or a ValueError (a subclass is fine) whose message contains every expected part."""
    kind, value = got
    if kind != expected[0]:
        return False
    if kind == "returned":
        return arrays_close(value, expected[1])
    return isinstance(value, ValueError) and all(str(part) in str(value) for part in expected[1])


def _explain(got: tuple[str, Any], expected: tuple[str, Any]) -> str:
    """What went wrong, read off the outcome."""
    kind, value = got
    if expected[0] == "returned":
        if kind == "raised":
            return (
                f"every position here is in 0 .. max_len - 1 (max_len - 1 is the last row there is), but your function "
                f"raised {type(value).__name__}: refuse only p < 0 or p >= max_len."
            )
        return "return the rows table[positions], in the order of positions."
    bad, max_len = expected[1]
    if kind == "returned":
        if bad < 0:
            return (
                "a negative position must be refused too: tensor indexing quietly counts it from the end, "
                "so table[positions] returns a row instead of failing."
            )
        return f"position {bad} does not exist (positions are 0 .. {max_len - 1}), but your function returned rows: raise ValueError."
    if not isinstance(value, ValueError):
        if isinstance(value, IndexError) and "out of bounds" in str(value):
            return (
                "position max_len is one past the end: a table of max_len rows has positions 0 .. max_len - 1. "
                "A bare table[positions] (or a check with > instead of >=) lets it through to torch's IndexError, "
                "which does not say what went wrong; check 0 <= p < max_len yourself (use >=) and raise a ValueError."
            )
        return f"raise ValueError (or a subclass of it), not {type(value).__name__}."
    missing = [name for name, part in (("the position", bad), ("max_len", max_len)) if str(part) not in str(value)]
    return (
        f"your ValueError's message must contain {' and '.join(missing)} ({', '.join(str(p) for p in expected[1])}); "
        f"it says {str(value)!r}."
    )


def check_position_lookup(fn: Callable[[torch.Tensor, torch.Tensor], Any]) -> CheckResult:
    """Check a position lookup that serves ``0 .. max_len - 1`` and raises a clear ``ValueError`` otherwise."""
    if not callable(fn):
        return check_function("Refuse positions the table does not have", fn, [], hint="")
    generator = torch.Generator().manual_seed(7)
    table = torch.randn(8, 3, generator=generator)  # max_len = 8, d = 3

    def case(label: str, positions: list[int], bad: int | None = None) -> Case:
        index = torch.tensor(positions)
        # the message names both
        expected = _Outcome(("returned", table[index]) if bad is None else ("raised", (bad, 8)))
        return Case(label, (table, index), {}, expected)

    cases = [
        case("max_len=8, positions [0, 1, 2]", [0, 1, 2]),
        case("max_len=8, positions [5, 7] (7 is the last one there is)", [5, 7]),
        case("max_len=8, positions [6, 7, 8] (8 is one past the end)", [6, 7, 8], bad=8),
        case("max_len=8, positions [3, 20]", [3, 20], bad=20),
        case("max_len=8, positions [-1, 0] (a negative position)", [-1, 0], bad=-1),
    ]
    return check_function(
        "Refuse positions the table does not have",
        _outcome(fn),
        cases,
        hint=LOOKUP_HINT,
        compare=_compare,
        explain=_explain,
        forbidden=[LearnedPositionalEmbedding],
    )

"""The machinery behind the exercise checkers: run a student's function on cases, print a verdict.

A checker never raises on a wrong answer: it prints what input failed, what was
expected, what came back and a hint, and returns a :class:`CheckResult` that is
truthy only on success (so ``assert check_x(fn)`` works for autograders such as
nbgrader).
"""

from __future__ import annotations

import copy
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import torch


@dataclass
class CheckResult:
    """Outcome of one checker. ``bool(result)`` is ``result.passed``."""

    exercise: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult(exercise={self.exercise!r}, passed={self.passed})"

    def _ipython_display_(self) -> None:
        """Show nothing when a notebook cell ends with a checker call: the verdict is already printed."""


@dataclass
class Case:
    """One input to try: ``fn(*args, **kwargs)`` should give ``expected``."""

    label: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    expected: Any = None


@dataclass
class Diagnosis:
    """A typical wrong answer: if the student's output equals ``wrong(*args, **kwargs)``, print ``hint``."""

    hint: str
    wrong: Callable[..., Any]


def to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=float)


def arrays_close(got: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-5) -> bool:
    """True if ``got`` has ``expected``'s shape and values (within tolerance)."""
    try:
        got_array = to_numpy(got)
    except (TypeError, ValueError):
        return False
    expected_array = to_numpy(expected)
    return got_array.shape == expected_array.shape and bool(np.allclose(got_array, expected_array, atol=atol, rtol=rtol))


def describe(value: Any) -> str:
    """A short, readable rendering of a value for a verdict."""
    if isinstance(value, (np.ndarray, torch.Tensor)):
        array = to_numpy(value)
        body = np.array2string(array, precision=4, suppress_small=True, threshold=12, edgeitems=2)
        return f"array of shape {array.shape}:\n{body}"
    return repr(value)


def _safe_compare(compare: Callable[[Any, Any], bool], got: Any, expected: Any) -> bool:
    """``compare(got, expected)``, with an exception (e.g. on a value of an unexpected type) read as "not equal"."""
    try:
        return bool(compare(got, expected))
    except Exception:
        return False


def _report(exercise: str, passed: bool, message: str) -> CheckResult:
    print(message)
    return CheckResult(exercise, passed, message)


def check_function(
    exercise: str,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    *,
    hint: str,
    diagnoses: Sequence[Diagnosis] = (),
    compare: Callable[[Any, Any], bool] = arrays_close,
) -> CheckResult:
    """Run ``fn`` on every case; stop at the first failure and explain it.

    Each call gets its own copy of the case's arguments, so a function that modifies its input
    in place cannot change what later calls (or the diagnoses) see. A ``compare`` that raises on
    what the student returned counts as a mismatch.

    Args:
        exercise: the exercise's title, shown in the verdict.
        fn: the student's function.
        cases: inputs with their expected outputs, edge cases included (at least one).
        hint: the general hint shown when no specific diagnosis applies.
        diagnoses: typical wrong answers with a specific hint each.
        compare: ``compare(got, expected) -> bool``.

    Raises:
        TypeError, ValueError: if the checker itself is set up wrongly (no cases, a case that is
            not a :class:`Case`, a hint that is not a string). A wrong *answer* never raises; a
            ``fn`` that is not callable gets its verdict before anything else is looked at.
    """
    if not callable(fn):
        return _report(exercise, False, f"❌ {exercise}: expected a function, got {type(fn).__name__}.")
    if not isinstance(exercise, str) or not exercise:
        raise TypeError(f"exercise must be a non-empty string (the exercise's title), got {exercise!r}")
    cases = list(cases)
    if not cases:
        raise ValueError("cases must hold at least one Case: a checker without cases would accept any answer")
    if not all(isinstance(case, Case) for case in cases):
        raise TypeError(f"cases must be Case objects, got {[type(case).__name__ for case in cases]}")
    if not isinstance(hint, str):
        raise TypeError(f"hint must be a string, got {type(hint).__name__}")
    for case in cases:
        try:
            got = fn(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
        except NotImplementedError:
            return _report(exercise, False, f"❌ {exercise}: not implemented yet (the function raised NotImplementedError).")
        except Exception as error:  # the student's code crashed: show where
            where = traceback.format_exception_only(type(error), error)[-1].strip()
            return _report(exercise, False, f"❌ {exercise}: calling it with {case.label} raised {where}\n   hint: {hint}")
        if _safe_compare(compare, got, case.expected):
            continue
        specific = hint
        for diagnosis in diagnoses:
            try:
                if _safe_compare(compare, got, diagnosis.wrong(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))):
                    specific = diagnosis.hint
                    break
            except Exception:  # a diagnosis that cannot run on this case does not apply
                continue
        message = (
            f"❌ {exercise}: wrong result for {case.label}\n"
            f"   expected {describe(case.expected)}\n"
            f"   got      {describe(got)}\n"
            f"   hint: {specific}"
        )
        return _report(exercise, False, message)
    return _report(exercise, True, f"✅ {exercise}: correct on all {len(cases)} test inputs.")

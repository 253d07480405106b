"""The machinery behind the exercise checkers: run a student's function on cases, print a verdict.

A checker never raises on a wrong answer: it prints which input failed, what was expected, what
came back and a hint, and returns a :class:`CheckResult` that is truthy only on success (so
``assert check_x(fn)`` is an autograder test; nbgrader's test cells are exactly that).

How to write a checker (every checker in this package follows this pattern)::

    from ..sinusoidal import shift_matrix            # the reference, and what the student must not call
    from ._core import Case, CheckResult, Diagnosis, check_function

    def check_shift_matrix(fn) -> CheckResult:
        cases = [Case("k=3, d_model=4", (3, 4), expected=shift_matrix(3, 4)), ...]
        return check_function(
            "Shift matrix M_k", fn, cases,
            hint="the general hint, shown when nothing more specific applies",
            diagnoses=[Diagnosis("the specific hint", wrong_answer_function), ...],
            forbidden=[shift_matrix],                # the library code that computes the answer
        )

1. **Cases.** Edge cases included, in an order where the first failing case says something:
   plain inputs first, then the inputs that expose one mistake each (an odd width, positions past
   256 where bfloat16 loses integers, the exact boundary of an inequality), each with
   ``Case(..., hint=...)`` naming what it tests. The hint of the first failing case is shown when no
   diagnosis matches.
2. **Diagnoses.** One per typical wrong answer, computed by a function with the answer's signature.
   A diagnosis applies when the student's outputs equal the wrong answer's on *every* case the wrong
   answer is defined for (return ``None`` where it is not), so a constant answer such as
   ``lambda *a: False`` is not mistaken for a subtle one; for array answers, failing that, one
   matching on the failing case alone (an answer with two mistakes still gets a hint). Every wrong
   answer the tests try must get a specific hint; ``check_function`` itself explains a ``None``, a
   wrong shape, NaNs, an all-zero result and numbers that are only roughly right.
3. **Forbidden library code.** If the exercise asks the student to write something ``posenc_lib``
   already computes, pass those functions and classes as ``forbidden`` and say so in the exercise
   text ("do not call posenc_lib's ``shift_matrix``"). While the student's function runs, the code
   of each of them is replaced by a guard that records the call and raises :class:`LibraryCallError`
   (see :func:`library_unavailable`), so it refuses under any name, also when the answer *is* the
   library function or wraps it (``functools.partial``, a lambda); a class gets its ``__init__``
   and public methods guarded, so instances made earlier stop working too. Everything is restored
   afterwards. An answer that called one of them fails with a verdict that names it, even if it
   caught the error.
4. **Compare.** ``compare(got, expected) -> bool``; accept every valid form of the answer (NumPy
   or torch, another float dtype, a subclass of the expected exception, an exact fraction).
5. **Tests** (``tests/grading/test_exercises_*.py``): the checker fails the stub, every typical wrong
   answer with its specific hint, and an answer that calls the forbidden library code; it passes
   the notebook's solution and at least one answer written differently.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import sys
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

PASS_MARK = "PASS"
FAIL_MARK = "FAIL"


class LibraryCallError(RuntimeError):
    """Raised when a student's answer calls the ``posenc_lib`` code the exercise asks them to write."""


@dataclass
class CheckResult:
    """Outcome of one checker. ``bool(result)`` is ``result.passed``.

    ``reason`` is one of ``"correct"``, ``"not implemented"``, ``"calls the library"``, ``"raised"``,
    ``"wrong result"``; ``hint`` is the hint that was printed (empty when the answer passed).
    """

    exercise: str
    passed: bool
    message: str
    reason: str = ""
    hint: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult(exercise={self.exercise!r}, passed={self.passed}, reason={self.reason!r})"

    def _ipython_display_(self) -> None:
        """Show nothing when a notebook cell ends with a checker call: the verdict is already printed."""


@dataclass
class Case:
    """One input to try: ``fn(*args, **kwargs)`` should give ``expected``; ``hint`` says what this case tests."""

    label: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    expected: Any = None
    hint: str = ""


@dataclass
class Diagnosis:
    """A typical wrong answer: if the student's outputs equal ``wrong(*args, **kwargs)`` on every case, print ``hint``."""

    hint: str
    wrong: Callable[..., Any]


# --------------------------------------------------------------------------- the guard


def public_name(obj: Any) -> str:
    """``posenc_lib.shift_matrix`` if the package exports it, else its module path."""
    package = sys.modules.get("posenc_lib")
    name = getattr(obj, "__name__", repr(obj))
    if package is not None and getattr(package, name, None) is obj:
        return f"posenc_lib.{name}"
    return f"{getattr(obj, '__module__', 'posenc_lib')}.{name}"


_ACTIVE_GUARDS: list[list[str]] = []  # the call lists of the guards in force, innermost last


def refused_call(name: str) -> None:
    """What a switched-off library function does instead of its work: record the call, raise."""
    if _ACTIVE_GUARDS:
        _ACTIVE_GUARDS[-1].append(name)
    raise LibraryCallError(f"{name} is switched off while the checker runs your answer: write it yourself")


def _refusing_code(name: str, like: types.CodeType) -> types.CodeType:
    """A code object that calls :func:`refused_call` with ``name``, with ``like``'s free variables.

    A function's ``__code__`` may only be replaced by code with the same free variables (a method
    that calls ``super()`` has one, ``__class__``), so the stand-in declares them too. It finds
    :func:`refused_call` through ``__import__``, because it runs with the library module's globals.
    """
    cells = "\n".join(f"    {var} = None" for var in like.co_freevars) or "    pass"
    touch = f"({', '.join(like.co_freevars)},)" if like.co_freevars else "pass"
    source = (
        f"def _outer():\n{cells}\n"
        f"    def _refuse(*args, **kwargs):\n"
        f"        {touch}\n"
        f"        __import__({__name__!r}, fromlist=['_']).refused_call({name!r})\n"
        f"    return _refuse\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<switched off: {name}>", "exec"), namespace)
    return namespace["_outer"]().__code__


def _python_function(value: Any) -> types.FunctionType | None:
    """The plain Python function behind ``value`` (also inside a staticmethod or classmethod), else ``None``."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return value if isinstance(value, types.FunctionType) else None


@contextlib.contextmanager
def library_unavailable(forbidden: Sequence[Any], *, student: Any = None) -> Iterator[list[str]]:
    """Switch off ``forbidden`` (posenc_lib functions and classes) for the duration; yields the names called.

    A Python function's code is replaced (``__code__``) by a stand-in that records the call and
    raises :class:`LibraryCallError`, so the function refuses however the answer reaches it: by a
    module name, by an alias, *as the answer itself* (``check_x(pe.x)``), or wrapped in a
    ``functools.partial``, a lambda, a closure or a ``functools.wraps`` wrapper. A class keeps its
    name (``isinstance`` still works) but its ``__init__`` and public methods refuse the same way,
    which also stops instances and bound methods made before. Any other callable (no Python code
    to replace) is rebound wherever a module binds it: ``posenc_lib``, its submodules, ``__main__``
    and the module ``student`` (a function) was defined in. Everything is put back on exit, also
    after an error.
    """
    calls: list[str] = []
    undo: list[Callable[[], None]] = []

    def switch_off(function: types.FunctionType, name: str) -> None:
        original = function.__code__
        function.__code__ = _refusing_code(name, original)
        undo.append(functools.partial(setattr, function, "__code__", original))

    def guard(name: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            refused_call(name)

        return refuse

    others = {}
    for obj in forbidden:
        if isinstance(obj, type):
            for attribute, value in vars(obj).items():
                if (function := _python_function(value)) and (attribute == "__init__" or not attribute.startswith("_")):
                    switch_off(function, public_name(obj))
        elif function := _python_function(obj):
            switch_off(function, public_name(obj))
        else:
            others[id(obj)] = guard(public_name(obj))
    namespaces = [
        vars(module)
        for name, module in list(sys.modules.items())
        if others
        and module is not None
        and (name == "posenc_lib" or name.startswith("posenc_lib.") or name == "__main__")
    ]
    if others and isinstance(getattr(student, "__globals__", None), dict):
        namespaces.append(student.__globals__)
    _ACTIVE_GUARDS.append(calls)
    try:
        for namespace in namespaces:
            for key, value in list(namespace.items()):
                if id(value) in others and namespace[key] is value:
                    namespace[key] = others[id(value)]
                    undo.append(functools.partial(namespace.__setitem__, key, value))
        yield calls
    finally:
        _ACTIVE_GUARDS.remove(calls)
        for restore in reversed(undo):
            restore()


# --------------------------------------------------------------------------- comparing and describing


def to_numpy(value: Any) -> np.ndarray:
    """``value`` as a float64 array; a complex value is refused (TypeError), never cast to its real part."""
    if (isinstance(value, torch.Tensor) and value.is_complex()) or np.iscomplexobj(value):
        raise TypeError("complex values are not real numbers: take .real (or .abs()) first")
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=float)


def arrays_close(got: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-5) -> bool:
    """True if ``got`` (NumPy, torch, any float dtype) has ``expected``'s shape and values (within tolerance)."""
    try:
        got_array = to_numpy(got)
    except (TypeError, ValueError, RuntimeError):
        return False
    expected_array = to_numpy(expected)
    return got_array.shape == expected_array.shape and bool(
        np.allclose(got_array, expected_array, atol=atol, rtol=rtol)
    )


def describe(value: Any) -> str:
    """A short, readable rendering of a value for a verdict."""
    kind = "array"
    if isinstance(value, (list, tuple)) and len(value) <= 8 and all(isinstance(v, (int, float)) for v in value):
        return repr(value)
    if isinstance(value, (list, tuple)) and _safe(lambda: to_numpy(value).ndim > 0):
        kind, value = f"a {type(value).__name__}, as an array", to_numpy(value)
    if isinstance(value, (np.ndarray, torch.Tensor)):
        if (isinstance(value, torch.Tensor) and value.is_complex()) or np.iscomplexobj(value):  # shown as it is
            kind, array = (
                f"complex {kind}",
                np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value),
            )
        else:
            array = to_numpy(value)
        body = np.array2string(array, precision=4, suppress_small=True, threshold=12, edgeitems=2)
        return f"{kind} of shape {array.shape}:\n{body}"
    return repr(value)


def _safe(call: Callable[[], Any], default: Any = False) -> Any:
    """``call()``, with an exception (e.g. a compare on a value of an unexpected type) read as ``default``."""
    try:
        return call()
    except Exception:
        return default


def _defect(got: Any, expected: Any) -> str:
    """A specific hint for a result whose form is wrong (None, not an array, wrong shape, NaN, all zeros)."""
    if got is None:
        return "your function returned None: it needs a return statement."
    if isinstance(expected, (list, tuple)) and _safe(lambda: to_numpy(expected).ndim > 0):
        expected = np.asarray(expected)  # a sequence of numbers: judged like an array
    if not isinstance(expected, (np.ndarray, torch.Tensor)):
        return ""
    array = _safe(lambda: to_numpy(got), None)
    if array is None:
        return f"expected an array (NumPy or torch), got a {type(got).__name__}."
    want = to_numpy(expected)
    if array.ndim == 0 and want.ndim > 0:
        return f"you returned a single number ({describe(got)}); expected an array of shape {tuple(want.shape)}."
    if array.shape != want.shape:
        return f"the shape is {tuple(array.shape)}, expected {tuple(want.shape)}."
    if not np.isfinite(array).all() and np.isfinite(want).all():
        return "your result contains NaN or infinity: look for a division by zero or a log of 0."
    if array.size and not array.any() and want.any():
        return "every entry of your result is 0: the part that fills it in is missing or never runs."
    error = float(np.abs(array - want).max()) if array.size else 0.0
    floating = (
        expected.is_floating_point()
        if isinstance(expected, torch.Tensor)
        else np.issubdtype(expected.dtype, np.floating)
    )
    if floating and 0 < error <= 0.05 * max(1.0, float(np.abs(want).max())):
        return (
            f"your numbers are close but off by up to {error:.1e}: a rounding problem. Is something computed in a "
            f"16-bit float (bfloat16, float16), or a constant written with few digits?"
        )
    return ""


def _report(exercise: str, passed: bool, message: str, reason: str, hint: str = "") -> CheckResult:
    print(message)
    return CheckResult(exercise, passed, message, reason, hint)


def _run(fn: Callable[..., Any], case: Case, forbidden: Sequence[Any]) -> tuple[Any, BaseException | None, list[str]]:
    """``fn`` on a fresh copy of the case's arguments, with ``forbidden`` switched off: (result, error, library calls)."""
    with library_unavailable(forbidden, student=fn) as calls:
        try:
            return fn(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs)), None, calls
        except Exception as error:  # the student's code crashed: reported below
            return None, error, calls


def _matches(
    diagnosis: Diagnosis,
    cases: Sequence[Case],
    outcomes: list,
    compare: Callable[[Any, Any], bool],
    failing: int,
    *,
    everywhere: bool,
) -> bool:
    """The student's outputs equal the wrong answer's on the failing case and, if ``everywhere``, on every case
    where both are defined."""
    for index, (case, (got, error, _)) in enumerate(zip(cases, outcomes)):
        if index != failing and not everywhere:
            continue
        wrong = _safe(lambda: diagnosis.wrong(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs)), None)
        if wrong is None or error is not None:
            if index == failing:
                return False
            continue
        if not _safe(lambda: bool(compare(got, wrong))):
            return False
    return True


def _diagnose(
    diagnoses: Sequence[Diagnosis],
    cases: Sequence[Case],
    outcomes: list,
    compare: Callable[[Any, Any], bool],
    failing: int,
) -> str:
    """The hint of the first diagnosis matching on every case; for an array result, else of one matching the failing case.

    A yes/no or single-number answer has too few wrong values for one case to tell mistakes apart.
    """
    for everywhere in (True, False):
        if not everywhere and not isinstance(cases[failing].expected, (np.ndarray, torch.Tensor)):
            break
        for diagnosis in diagnoses:
            if _matches(diagnosis, cases, outcomes, compare, failing, everywhere=everywhere):
                return diagnosis.hint
    return ""


def check_function(
    exercise: str,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    *,
    hint: str,
    diagnoses: Sequence[Diagnosis] = (),
    compare: Callable[[Any, Any], bool] = arrays_close,
    forbidden: Sequence[Any] = (),
    explain: Callable[[Any, Any], str] | None = None,
) -> CheckResult:
    """Run ``fn`` on every case (with ``forbidden`` switched off) and explain the first failure.

    Each call gets its own copy of the case's arguments, so a function that modifies its input in
    place cannot change what later calls (or the diagnoses) see. A ``compare`` that raises on what
    the student returned counts as a mismatch. The hint printed for a wrong result is, in this
    order: the first diagnosis that matches (see :class:`Diagnosis`), ``explain(got, expected)`` if
    it returns a hint, a defect of form (``None``, shape, NaN, zeros), the failing case's own hint,
    the general ``hint``.

    Args:
        exercise: the exercise's title, shown in the verdict.
        fn: the student's function.
        cases: inputs with their expected outputs, edge cases included (at least one).
        hint: the general hint shown when nothing more specific applies.
        diagnoses: typical wrong answers with a specific hint each.
        compare: ``compare(got, expected) -> bool``.
        forbidden: posenc_lib functions and classes the answer must not call (see
            :func:`library_unavailable`).
        explain: ``explain(got, expected) -> str``, a specific hint read off a wrong result
            (e.g. which exception was raised instead of which), or ``""``.

    Raises:
        TypeError, ValueError: if the checker itself is set up wrongly (no cases, a case that is
            not a :class:`Case`, a hint that is not a string). A wrong *answer* never raises; a
            ``fn`` that is not callable gets its verdict before anything else is looked at.
    """
    if not callable(fn):
        return _report(
            exercise, False, f"{FAIL_MARK} {exercise}: expected a function, got {type(fn).__name__}.", "wrong result"
        )
    if not isinstance(exercise, str) or not exercise:
        raise TypeError(f"exercise must be a non-empty string (the exercise's title), got {exercise!r}")
    cases = list(cases)
    if not cases:
        raise ValueError("cases must hold at least one Case: a checker without cases would accept any answer")
    if not all(isinstance(case, Case) for case in cases):
        raise TypeError(f"cases must be Case objects, got {[type(case).__name__ for case in cases]}")
    if not isinstance(hint, str):
        raise TypeError(f"hint must be a string, got {type(hint).__name__}")
    outcomes = []
    for case in cases:
        outcome = _run(fn, case, forbidden)
        if outcome[2]:
            names = ", ".join(dict.fromkeys(outcome[2]))
            message = (
                f"{FAIL_MARK} {exercise}: your answer calls {names}, which this exercise asks you to write "
                f"yourself.\n   The checker runs your function with that library code switched off."
            )
            return _report(exercise, False, message, "calls the library", message.split("\n")[0])
        if isinstance(outcome[1], NotImplementedError):
            return _report(
                exercise,
                False,
                f"{FAIL_MARK} {exercise}: not implemented yet (the function raised NotImplementedError).",
                "not implemented",
            )
        outcomes.append(outcome)
    for index, (case, (got, error, _)) in enumerate(zip(cases, outcomes)):
        if error is not None:
            where = traceback.format_exception_only(type(error), error)[-1].strip()
            specific = case.hint or hint
            return _report(
                exercise,
                False,
                f"{FAIL_MARK} {exercise}: calling it with {case.label} raised {where}\n   hint: {specific}",
                "raised",
                specific,
            )
        if _safe(lambda: bool(compare(got, case.expected))):
            continue
        specific = _diagnose(diagnoses, cases, outcomes, compare, index)
        specific = specific or (explain and _safe(lambda: explain(got, case.expected), "")) or ""
        specific = specific or _defect(got, case.expected) or case.hint or hint
        message = (
            f"{FAIL_MARK} {exercise}: wrong result for {case.label}\n"
            f"   expected {describe(case.expected)}\n"
            f"   got      {describe(got)}\n"
            f"   hint: {specific}"
        )
        return _report(exercise, False, message, "wrong result", specific)
    return _report(exercise, True, f"{PASS_MARK} {exercise}: correct on all {len(cases)} test inputs.", "correct")

"""The wrong verdicts listed in issue 14, one test each: every false pass must now fail, every false reject pass.

Each of these failed on the checkers before issue 14 (see the issue's closing note for the run against
them). Only the public checker functions are used, so the file runs against any version of the package.
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import sys

import pytest
import torch

import posenc_lib as pe
from posenc_lib import exercises as ex
from posenc_lib.exercises import why_order_matters as symmetries

# --- false passes: one-line calls of the library the exercise asks the student to write ---------------------

LIBRARY_CALLS = {
    "check_next_row": lambda row: pe.shift_matrix(1, len(row)).numpy() @ row,
    "check_shift_matrix": lambda k, d: pe.shift_matrix(k, d),
    "check_offset_scores": lambda q, k, r, base=10000.0: (
        q[..., None, :] * pe.apply_rope(k[..., None, :].expand(*k.shape[:-1], len(r), k.shape[-1]), r, base=base)
    ).sum(-1),
    "check_offset_scores_interleaved": lambda q, k, r, base=10000.0: (
        q[..., None, :]
        * pe.apply_rope(k[..., None, :].expand(*k.shape[:-1], len(r), k.shape[-1]), r, base=base, layout="interleaved")
    ).sum(-1),
    "check_alibi_slopes": lambda n: pe.alibi_slopes(n),
    "check_ntk_frequencies": lambda d, s, base=10000.0: pe.ntk_aware_frequencies(pe.rope_frequencies(d, base), s),
    "check_bucket_starts": lambda num_buckets=32, max_distance=128, bidirectional=False: [
        int(pe.t5_relative_position_bucket(-torch.arange(4 * max_distance), num_buckets=num_buckets).eq(k).nonzero()[0])
        for k in range(num_buckets)
    ],
    "check_table_symmetries": lambda table: symmetries.reference_symmetries(table),
}


def updates_via_the_library(lengths, max_len):
    """Right answers, by way of the library's module: the gradient each row gets from one backward pass."""
    module = pe.LearnedPositionalEmbedding(d_model=1, max_len=max_len)
    sum(module(torch.zeros(1, n, 1)).sum() for n in lengths.tolist()).backward()
    return module.weight.grad[:, 0]


LIBRARY_CALLS["check_updates_per_row"] = updates_via_the_library


@pytest.mark.parametrize("checker", sorted(LIBRARY_CALLS))
def test_a_one_line_library_call_fails(checker, capsys):
    result = getattr(ex, checker)(LIBRARY_CALLS[checker])
    assert not result
    assert "posenc_lib" in capsys.readouterr().out  # the verdict names the library code it called


# --- false pass: RoPE offsets cast to bfloat16 before the angles ---------------------------------------------


def offset_scores_bf16_offsets(q, k, offsets, base=10000.0):
    d = q.shape[-1]
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    h = (
        torch.complex(q[..., : d // 2].double(), q[..., d // 2 :].double())
        * torch.complex(k[..., : d // 2].double(), k[..., d // 2 :].double()).conj()
    )
    angles = offsets.to(torch.bfloat16).double()[:, None] * theta  # the mistake: offsets rounded to bf16
    return (h[..., None, :] * torch.polar(torch.ones_like(angles), -angles)).sum(-1).real


def test_rope_offsets_in_bfloat16_fail():
    assert not ex.check_offset_scores(offset_scores_bf16_offsets)


# --- false reject: counts as floats (a gradient) -------------------------------------------------------------


def test_counts_read_off_a_plain_embeddings_gradient_pass():
    def by_gradient(lengths, max_len):
        table = torch.nn.Embedding(max_len, 1)
        sum(table(torch.arange(n)).sum() for n in lengths.tolist()).backward()
        return table.weight.grad[:, 0]  # float32 counts

    assert ex.check_updates_per_row(by_gradient)


# --- chapter 10: off-by-ones at the exact boundary fail, an exact fraction passes --------------------------------


def test_the_last_position_off_by_one_fails():
    assert not ex.check_fraction_unseen(
        lambda n, d, base=10000.0: float((n * pe.rope_frequencies(d, base) < 2 * math.pi).double().mean())
    )


def test_wavelength_longer_than_the_training_length_fails():
    assert not ex.check_fraction_unseen(
        lambda n, d, base=10000.0: float(((2 * math.pi / pe.rope_frequencies(d, base)) > n).double().mean())
    )


def test_an_exact_fraction_passes():
    from fractions import Fraction

    def exact(n, d, base=10000.0):
        return Fraction(int(((n - 1) * pe.rope_frequencies(d, base) < 2 * math.pi).sum()), d // 2)

    assert ex.check_fraction_unseen(exact)


# --- chapter 1: rows equal only to round-off are equal; a constant answer is not told it used exact equality --


def test_exact_float_equality_fails_the_table_symmetries():
    def exact(table):
        return [p for p in itertools.permutations(range(table.shape[0])) if torch.equal(table[list(p)], table)]

    assert not ex.check_table_symmetries(exact)


def test_the_identity_alone_is_not_told_it_compared_exactly():
    result = ex.check_table_symmetries(lambda table: [tuple(range(table.shape[0]))])
    assert not result and "exact equality" not in result.message


# --- issue 22: an answer that IS the forbidden library object, or wraps it, gets the verdict of a call -----------
#
# The guard used to rebind module names only, so `check_alibi_slopes(pe.alibi_slopes)` scored full marks: the
# answer object was the original function. Now the function's code itself refuses while the checker runs. Every
# answer below reaches the library through a reference taken *before* the check (the object itself, a default
# argument, a closure), which no rebinding of names can reach; each must get the verdict of a plain call.


def interpolate_via_library(model, factor, _scale=pe.linear_scaling_frequencies, _rope=pe.RotaryEmbedding):
    other = copy.deepcopy(model)
    theta = _scale(pe.rope_frequencies(model.config.head_dim), factor)
    other.rope = _rope(model.config.head_dim, model.config.max_len, frequencies=theta)
    return other


def llama3_groups_via_library(frequencies, original_len, _llama3=pe.llama3_frequencies):
    new = _llama3(frequencies, factor=8.0, original_max_len=original_len)
    unchanged, divided = int((new == frequencies).sum()), int(torch.isclose(new, frequencies / 8).sum())
    return unchanged, frequencies.shape[0] - unchanged - divided, divided


BUILT_BEFORE = {  # instances made before the check: their bound methods hold the original functions
    "learned": pe.LearnedPositionalEmbedding(4, 16),
    "sinusoidal": pe.SinusoidalPositionalEncoding(16, 2048),
}


def updates_via_a_bound_method(lengths, max_len, _forward=BUILT_BEFORE["learned"].forward):
    _forward(torch.zeros(1, 1, 4))  # a lookup through a module built before the check
    return (torch.arange(max_len)[:, None] < lengths[None]).sum(dim=1)


def offset_scores_with_library_frequencies(q, k, offsets, base=10000.0, _frequencies=pe.rope_frequencies):
    """The complex form, right but for taking its frequencies from posenc_lib."""
    half = q.shape[-1] // 2
    h = (
        torch.complex(q[..., :half].double(), q[..., half:].double())
        * torch.complex(k[..., :half].double(), k[..., half:].double()).conj()
    )  # (..., d_h/2)
    angles = offsets.double()[:, None] * _frequencies(q.shape[-1], base)  # (n, d_h/2)
    return (h[..., None, :] * torch.polar(torch.ones_like(angles), -angles)).sum(-1).real


# checker -> (an answer that gets its result from the forbidden code, the public name the verdict must give)
LIBRARY_ANSWERS = {
    "check_alibi_slopes": (pe.alibi_slopes, "posenc_lib.alibi_slopes"),
    "check_bucket_starts": (
        lambda num_buckets=32, max_distance=128, bidirectional=False, _b=pe.t5_relative_position_bucket: [
            int(_b(-torch.arange(4 * max_distance), num_buckets=num_buckets).eq(k).nonzero()[0])
            for k in range(num_buckets)
        ],
        "posenc_lib.t5_relative_position_bucket",
    ),
    "check_shift_matrix": (pe.shift_matrix, "posenc_lib.shift_matrix"),
    "check_table_symmetries": (
        symmetries.reference_symmetries,
        "posenc_lib.exercises.why_order_matters.reference_symmetries",
    ),
    "check_next_row": (
        lambda row, _m=pe.shift_matrix: _m(1, len(row)).numpy() @ row,
        "posenc_lib.shift_matrix",
    ),
    "check_offset_scores": (offset_scores_with_library_frequencies, "posenc_lib.rope_frequencies"),
    "check_offset_scores_interleaved": (
        lambda q, k, r, base=10000.0, _rope=pe.apply_rope: (
            q[..., None, :]
            * _rope(k[..., None, :].expand(*k.shape[:-1], len(r), k.shape[-1]), r, base=base, layout="interleaved")
        ).sum(-1),
        "posenc_lib.apply_rope",
    ),
    "check_ntk_frequencies": (
        lambda d, s, base=10000.0, _ntk=pe.ntk_aware_frequencies, _f=pe.rope_frequencies: _ntk(_f(d, base), s),
        "posenc_lib.rope_frequencies",
    ),
    "check_llama3_groups": (llama3_groups_via_library, "posenc_lib.llama3_frequencies"),
    "check_interpolate": (interpolate_via_library, "posenc_lib.linear_scaling_frequencies"),
    "check_updates_per_row": (updates_via_a_bound_method, "posenc_lib.LearnedPositionalEmbedding"),
    "check_add_positions": (
        lambda w, d, first=0, _add=BUILT_BEFORE["sinusoidal"].forward: _add(
            torch.nn.functional.pad(pe.embed_words(w, d), (0, 16 - d)), offset=first
        )[:, :d],
        "posenc_lib.SinusoidalPositionalEncoding",
    ),
}


def wrapped_forms(answer):
    """The answer itself and four ways of wrapping it; none names the library at call time."""
    alias = answer

    @functools.wraps(answer)
    def wraps_wrapper(*args, **kwargs):
        return alias(*args, **kwargs)

    class CallableObject:
        def __call__(self, *args, **kwargs):
            return alias(*args, **kwargs)

    return {
        "itself": answer,
        "partial": functools.partial(answer),
        "lambda": lambda *args, **kwargs: alias(*args, **kwargs),
        "functools.wraps": wraps_wrapper,
        "callable object": CallableObject(),
    }


class Recorded(Exception):
    pass


def forbidden_of(checker_name: str) -> tuple:
    """The ``forbidden=`` a checker passes to check_function (its check_function is swapped for a recorder)."""
    checker = getattr(ex, checker_name)
    module = sys.modules[checker.__module__]

    def record(*args, forbidden=(), **kwargs):
        raise Recorded(tuple(forbidden))

    original = vars(module)["check_function"]
    vars(module)["check_function"] = record
    try:
        checker(lambda *args, **kwargs: None)
    except Recorded as recorded:
        return recorded.args[0]
    finally:
        vars(module)["check_function"] = original
    raise AssertionError(f"{checker_name} did not call check_function")


CHECKERS = sorted(name for name in ex.__all__ if name.startswith("check_") and name != "check_function")


def test_every_checker_with_forbidden_code_is_tried_here():
    with_forbidden = {name for name in CHECKERS if forbidden_of(name)}
    assert with_forbidden == set(LIBRARY_ANSWERS), with_forbidden ^ set(LIBRARY_ANSWERS)


@pytest.mark.parametrize("form", ["itself", "partial", "lambda", "functools.wraps", "callable object"])
@pytest.mark.parametrize("checker", sorted(LIBRARY_ANSWERS))
def test_an_answer_that_is_or_wraps_the_library_gets_the_verdict_of_a_call(checker, form, capsys):
    answer, name = LIBRARY_ANSWERS[checker]
    result = getattr(ex, checker)(wrapped_forms(answer)[form])
    assert not result
    assert result.reason == "calls the library", result.message
    assert f"your answer calls {name}" in result.message, result.message
    capsys.readouterr()


def test_the_library_works_again_after_the_check():
    ex.check_alibi_slopes(pe.alibi_slopes)
    torch.testing.assert_close(
        pe.alibi_slopes(4), torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8], dtype=torch.float64)
    )
    ex.check_updates_per_row(updates_via_a_bound_method)
    module = BUILT_BEFORE["learned"]
    assert torch.equal(module(torch.zeros(1, 2, 4)), module.weight[:2][None])

"""Chapter 8's checkers (NTK-aware frequencies; Llama 3.1's frequency groups) fail on the stub and on typical
wrong answers (with the matching hint), and pass on right answers written from scratch in either precision."""

import math

import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_llama3_groups, check_ntk_frequencies
from posenc_lib.exercises.long_context import LLAMA3_HINT, NTK_HINT


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- NTK-aware frequencies: right answers, without posenc_lib -----------------------------------


def ntk_float64(head_dim, factor, base=10000.0):
    new_base = base * factor ** (head_dim / (head_dim - 2))
    return new_base ** (-2.0 * torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)


def ntk_float32_hf_style(head_dim, factor, base=10000.0):
    new_base = base * factor ** (head_dim / (head_dim - 2))
    return 1.0 / (new_base ** (torch.arange(0, head_dim, 2).float() / head_dim))


def ntk_per_pair(head_dim, factor, base=10000.0):
    """The same thing written as a per-pair slow-down: theta_k * factor^(-2k/(d-2))."""
    k = torch.arange(head_dim // 2, dtype=torch.float64)
    return base ** (-2 * k / head_dim) * factor ** (-2 * k / (head_dim - 2))


def test_ntk_passes_on_right_answers(capsys):
    assert check_ntk_frequencies(ntk_float64)
    assert check_ntk_frequencies(ntk_float32_hf_style)
    assert check_ntk_frequencies(ntk_per_pair)
    assert "PASS" in capsys.readouterr().out


def make_ntk(new_base):
    def fn(head_dim, factor, base=10000.0):
        return new_base(base, head_dim, factor) ** (-2.0 * torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)

    return fn


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lambda d, s, base=10000.0: ntk_float64(d, 1.0, base) / s, "position interpolation"),
        (make_ntk(lambda b, d, s: b * s), "multiplied the base by the factor"),
        (make_ntk(lambda b, d, s: b * s ** ((d - 2) / d)), "upside down"),
        (lambda d, s, base=10000.0: ntk_float64(d, s, 10000.0), "base argument is ignored"),
        (lambda d, s, base=10000.0: ntk_float64(d, 1.0, base), "factor has no effect"),
        (make_ntk(lambda b, d, s: b * s**2), "right form b'^(-2k/d), but with b' = 40000"),
        (lambda d, s, base=10000.0: ntk_float64(d, s, base) ** 0.5, "b'^(-k/d)"),
        (lambda d, s, base=10000.0: ntk_float64(d, s, base)[:-1], "the shape is"),
        (lambda d, s, base=10000.0: float(base * s ** (d / (d - 2))), "a single number"),
    ],
    ids=[
        "pi",
        "no-exponent",
        "inverted-exponent",
        "base-ignored",
        "factor-ignored",
        "other-base",
        "square-root",
        "one-short",
        "returns-the-base",
    ],
)
def test_ntk_fails_on_wrong_answers_with_the_right_hint(wrong, hint, capsys):
    result = check_ntk_frequencies(wrong)
    assert not result and result.hint != NTK_HINT
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize(
    "call",
    [
        lambda d, s, base: pe.ntk_aware_frequencies(ntk_float64(d, 1.0, base), s),
        lambda d, s, base: pe.rope_frequencies(d, pe.ntk_aware_base(base, d, s)),
        lambda d, s, base: ntk_float64(d, 1.0, pe.ntk_aware_base(base, d, s)),
    ],
    ids=["ntk_aware_frequencies", "rope_frequencies", "ntk_aware_base"],
)
def test_ntk_fails_an_answer_that_calls_the_library(call, capsys):
    result = check_ntk_frequencies(lambda d, s, base=10000.0: call(d, s, base))
    assert not result and result.reason == "calls the library"


# --- Llama 3.1's frequency groups ------------------------------------------------------------------


def llama3_groups(frequencies, original_len, *, turns_per=2 * math.pi, strict=True, order=(0, 1, 2)):
    turns = original_len * frequencies / turns_per
    unchanged = int((turns > 4).sum()) if strict else int((turns >= 4).sum())
    divided = int((turns < 1).sum()) if strict else int((turns <= 1).sum())
    counts = (unchanged, len(frequencies) - unchanged - divided, divided)
    return tuple(counts[i] for i in order)


def llama3_groups_by_wavelength(frequencies, original_len):
    """The rule as Meta's code states it, in float32: wavelength < L/4 unchanged, wavelength > L divided."""
    wavelength = 2 * math.pi / frequencies.float()
    unchanged, divided = (wavelength < original_len / 4).sum(), (wavelength > original_len).sum()
    return torch.stack([unchanged, len(frequencies) - unchanged - divided, divided])


def test_llama3_passes_on_right_answers(capsys):
    assert check_llama3_groups(llama3_groups)
    assert check_llama3_groups(llama3_groups_by_wavelength)  # a tensor, float32 wavelengths
    assert check_llama3_groups(lambda f, n: list(llama3_groups(f, n)))


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lambda f, n: llama3_groups(f, n, order=(2, 1, 0)), "your order is"),
        (lambda f, n: llama3_groups(f, n, turns_per=1.0), "not L * theta"),
        (lambda f, n: llama3_groups(f, n, turns_per=math.pi), "not pi"),
        (lambda f, n: llama3_groups(f, n, strict=False), "exactly 4 turns"),
        (lambda f, n: llama3_groups(f, n)[:2], "the shape is"),
    ],
    ids=["order", "no-2pi", "pi", "boundaries", "two-counts"],
)
def test_llama3_fails_on_wrong_answers_with_the_right_hint(wrong, hint, capsys):
    result = check_llama3_groups(wrong)
    assert not result and result.hint != LLAMA3_HINT
    assert hint in capsys.readouterr().out


def test_llama3_fails_an_answer_that_calls_the_library():
    def via_library(frequencies, original_len):
        new = pe.llama3_frequencies(frequencies, original_max_len=original_len)
        unchanged = int((new == frequencies).sum())
        divided = int(torch.isclose(new, frequencies / 8, rtol=1e-12, atol=0).sum())
        return unchanged, len(frequencies) - unchanged - divided, divided

    result = check_llama3_groups(via_library)
    assert not result and result.reason == "calls the library"


def test_the_stubs_and_a_non_function_fail(capsys):
    for checker in (check_ntk_frequencies, check_llama3_groups):
        assert not checker(stub)
        assert "not implemented" in capsys.readouterr().out
    assert not check_ntk_frequencies(None)

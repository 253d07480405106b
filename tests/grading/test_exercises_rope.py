"""Chapter 5's checkers (every offset's score from the complex form, in the half-split and interleaved layouts) fail
on the stub and on typical wrong answers (with the matching hint), and pass right answers written several ways."""

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_offset_scores, check_offset_scores_interleaved
from posenc_lib.exercises.rope import HALF_HINT, INTERLEAVED_HINT

# --- right answers, written from scratch (no posenc_lib) -----------------------------------------


def scores_complex(q, k, offsets, base=10000.0, *, layout="half", sign=-1.0, part="real", k_layout=None):
    """The complex form, Re sum_l h_l exp(-i r theta_l); the keywords make the typical wrong answers."""

    def pairs(x, how):
        d = x.shape[-1]
        x = x.double()
        if how == "half":
            return torch.complex(x[..., : d // 2], x[..., d // 2 :])
        return torch.complex(x[..., 0::2], x[..., 1::2])

    d = q.shape[-1]
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    h = pairs(q, layout) * pairs(k, k_layout or layout).conj()  # (..., d/2)
    phases = torch.polar(torch.ones_like(theta), sign * offsets.double()[:, None] * theta)  # (n, d/2)
    total = (h[..., None, :] * phases).sum(dim=-1)
    return {"real": total.real, "imag": total.imag, "abs": total.abs(), "complex": total}[part]


def scores_real_form(q, k, offsets, base=10000.0):
    """A right answer without complex numbers, in NumPy: sum_l |h_l| cos(arg h_l - r theta_l) by its real parts."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    d = q.shape[-1]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    qa, qb, ka, kb = q[..., : d // 2], q[..., d // 2 :], k[..., : d // 2], k[..., d // 2 :]
    dot, cross = qa * ka + qb * kb, qb * ka - qa * kb  # Re h_l, Im h_l
    angles = np.asarray(offsets, dtype=np.float64)[:, None] * theta  # (n, d/2)
    return dot @ np.cos(angles).T + cross @ np.sin(angles).T


def scores_float32(q, k, offsets, base=10000.0):
    """A right answer computed the way many students will: complex64, float32 angles."""
    d = q.shape[-1]
    h = torch.complex(q[..., : d // 2], q[..., d // 2 :]) * torch.complex(k[..., : d // 2], k[..., d // 2 :]).conj()
    theta = 1.0 / base ** (torch.arange(0, d, 2).float() / d)
    phases = torch.exp(-1j * offsets.float()[:, None] * theta)
    return (h.to(torch.complex64)[..., None, :] * phases).sum(-1).real


def scores_by_rotation(q, k, offsets, base=10000.0):
    """A right answer that rotates after all (by hand): the key turned by r against the query at 0."""
    d = q.shape[-1]
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    angles = offsets.double()[:, None] * theta  # (n, d/2)
    k1, k2 = k.double()[..., None, : d // 2], k.double()[..., None, d // 2 :]  # (..., 1, d/2)
    turned = torch.cat([k1 * angles.cos() - k2 * angles.sin(), k2 * angles.cos() + k1 * angles.sin()], -1)
    return (q.double()[..., None, :] * turned).sum(-1)


def interleaved(half_answer, *, only_q=False):
    def fn(q, k, offsets, base=10000.0):
        d = q.shape[-1]
        to_half = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
        return half_answer(q[..., to_half], k if only_q else k[..., to_half], offsets, base)

    return fn


def stub(*args, **kwargs):
    raise NotImplementedError()


def test_offset_scores_pass_on_right_answers(capsys):
    for answer in (scores_complex, scores_real_form, scores_float32, scores_by_rotation):
        assert check_offset_scores(answer), answer.__name__
    assert "PASS" in capsys.readouterr().out


def test_offset_scores_interleaved_pass_on_right_answers():
    assert check_offset_scores_interleaved(interleaved(scores_complex))
    assert check_offset_scores_interleaved(lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, layout="x"))


def test_the_reference_is_the_score_of_rotated_vectors():
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 3, 16, generator=gen, dtype=torch.float64)
    offsets = torch.tensor([-9, 0, 5, 300])
    for layout in ("half", "interleaved"):
        q_at_7 = pe.apply_rope(q[:, None], torch.tensor([7]), layout=layout)[:, 0]  # (3, d_h)
        rotated = torch.stack(
            [(q_at_7 * pe.apply_rope(k[:, None], torch.tensor([7 + r]), layout=layout)[:, 0]).sum(-1) for r in offsets],
            dim=-1,
        )
        torch.testing.assert_close(scores_complex(q, k, offsets, layout=layout), rotated)


def test_stubs_fail_with_not_implemented(capsys):
    for checker in (check_offset_scores, check_offset_scores_interleaved):
        result = checker(stub)
        assert not result
        assert "not implemented" in capsys.readouterr().out


def test_a_non_function_fails():
    assert not check_offset_scores(None)


def with_base_ignored(q, k, offsets, base=10000.0):
    return scores_complex(q, k, offsets, 10000.0)


def with_k_over_d(q, k, offsets, base=10000.0):
    return scores_complex(q, k, offsets, base**0.5 if q.shape[-1] > 2 else base * 1.5)


HALF_WRONG = {
    "wrong-layout": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, layout="x"), "interleaved layout"),
    "plus-phase": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, sign=1.0), "offset -r"),
    "k-over-d": (with_k_over_d, "base^(-l/d)"),
    "base-ignored": (with_base_ignored, "base argument is ignored"),
    "offsets-ignored": (lambda q, k, r, base=10000.0: scores_complex(q, k, torch.zeros_like(r), base), "r = 0"),
    "modulus": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, part="abs"), "modulus"),
    "imaginary": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, part="imag"), "imaginary part"),
    "complex": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, part="complex"), "result is complex"),
    "sqrt-d": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base) / q.shape[-1] ** 0.5, "sqrt(d_h)"),
    "per-pair": (lambda q, k, r, base=10000.0: scores_complex(q, k, r, base)[..., None], "the shape is"),
}


@pytest.mark.parametrize("name", HALF_WRONG)
def test_offset_scores_fail_on_wrong_answers_with_the_right_hint(name, capsys):
    wrong, hint = HALF_WRONG[name]
    result = check_offset_scores(wrong)
    assert not result and result.hint != HALF_HINT
    assert hint in capsys.readouterr().out


INTERLEAVED_WRONG = {
    "wrong-layout": (scores_complex, "half-split layout"),
    "only-q-reordered": (interleaved(scores_complex, only_q=True), "reordered q but not k"),
    "plus-phase": (interleaved(lambda q, k, r, base=10000.0: scores_complex(q, k, r, base, sign=1.0)), "offset -r"),
    "base-ignored": (interleaved(with_base_ignored), "base argument is ignored"),
}


@pytest.mark.parametrize("name", INTERLEAVED_WRONG)
def test_offset_scores_interleaved_fail_on_wrong_answers_with_the_right_hint(name, capsys):
    wrong, hint = INTERLEAVED_WRONG[name]
    result = check_offset_scores_interleaved(wrong)
    assert not result and result.hint != INTERLEAVED_HINT
    assert hint in capsys.readouterr().out


def by_library(q, k, offsets, base, layout, how):
    if how == "apply_rope":
        turned = pe.apply_rope(
            k[..., None, :].expand(*k.shape[:-1], len(offsets), k.shape[-1]), offsets, base=base, layout=layout
        )
        return (q[..., None, :] * turned).sum(-1)
    if how == "RotaryEmbedding":
        turned = pe.RotaryEmbedding(k.shape[-1], base=base, layout=layout)(
            k[..., None, :].expand(*k.shape[:-1], len(offsets), k.shape[-1]), offsets
        )
        return (q[..., None, :] * turned).sum(-1)
    theta = pe.rope_frequencies(q.shape[-1], base)  # frequencies only
    return scores_complex(q, k, offsets, base, layout=layout) * (theta[0] / theta[0])


@pytest.mark.parametrize("checker, layout", [(check_offset_scores, "half"), (check_offset_scores_interleaved, "x")])
@pytest.mark.parametrize("how", ["apply_rope", "RotaryEmbedding", "rope_frequencies"])
def test_checkers_fail_an_answer_that_calls_the_library(checker, layout, how, capsys):
    library_layout = "half" if layout == "half" else "interleaved"
    result = checker(
        lambda q, k, r, base=10000.0: by_library(
            q, k, r, base, library_layout if how != "rope_frequencies" else layout, how
        )
    )
    assert not result and result.reason == "calls the library"
    assert "switched off" in capsys.readouterr().out


def test_the_interleaved_checker_refuses_the_library_permutation(capsys):
    def via_permutation(q, k, offsets, base=10000.0):
        order = pe.interleaved_to_half_permutation(q.shape[-1])
        return scores_complex(q[..., order], k[..., order], offsets, base)

    result = check_offset_scores_interleaved(via_permutation)
    assert not result and "interleaved_to_half_permutation" in capsys.readouterr().out


def test_an_instance_made_before_the_check_is_switched_off_too():
    rotary = pe.RotaryEmbedding(8)  # made outside the student's function, used inside it

    def answer(q, k, offsets, base=10000.0):
        return (q[..., None, :] * rotary(k[..., None, :].expand(*k.shape[:-1], len(offsets), 8), offsets)).sum(-1)

    result = check_offset_scores(answer)
    assert not result and result.reason == "calls the library"
    assert torch.allclose(rotary(torch.ones(1, 2, 8), torch.arange(2)), pe.apply_rope(torch.ones(1, 2, 8)))  # restored


def test_the_checker_reports_a_crash_instead_of_raising(capsys):
    def crashes(q, k, offsets, base=10000.0):
        return q @ torch.ones(3, 3)

    assert not check_offset_scores(crashes)
    assert "raised" in capsys.readouterr().out


def test_reordering_k_alone_gets_the_same_hint(capsys):
    def only_k(q, k, offsets, base=10000.0):
        d = q.shape[-1]
        to_half = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
        return scores_complex(q, k[..., to_half], offsets, base)

    assert not check_offset_scores_interleaved(only_k)
    assert "reordered q but not k" in capsys.readouterr().out

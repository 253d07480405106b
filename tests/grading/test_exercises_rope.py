"""Chapter 5's checkers (RoPE in the half-split and interleaved layouts) fail on the stub and on typical wrong
answers (with the matching hint), and pass on right answers written from scratch."""

import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_rope_half, check_rope_interleaved
from posenc_lib.exercises.rope import HALF_HINT, INTERLEAVED_HINT

# --- right answers, written from scratch (no posenc_lib) -----------------------------------------


def rope_half(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)  # (d/2,)
    angles = positions.double()[:, None] * theta  # (s, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def rope_interleaved(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)
    angles = positions.double()[:, None] * theta
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)


def rope_half_float32_angles(x, positions, base=10000.0):
    """A right answer computed the way many students will: everything in float32."""
    d = x.shape[-1]
    theta = 1.0 / base ** (torch.arange(0, d, 2).float() / d)
    angles = positions.float()[:, None] * theta
    emb = torch.cat([angles, angles], dim=-1)  # (s, d)
    x1, x2 = x.chunk(2, dim=-1)
    return x * emb.cos() + torch.cat([-x2, x1], dim=-1) * emb.sin()


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- typical wrong answers ---------------------------------------------------------------------


def make_half(
    sign=1.0, freq_factor=2.0, use_positions=True, use_base=True, position_dtype=None, angle_dtype=torch.float64
):
    def fn(x, positions, base=10000.0):
        d = x.shape[-1]
        b = base if use_base else 10000.0
        theta = b ** (-freq_factor * torch.arange(d // 2, dtype=angle_dtype) / d)
        pos = positions if use_positions else torch.arange(x.shape[-2])
        pos = pos.to(position_dtype) if position_dtype is not None else pos
        angles = sign * pos.to(angle_dtype)[:, None] * theta
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    return fn


def make_interleaved(**kwargs):
    half = make_half(**kwargs)

    def fn(x, positions, base=10000.0):
        d = x.shape[-1]
        to_half = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
        return half(x[..., to_half], positions, base)[..., torch.argsort(to_half)]

    return fn


def test_rope_half_passes_on_right_answers(capsys):
    assert check_rope_half(rope_half)
    assert check_rope_half(rope_half_float32_angles)
    assert "PASS" in capsys.readouterr().out


def test_rope_interleaved_passes_on_right_answers():
    assert check_rope_interleaved(rope_interleaved)
    assert check_rope_interleaved(make_interleaved())


def test_stubs_fail_with_not_implemented(capsys):
    for checker in (check_rope_half, check_rope_interleaved):
        result = checker(stub)
        assert not result
        assert "not implemented" in capsys.readouterr().out


def test_a_non_function_fails():
    assert not check_rope_half(None)


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (rope_interleaved, "interleaved layout"),
        (make_half(sign=-1.0), "-theta"),
        (make_half(freq_factor=1.0), "base^(-k/d)"),
        (make_half(use_positions=False), "ignored the positions"),
        (make_half(use_base=False), "base argument is ignored"),
        (lambda x, positions, base=10000.0: x, "returned x unchanged"),
        (make_half(position_dtype=torch.bfloat16), "went through bfloat16"),
        (make_half(position_dtype=torch.bfloat16, angle_dtype=torch.bfloat16), "16-bit float"),
        (make_half(angle_dtype=torch.float16), "16-bit float"),
        (lambda x, positions, base=10000.0: make_half()(x, positions, base)[..., :-1], "the shape is"),
    ],
    ids=[
        "wrong-layout",
        "minus-theta",
        "k-over-d",
        "positions-ignored",
        "base-ignored",
        "identity",
        "bf16-positions",
        "bf16-angles",
        "fp16-angles",
        "one-column-short",
    ],
)
def test_rope_half_fails_on_wrong_answers_with_the_right_hint(wrong, hint, capsys):
    result = check_rope_half(wrong)
    assert not result and result.hint != HALF_HINT
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (rope_half, "half-split layout"),
        (make_interleaved(sign=-1.0), "-theta"),
        (make_interleaved(freq_factor=1.0), "base^(-k/d)"),
        (make_interleaved(use_positions=False), "ignored the positions"),
        (make_interleaved(position_dtype=torch.bfloat16), "went through bfloat16"),
        (make_interleaved(use_base=False), "base argument is ignored"),
    ],
    ids=["wrong-layout", "minus-theta", "k-over-d", "positions-ignored", "bf16-positions", "base-ignored"],
)
def test_rope_interleaved_fails_on_wrong_answers_with_the_right_hint(wrong, hint, capsys):
    result = check_rope_interleaved(wrong)
    assert not result and result.hint != INTERLEAVED_HINT
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("checker, layout", [(check_rope_half, "half"), (check_rope_interleaved, "interleaved")])
@pytest.mark.parametrize(
    "call",
    [
        lambda x, p, base, layout: pe.apply_rope(x, p, base=base, layout=layout),
        lambda x, p, base, layout: pe.RotaryEmbedding(x.shape[-1], base=base, layout=layout)(x, p),
        lambda x, p, base, layout: pe.rotate_pairs(
            x, *(lambda a: (a.cos(), a.sin()))(pe.rope_angles(p, pe.rope_frequencies(x.shape[-1], base))), layout=layout
        ),
        lambda x, p, base, layout: (
            rope_half(x[..., pe.interleaved_to_half_permutation(x.shape[-1])], p, base)[
                ..., pe.half_to_interleaved_permutation(x.shape[-1])
            ]
            if layout == "interleaved"
            else rope_half(x, p, base) * pe.rope_frequencies(2)[0]
        ),
    ],
    ids=["apply_rope", "RotaryEmbedding", "rotate_pairs", "permutations-or-frequencies"],
)
def test_rope_checkers_fail_an_answer_that_calls_the_library(checker, layout, call, capsys):
    result = checker(lambda x, p, base=10000.0: call(x, p, base, layout))
    assert not result and result.reason == "calls the library"
    assert "switched off" in capsys.readouterr().out


def test_an_instance_made_before_the_check_is_switched_off_too():
    rotary = pe.RotaryEmbedding(8)  # made outside the student's function, used inside it
    result = check_rope_half(lambda x, p, base=10000.0: rotary(x, p))
    assert not result and result.reason == "calls the library"
    assert torch.allclose(rotary(torch.ones(1, 2, 8), torch.arange(2)), pe.apply_rope(torch.ones(1, 2, 8)))  # restored


def test_rope_checker_reports_a_crash_instead_of_raising(capsys):
    def crashes(x, positions, base=10000.0):
        return x @ torch.ones(3, 3)

    assert not check_rope_half(crashes)
    assert "raised" in capsys.readouterr().out

"""Chapter 7's checkers (T5's buckets; the buckets a short training never reaches) fail on the stub and on
typical wrong answers (with the matching hint), and pass on right answers written from scratch."""

import math

import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_t5_bucket, check_untrained_buckets


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- T5 buckets: right answers, without posenc_lib ---------------------------------------------


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128, *, dtype=torch.float32):
    out = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        out += (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = torch.clamp(-relative_position, min=0)
    exact = num_buckets // 2
    ratio = torch.log(distance.to(dtype).clamp(min=exact) / exact) / math.log(max_distance / exact)
    large = torch.clamp(exact + (ratio * (num_buckets - exact)).long(), max=num_buckets - 1)
    return out + torch.where(distance < exact, distance, large)


def t5_bucket_python(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """A plain-Python loop in float64 (math.log), the way one might write it first."""

    def one(r):
        n, offset = num_buckets, 0
        if bidirectional:
            n //= 2
            offset = n if r > 0 else 0
            r = abs(r)
        else:
            r = max(0, -r)
        exact = n // 2
        if r < exact:
            return offset + r
        return offset + min(n - 1, exact + int(math.log(r / exact) / math.log(max_distance / exact) * (n - exact)))

    flat = [one(int(r)) for r in relative_position.flatten()]
    return torch.tensor(flat).reshape(relative_position.shape)


def test_t5_passes_on_right_answers_in_float32_and_float64(capsys):
    assert check_t5_bucket(t5_bucket)
    assert check_t5_bucket(lambda *a, **k: t5_bucket(*a, **k, dtype=torch.float64))
    assert check_t5_bucket(t5_bucket_python)
    assert "PASS" in capsys.readouterr().out


def mirrored(relative_position, **kwargs):
    return t5_bucket(-relative_position, **kwargs)


def not_halved(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if bidirectional:
        distance = relative_position.abs()
        exact = num_buckets // 2
        ratio = torch.log(distance.float().clamp(min=exact) / exact) / math.log(max_distance / exact)
        large = torch.clamp(exact + (ratio * (num_buckets - exact)).long(), max=num_buckets - 1)
        return (relative_position > 0).long() * num_buckets + torch.where(distance < exact, distance, large)
    return t5_bucket(relative_position, bidirectional, num_buckets, max_distance)


def uncapped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    out = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        out += (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = torch.clamp(-relative_position, min=0)
    exact = num_buckets // 2
    ratio = torch.log(distance.float().clamp(min=exact) / exact) / math.log(max_distance / exact)
    return out + torch.where(distance < exact, distance, exact + (ratio * (num_buckets - exact)).long())


def causal_abs(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if not bidirectional:
        return t5_bucket(-relative_position.abs(), False, num_buckets, max_distance)
    return t5_bucket(relative_position, True, num_buckets, max_distance)


def rounded(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """round() instead of truncation for the logarithmic buckets."""
    out = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        out += (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = torch.clamp(-relative_position, min=0)
    exact = num_buckets // 2
    ratio = torch.log(distance.float().clamp(min=exact) / exact) / math.log(max_distance / exact)
    large = torch.clamp(exact + (ratio * (num_buckets - exact)).round().long(), max=num_buckets - 1)
    return out + torch.where(distance < exact, distance, large)


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (mirrored, "mirrored"),
        (not_halved, "only half of the buckets"),
        (uncapped, "share the last bucket"),
        (causal_abs, "only the past counts"),
        (rounded, "you rounded"),
        (
            lambda r, bidirectional=True, num_buckets=32, max_distance=128: r.abs().clamp(max=num_buckets - 1),
            "same for relative positions r and -r",
        ),
    ],
    ids=["mirrored", "not-halved", "uncapped", "causal-abs", "rounded", "clipped-distance"],
)
def test_t5_fails_on_wrong_answers_with_the_right_hint(wrong, hint, capsys):
    result = check_t5_bucket(wrong)
    assert not result and not result.hint.startswith("bidirectional: use half")
    assert hint in capsys.readouterr().out


def test_t5_fails_an_answer_that_calls_the_library(capsys):
    assert not check_t5_bucket(lambda r, **kw: pe.t5_relative_position_bucket(r, **kw))
    module = pe.T5RelativeBias(1)
    result = check_t5_bucket(lambda r, **kw: module.buckets(1, 1) + pe.relative_positions(1)[0, 0] + r * 0)
    assert not result and result.reason == "calls the library"


def test_stubs_fail_with_not_implemented(capsys):
    assert not check_t5_bucket(stub)
    assert "not implemented" in capsys.readouterr().out


def test_crash_and_non_function(capsys):
    assert not check_t5_bucket(lambda r, **kw: r.float().log2().long().numpy().foo)
    assert "raised" in capsys.readouterr().out
    assert not check_t5_bucket(None)


# --- T5 buckets a short training never reaches (chapter 7) ------------------------------------


def untrained_torch(train_len, num_buckets=32, max_distance=128):
    """The notebook's solution."""
    seen = pe.t5_relative_position_bucket(
        -torch.arange(train_len), bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
    )
    return sorted(set(range(num_buckets)) - set(seen.tolist()))


def untrained_from_the_formula(train_len, num_buckets=32, max_distance=128):
    """Written another way: the buckets of the distances past train_len - 1 that no shorter distance shares."""
    half = num_buckets // 2

    def bucket(t):
        if t < half:
            return t
        return min(num_buckets - 1, half + int(math.log(t / half) / math.log(max_distance / half) * half))

    seen = {bucket(t) for t in range(train_len)}
    return [b for b in range(num_buckets) if b not in seen]


def test_untrained_buckets_passes_on_right_answers():
    assert check_untrained_buckets(untrained_torch)
    assert check_untrained_buckets(untrained_from_the_formula)
    assert check_untrained_buckets(lambda *a, **kw: tuple(untrained_torch(*a, **kw)))  # a tuple is a list too


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lambda n, num_buckets=32, max_distance=128: untrained_torch(n + 1, num_buckets, max_distance), "off by one"),
        (
            lambda n, num_buckets=32, max_distance=128: sorted(
                set(range(num_buckets // 2))
                - set(
                    pe.t5_relative_position_bucket(
                        -torch.arange(n), num_buckets=num_buckets, max_distance=max_distance
                    ).tolist()
                )
            ),
            "causal (bidirectional=False)",
        ),
        (
            lambda n, num_buckets=32, max_distance=128: sorted(
                set(range(num_buckets))
                - set(
                    pe.t5_relative_position_bucket(
                        -torch.arange(1, n), bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
                    ).tolist()
                )
            ),
            "distance 0",
        ),
    ],
)
def test_untrained_buckets_fails_typical_wrong_answers_with_their_hint(wrong, hint):
    result = check_untrained_buckets(wrong)
    assert not result and hint in result.hint, result.hint  # the specific hint, not the general one


def test_untrained_buckets_fails_the_stub():
    assert not check_untrained_buckets(stub)

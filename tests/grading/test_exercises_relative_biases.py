"""Chapter 7's checkers (where T5's buckets start; the buckets a short training never reaches) fail on the stub and on
typical wrong answers (with the matching hint), and pass on right answers written from scratch."""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_bucket_starts, check_untrained_buckets


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- where each T5 bucket starts ----------------------------------------------------------------


def starts_by_inversion(num_buckets=32, max_distance=128, bidirectional=False, *, dtype=float):
    """The notebook's solution: the inverted rule, ceiling, None where two starts coincide."""
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2
    starts = list(range(exact))
    for k in range(exact, n):
        starts.append(
            math.ceil(dtype(exact) * (dtype(max_distance) / dtype(exact)) ** dtype((k - exact) / (n - exact)))
        )
    return [t if k == n - 1 or t < starts[k + 1] else None for k, t in enumerate(starts)]


def starts_by_scanning(num_buckets=32, max_distance=128, bidirectional=False):
    """Written another way: T5's rule written out in Python, scanned over distances."""
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2

    def bucket(t):
        if t < exact:
            return t
        return min(n - 1, exact + int(math.log(t / exact) / math.log(max_distance / exact) * (n - exact)))

    first = {}
    for t in range(4 * max_distance):
        first.setdefault(bucket(t), t)
    return [first.get(k) for k in range(n)]


@pytest.mark.parametrize(
    "answer",
    [starts_by_inversion, lambda **kw: starts_by_inversion(**kw, dtype=np.float32), starts_by_scanning],
    ids=["inverted", "inverted-float32", "scanned"],
)
def test_bucket_starts_passes_right_answers(answer):
    assert check_bucket_starts(answer)


def test_the_reference_is_the_library_rule():
    """The checker's reference: the first distance of each causal bucket of T5 with 32 buckets, max 128."""
    starts = starts_by_scanning()
    assert starts[:17] == list(range(17)) and starts[-1] == 113  # the chapter's "from 113 on"
    assert starts_by_scanning(32, 32)[20] is None


def no_empty(num_buckets=32, max_distance=128, bidirectional=False):
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2
    return list(range(exact)) + [
        math.ceil(exact * (max_distance / exact) ** ((k - exact) / (n - exact))) for k in range(exact, n)
    ]


def floored(num_buckets=32, max_distance=128, bidirectional=False):
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2
    starts = list(range(exact)) + [
        int(exact * (max_distance / exact) ** ((k - exact) / (n - exact))) for k in range(exact, n)
    ]
    return [t if k == n - 1 or t != starts[k + 1] else None for k, t in enumerate(starts)]


def not_halved(num_buckets=32, max_distance=128, bidirectional=False):
    return starts_by_scanning(num_buckets * 2 if bidirectional else num_buckets, max_distance, bidirectional)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (no_empty, "holds no distance at all"),
        (floored, "you rounded down"),
        (not_halved, "each direction has num_buckets // 2"),
        (lambda **kw: list(range(kw["num_buckets"] // (2 if kw["bidirectional"] else 1))), "bucket k < m starts at k"),
    ],
    ids=["no-None", "floor", "not-halved", "all-exact"],
)
def test_bucket_starts_fails_wrong_answers_with_their_hint(wrong, hint, capsys):
    assert not check_bucket_starts(wrong)
    assert hint in capsys.readouterr().out


def test_bucket_starts_fails_an_answer_that_calls_the_library(capsys):
    def scan_the_library(num_buckets=32, max_distance=128, bidirectional=False):
        t = torch.arange(4 * max_distance)
        bucket = pe.t5_relative_position_bucket(
            -t, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        n = num_buckets // 2 if bidirectional else num_buckets
        return [int(t[bucket == k][0]) if (bucket == k).any() else None for k in range(n)]

    result = check_bucket_starts(scan_the_library)
    assert not result and result.reason == "calls the library"
    assert "posenc_lib.t5_relative_position_bucket" in capsys.readouterr().out


def test_stubs_fail_with_not_implemented(capsys):
    assert not check_bucket_starts(stub)
    assert "not implemented" in capsys.readouterr().out


def test_crash_and_non_function(capsys):
    assert not check_bucket_starts(lambda **kw: [None] * "x")
    assert "raised" in capsys.readouterr().out
    assert not check_bucket_starts(None)


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

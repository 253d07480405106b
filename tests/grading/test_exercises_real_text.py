"""The checker of chapter 13's exercise: the key set of the two-cause window test.

It fails a stub, a non-function and each typical wrong answer (with its own hint) and passes the solution
and a right answer written another way (NumPy)."""

import numpy as np
import torch

from _helpers import checker_contract
from posenc_lib.exercises import check_key_set_mask


def key_set_mask_solution(seq_len, n_keys, stride):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    d = i - j
    allowed = (d >= 0) & (d % stride == 0) & (d < stride * n_keys)
    return torch.zeros(seq_len, seq_len).masked_fill(~allowed, float("-inf"))


def key_set_mask_numpy(seq_len, n_keys, stride):
    out = np.full((seq_len, seq_len), -np.inf)
    for i in range(seq_len):
        for r in range(n_keys):
            if i - stride * r >= 0:
                out[i, i - stride * r] = 0.0
    return out


def one_key_too_many(seq_len, n_keys, stride):
    return key_set_mask_solution(seq_len, n_keys + 1, stride)


def future_keys_too(seq_len, n_keys, stride):
    mask = key_set_mask_solution(seq_len, n_keys, stride)
    return torch.maximum(mask, mask.T)


def stride_on_the_key_index(seq_len, n_keys, stride):
    mask = key_set_mask_solution(seq_len, n_keys * stride, 1)
    mask[:, torch.arange(seq_len) % stride != 0] = float("-inf")
    return mask


def boolean_mask(seq_len, n_keys, stride):
    return key_set_mask_solution(seq_len, n_keys, stride) == 0


WRONG_ANSWERS = [
    (one_key_too_many, "off by one"),
    (future_keys_too, "keys after the query"),
    (stride_on_the_key_index, "not to the key's index"),
    (boolean_mask, "not a boolean mask"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_key_set_mask, key_set_mask_solution, WRONG_ANSWERS
)


def test_right_answers_in_other_forms_pass():
    assert check_key_set_mask(key_set_mask_numpy)

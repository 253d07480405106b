"""The checker of chapter 1's checker: is a layer permutation-equivariant?

It fails a stub, a non-function and each typical wrong answer (with its own hint) and passes the solution."""

import torch

from _helpers import checker_contract
from posenc_lib.exercises import check_is_equivariant


def equivariant_solution(layer, x, n_trials=10, seed=0):
    generator = torch.Generator().manual_seed(seed)
    out = layer(x)
    for _ in range(n_trials):
        perm = torch.randperm(x.shape[0], generator=generator)
        if not torch.allclose(layer(x[perm]), out[perm], atol=1e-5, rtol=1e-5):
            return False
    return True


def equivariant_tests_invariance(layer, x):
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(1))
    return torch.allclose(layer(x[perm]), layer(x), atol=1e-5)


def equivariant_reversal_only(layer, x):
    return torch.allclose(layer(x.flip(0)), layer(x).flip(0), atol=1e-5)


def equivariant_inverse_perm(layer, x):
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(2))
    return torch.allclose(layer(x[perm]), layer(x)[torch.argsort(perm)], atol=1e-5)


def equivariant_no_permutation(layer, x):
    return torch.allclose(layer(x), layer(x))


def equivariant_returns_tensor(layer, x):
    """Right idea, but returns a float tensor instead of a bool."""
    return torch.tensor(float(equivariant_solution(layer, x)))


def equivariant_swaps_first_two(layer, x):
    perm = torch.arange(x.shape[0])
    perm[:2] = torch.tensor([1, 0])
    return torch.allclose(layer(x[perm]), layer(x)[perm], atol=1e-5)


def equivariant_always_false(layer, x):
    return False


WRONG_ANSWERS = [
    (equivariant_tests_invariance, "tested invariance"),
    (equivariant_reversal_only, "the reversal"),
    (equivariant_inverse_perm, "inverse permutation"),
    (equivariant_no_permutation, "True for every layer"),
    (equivariant_returns_tensor, "return a bool"),
    (equivariant_swaps_first_two, "swapping only tokens 0 and 1"),
    (equivariant_always_false, "False for every layer"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_is_equivariant, equivariant_solution, WRONG_ANSWERS
)


def test_a_constant_false_is_not_told_it_tested_invariance():
    result = check_is_equivariant(lambda layer, x: False)
    assert not result and "invariance" not in result.message


def test_equivariance_checker_names_the_invariance_mistake(capsys):
    check_is_equivariant(equivariant_tests_invariance)
    assert "invariance" in capsys.readouterr().out

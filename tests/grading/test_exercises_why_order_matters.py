"""The checker of chapter 1's exercise: which reorderings does a position table leave unchanged?

It fails a stub, a non-function and each typical wrong answer (with its own hint, not the general one), and
an answer that imports the checker's reference; it passes the notebook's solution and right answers written
another way (classes multiplied out, NumPy, a tensor of orderings, the inverse convention)."""

import itertools

import numpy as np
import torch

from _helpers import checker_contract
from posenc_lib.exercises import check_table_symmetries
from posenc_lib.exercises.why_order_matters import SYMMETRY_HINT, reference_symmetries


def symmetries_solution(table):
    """The notebook's solution: label each position by its first equal row, keep the orderings that respect labels."""
    s = table.shape[0]
    gap = (table[:, None] - table[None]).abs().amax(dim=-1)
    label = [int((gap[p] <= 1e-6).nonzero()[0]) for p in range(s)]
    return [perm for perm in itertools.permutations(range(s)) if all(label[perm[p]] == label[p] for p in range(s))]


def symmetries_by_classes_numpy(table):
    """Another right answer: classes of equal rows in NumPy, the product of the permutations inside each class."""
    rows = np.asarray(table, dtype=np.float64)
    classes = []
    for p in range(len(rows)):
        for members in classes:
            if np.abs(rows[p] - rows[members[0]]).max() < 1e-6:
                members.append(p)
                break
        else:
            classes.append([p])
    result = []
    for shuffles in itertools.product(*(itertools.permutations(m) for m in classes)):
        perm = np.empty(len(rows), dtype=np.int64)
        for members, shuffled in zip(classes, shuffles):
            perm[members] = shuffled
        result.append(perm)  # a list of NumPy int arrays
    return result[::-1]  # any order


def symmetries_as_tensor_inverse(table):
    """Another right answer: P T = T written with the inverse convention (table == table[argsort]), as a tensor."""
    found = [
        torch.argsort(torch.tensor(perm))
        for perm in itertools.permutations(range(table.shape[0]))
        if torch.allclose(table[torch.argsort(torch.tensor(perm))], table, rtol=0, atol=1e-6)
    ]
    return torch.stack(found)  # (k, s) integer tensor


def symmetries_identity_only(table):
    return [tuple(range(table.shape[0]))]


def symmetries_every_ordering(table):
    return list(itertools.permutations(range(table.shape[0])))


def symmetries_exact_equality(table):
    return [p for p in itertools.permutations(range(table.shape[0])) if torch.equal(table[list(p)], table)]


def symmetries_default_allclose(table):
    return [p for p in itertools.permutations(range(table.shape[0])) if torch.allclose(table[list(p)], table)]


def symmetries_two_decimals(table):
    rounded = torch.round(table * 100) / 100
    return [p for p in itertools.permutations(range(table.shape[0])) if torch.equal(rounded[list(p)], rounded)]


def symmetries_single_swaps(table):
    s = table.shape[0]
    out = [tuple(range(s))]
    for i, j in itertools.combinations(range(s), 2):
        if torch.allclose(table[i], table[j], rtol=0, atol=1e-6):
            perm = list(range(s))
            perm[i], perm[j] = j, i
            out.append(tuple(perm))
    return out


def symmetries_without_identity(table):
    return [p for p in symmetries_solution(table) if p != tuple(range(table.shape[0]))]


def symmetries_repeated(table):
    return symmetries_solution(table) * 2


def symmetries_as_a_count(table):
    return len(symmetries_solution(table))


WRONG_ANSWERS = [
    (symmetries_identity_only, "only the identity"),
    (symmetries_every_ordering, "every ordering whatever the table"),
    (symmetries_exact_equality, "exact equality"),
    (symmetries_default_allclose, "default tolerances"),
    (symmetries_two_decimals, "too loose"),
    (symmetries_single_swaps, "not their combinations"),
    (symmetries_without_identity, "include it"),
    (symmetries_repeated, "more than once"),
    (symmetries_as_a_count, "return a list of orderings"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_table_symmetries, symmetries_solution, WRONG_ANSWERS
)


def test_wrong_answers_get_a_specific_hint_not_the_general_one():
    for wrong, _ in WRONG_ANSWERS:
        result = check_table_symmetries(wrong)
        assert result.hint and result.hint != SYMMETRY_HINT, wrong.__name__


def test_right_answers_written_another_way_pass():
    assert check_table_symmetries(symmetries_by_classes_numpy)
    assert check_table_symmetries(symmetries_as_tensor_inverse)
    assert check_table_symmetries(lambda table: set(symmetries_solution(table)))


def test_the_reference_counts_the_orderings_inside_classes():
    """2! * 3! orderings for classes {0, 3} and {1, 2, 4}; 4! for equal rows; 1 for distinct rows."""
    rows = torch.randn(2, 3, dtype=torch.float64)
    assert len(reference_symmetries(rows[torch.tensor([0, 1, 1, 0, 1])])) == 12
    assert len(reference_symmetries(torch.ones(4, 2))) == 24
    assert reference_symmetries(torch.eye(3)) == [(0, 1, 2)]


def test_an_answer_that_calls_the_reference_fails(capsys):
    result = check_table_symmetries(lambda table: reference_symmetries(table))
    assert not result and result.reason == "calls the library"
    assert "reference_symmetries" in capsys.readouterr().out
    assert len(reference_symmetries(torch.zeros(3, 1))) == 6  # restored afterwards

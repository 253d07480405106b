"""The checkers of chapters 2-4: each fails on the stub and on typical wrong answers, and passes the solution."""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_add_positions, check_position_lookup, check_shift_matrix, check_sinusoidal


def stub(*args):
    raise NotImplementedError()


# --- check_sinusoidal ---------------------------------------------------------------------------


def sinusoidal_solution(seq_len, d_model):
    return pe.sinusoidal_encoding(seq_len, d_model)


def sinusoidal_student_loop(seq_len, d_model):
    """A right answer written independently of the library, returning a torch tensor."""
    table = torch.zeros(seq_len, d_model, dtype=torch.float64)
    for p in range(seq_len):
        for c in range(d_model):
            angle = p / 10000 ** (2 * (c // 2) / d_model)
            table[p, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return table


def _loop(seq_len, d_model, exponent, cos_exponent=None, swap=False):
    cos_exponent = cos_exponent or exponent
    table = np.zeros((seq_len, d_model))
    for p in range(seq_len):
        for c in range(d_model):
            k = c // 2
            if c % 2 == 0:
                table[p, c] = (np.cos if swap else np.sin)(p / 10000 ** exponent(k, d_model))
            else:
                table[p, c] = (np.sin if swap else np.cos)(p / 10000 ** cos_exponent(k, d_model))
    return table


SINUSOIDAL_WRONG = {
    "off-by-one exponent 2(k+1)/d": (lambda s, d: _loop(s, d, lambda k, d: 2 * (k + 1) / d), "off by one pair"),
    "odd column uses its own index": (
        lambda s, d: _loop(s, d, lambda k, d: 2 * k / d, lambda k, d: (2 * k + 1) / d),
        "SAME frequency",
    ),
    "exponent 2i/d with i the column index": (lambda s, d: _loop(s, d, lambda k, d: 4 * k / d), "doubled the index"),
    "sin and cos swapped": (lambda s, d: _loop(s, d, lambda k, d: 2 * k / d, swap=True), "swapped"),
    "concatenated layout": (lambda s, d: pe.sinusoidal_encoding(s, d, layout="concatenated"), "concatenated layout"),
    "returns a list of lists": (lambda s, d: np.zeros((s, d)).tolist(), "row p, column 2k"),
}


def test_sinusoidal_checker_fails_the_stub(capsys):
    assert not check_sinusoidal(stub)
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize("name", SINUSOIDAL_WRONG)
def test_sinusoidal_checker_fails_wrong_answers_with_the_right_hint(name, capsys):
    wrong, hint = SINUSOIDAL_WRONG[name]
    result = check_sinusoidal(wrong)
    assert not result
    assert hint in capsys.readouterr().out


def test_sinusoidal_checker_catches_a_wrong_odd_width():
    def even_only(seq_len, d_model):  # right for even d, one column too many for odd d
        return pe.sinusoidal_encoding(seq_len, d_model + d_model % 2)

    result = check_sinusoidal(even_only)
    assert not result and "d_model + 1 columns" in result.message


def test_sinusoidal_checker_passes_solutions():
    assert check_sinusoidal(sinusoidal_solution)
    assert check_sinusoidal(sinusoidal_student_loop)
    assert check_sinusoidal(lambda s, d: pe.sinusoidal_encoding(s, d, dtype=torch.float32))


# --- check_shift_matrix -------------------------------------------------------------------------


def shift_solution(k, d_model):
    return pe.shift_matrix(k, d_model)


def shift_by_least_squares(k, d_model):
    """An independent right answer: solve PE(p + k) = M PE(p) for M from the table itself.

    Positions spread over 60000 steps so that even the slowest pair turns far enough
    for the least-squares problem to be well conditioned.
    """
    table = pe.sinusoidal_encoding(60_100, d_model)
    start = np.arange(50, 60_000, 37)  # sample positions p
    solution, *_ = np.linalg.lstsq(table[start], table[start + k], rcond=None)  # table[p] @ M^T = table[p+k]
    return solution.T


def rotation_for_all_pairs_by_k(k, d_model):
    m = np.zeros((d_model, d_model))
    for j in range(d_model // 2):
        c, s = math.cos(k), math.sin(k)
        m[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[c, s], [-s, c]]
    return m


SHIFT_WRONG = {
    "shifts by -k (transposed)": (lambda k, d: pe.shift_matrix(k, d).T, "wrong way"),
    "same angle k for every pair": (rotation_for_all_pairs_by_k, "its own angle"),
    "identity": (lambda k, d: np.eye(d), "block-diagonal"),
}


def test_shift_checker_fails_the_stub():
    assert not check_shift_matrix(stub)


@pytest.mark.parametrize("name", SHIFT_WRONG)
def test_shift_checker_fails_wrong_answers(name, capsys):
    wrong, hint = SHIFT_WRONG[name]
    assert not check_shift_matrix(wrong)
    assert hint in capsys.readouterr().out


def test_shift_checker_recognises_the_concatenated_layout(capsys):
    def concatenated(k, d):  # the layout of fairseq / tensor2tensor
        perm = pe.interleaved_to_concatenated_permutation(d)
        return pe.shift_matrix(k, d)[np.ix_(perm, perm)]

    assert not check_shift_matrix(concatenated)
    assert "concatenated layout" in capsys.readouterr().out


def test_shift_checker_passes_solutions():
    assert check_shift_matrix(shift_solution)
    assert check_shift_matrix(shift_by_least_squares)


# --- check_position_lookup ----------------------------------------------------------------------


def lookup_solution(table, positions):
    max_len = table.shape[0]
    for p in positions.tolist():
        if not 0 <= p < max_len:
            raise ValueError(f"position {p} requested, but the table has positions 0..{max_len - 1} (max_len={max_len})")
    return table[positions]


def lookup_bare(table, positions):
    return table[positions]


def lookup_embedding(table, positions):
    return torch.nn.functional.embedding(positions, table)


def lookup_off_by_one(table, positions):
    if positions.max() > table.shape[0]:
        raise ValueError(f"position {positions.max()} too large for max_len={table.shape[0]}")
    return table[positions]


def lookup_upper_only(table, positions):
    if positions.max() >= table.shape[0]:
        raise ValueError(f"position {int(positions.max())} too large for max_len={table.shape[0]}")
    return table[positions]


def lookup_vague_message(table, positions):
    if positions.min() < 0 or positions.max() >= table.shape[0]:
        raise ValueError("bad position")
    return table[positions]


def test_lookup_checker_fails_the_stub():
    assert not check_position_lookup(stub)


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lookup_bare, "IndexError"),
        (lookup_embedding, "return table[positions]"),
        (lookup_off_by_one, "use >="),
        (lookup_upper_only, "negative position"),
        (lookup_vague_message, "names the offending position"),
    ],
    ids=["bare-indexing", "F.embedding", "off-by-one", "upper-only", "vague-message"],
)
def test_lookup_checker_fails_wrong_answers(wrong, hint, capsys):
    assert not check_position_lookup(wrong)
    assert hint in capsys.readouterr().out


def test_lookup_checker_passes_solutions():
    assert check_position_lookup(lookup_solution)

    def via_module(table, positions):  # reuse the library's module: its message names position and max_len
        module = pe.LearnedPositionalEmbedding(table.shape[1], table.shape[0])
        with torch.no_grad():
            module.embedding.weight.copy_(table)
        if positions.min() < 0:
            raise ValueError(f"position {int(positions.min())} is negative; max_len={table.shape[0]}")
        top = int(positions.max())
        if top >= table.shape[0]:
            module(torch.zeros(1, top + 1, table.shape[1]))  # raises the library's ValueError
        return table[positions]

    assert check_position_lookup(via_module)


def test_lookup_checker_rejects_non_callables():
    assert not check_position_lookup("table[positions]")


# --- check_add_positions ------------------------------------------------------------------------


def add_solution(words, d_model):
    return pe.embed_words(words, d_model) + pe.sinusoidal_encoding(len(words), d_model)


def test_add_positions_checker_fails_the_stub():
    assert not check_add_positions(stub)


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lambda w, d: pe.embed_words(w, d) + pe.sinusoidal_encoding(len(w) + 1, d)[1:], "position 0"),
        (lambda w, d: pe.embed_words(w, d), "word vectors alone"),
        (lambda w, d: torch.cat([pe.embed_words(w, d), pe.sinusoidal_encoding(len(w), d)], -1), "concatenated"),
        (lambda w, d: pe.embed_words(w, d) * pe.sinusoidal_encoding(len(w), d), "row i must be"),
    ],
    ids=["starts-at-1", "no-positions", "concatenated", "multiplied"],
)
def test_add_positions_checker_fails_wrong_answers(wrong, hint, capsys):
    assert not check_add_positions(wrong)
    assert hint in capsys.readouterr().out


def test_add_positions_checker_passes_the_solution():
    assert check_add_positions(add_solution)
    assert check_add_positions(lambda w, d: add_solution(w, d).double().numpy())

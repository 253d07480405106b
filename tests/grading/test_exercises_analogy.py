"""Chapter 2's checkers (adding positions to a chunk of text; a position vector's share of the input) fail on the
stub and on typical wrong answers (with the matching hint), and pass on right answers."""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from _helpers import numpy_sinusoidal_table as table
from posenc_lib.exercises import check_add_positions, check_position_share
from posenc_lib.exercises.analogy import ADD_HINT, PAD, SHARE_HINT


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- check_add_positions (the library is part of this exercise: it asks for pe.sinusoidal_encoding) -----


def positions_table(seq_len, d_model, first=0):
    """Rows first .. first + s - 1 of the interleaved table, written with NumPy (no posenc_lib)."""
    return torch.from_numpy(table(seq_len, d_model, first=first)).float()  # (s, d)


def no_pads(words, d_model, first=0):
    """The first edition's answer: every token a word, positions first .. first + s - 1."""
    return pe.embed_words(words, d_model) + positions_table(len(words), d_model, first)


def add_solution(words, d_model, first=0):
    """A right answer: the real words after the pads, then zero rows put in front."""
    n_pads = words.count(PAD)
    real = no_pads(words[n_pads:], d_model, first) if n_pads < len(words) else torch.zeros(0, d_model)
    return torch.cat([torch.zeros(n_pads, d_model), real])


def add_with_offset(words, d_model, first=0):
    """The notebook's solution: position ids from the mask, the library table with offset=."""
    mask = torch.tensor([word != PAD for word in words])  # (s,)
    real = [word for word, keep in zip(words, mask) if keep]
    out = torch.zeros(len(words), d_model)
    out[mask] = pe.embed_words(real, d_model) + pe.sinusoidal_encoding(len(real), d_model, offset=first)
    return out


def add_by_slicing(words, d_model, first=0):
    """A right answer written differently: position ids by cumsum, rows of a longer table, float64 NumPy."""
    mask = np.array([word != PAD for word in words])  # (s,)
    ids = first + np.cumsum(mask) - 1  # position of each real word
    longer = pe.sinusoidal_encoding(first + len(words), d_model, dtype=torch.float64).numpy()  # (first + s, d)
    words_part = pe.embed_words(words, d_model, dtype=torch.float64).numpy()
    return np.where(mask[:, None], words_part + longer[np.maximum(ids, 0)], 0.0)


def test_add_positions_checker_fails_the_stub():
    assert not check_add_positions(stub)


ADD_WRONG = {
    "pads treated as words": (no_pads, "You treated the pads as words"),
    "pads zeroed, positions counted over them": (
        lambda w, d, f=0: no_pads(w, d, f) * torch.tensor([x != PAD for x in w])[:, None],
        "your positions count the pads too",
    ),
    "restarts-at-0": (lambda w, d, f=0: add_solution(w, d), "restarts at position 0"),
    "off-by-one": (lambda w, d, f=0: add_solution(w, d, f + 1), "off by one"),
    "same-row-for-all": (lambda w, d, f=0: pe.embed_words(w, d) + positions_table(1, d, f), "the same position vector"),
    "no-positions": (lambda w, d, f=0: pe.embed_words(w, d), "word vectors alone"),
    "positions-only": (lambda w, d, f=0: positions_table(len(w), d, f), "position vectors alone"),
    "concatenated": (
        lambda w, d, f=0: torch.cat([pe.embed_words(w, d), positions_table(len(w), d, f)], -1),
        "concatenated",
    ),
    "multiplied": (lambda w, d, f=0: pe.embed_words(w, d) * positions_table(len(w), d, f), "multiplied"),
}


@pytest.mark.parametrize("name", ADD_WRONG)
def test_add_positions_checker_fails_wrong_answers(name, capsys):
    wrong, hint = ADD_WRONG[name]
    result = check_add_positions(wrong)
    assert not result and result.hint != ADD_HINT
    assert hint in capsys.readouterr().out


def test_add_positions_checker_passes_right_answers():
    assert check_add_positions(add_solution)
    assert check_add_positions(add_with_offset)
    assert check_add_positions(add_by_slicing)


def test_add_positions_checker_fails_the_two_argument_answer_of_the_first_edition(capsys):
    result = check_add_positions(lambda w, d: no_pads(w, d))
    assert not result and result.reason == "raised"


def test_add_positions_checker_fails_an_answer_that_calls_the_library_module(capsys):
    def with_the_module(words, d_model, first=0):
        return pe.SinusoidalPositionalEncoding(d_model)(pe.embed_words(words, d_model), offset=first)

    result = check_add_positions(with_the_module)
    assert not result and result.reason == "calls the library"
    assert "SinusoidalPositionalEncoding" in capsys.readouterr().out


# --- check_position_share (exercise 2.2) -------------------------------------------------------------


def share_torch(vector, d_model):
    v = torch.tensor(vector, dtype=torch.float64)
    c = v.norm() / math.sqrt(len(vector) / 2)  # rows of the width-n table have norm sqrt(n/2)
    return c, c * math.sqrt(d_model / 2) / math.sqrt(d_model)


def share_numpy(vector, d_model):
    c = np.linalg.norm(vector) / np.sqrt(len(vector) / 2)
    return np.array([c, c / np.sqrt(2)], dtype=np.float32)  # the share does not depend on d


def share_python(vector, d_model):
    c = math.sqrt(sum(x * x for x in vector) / (len(vector) / 2))
    return [c, c / math.sqrt(2)]


def test_the_share_checker_fails_the_stub():
    assert not check_position_share(stub)


SHARE_WRONG = {
    "row norm sqrt(n)": (
        lambda v, d: (np.linalg.norm(v) / math.sqrt(len(v)), np.linalg.norm(v) / math.sqrt(len(v)) / math.sqrt(2)),
        "not sqrt(n)",
    ),
    "word norm sqrt(d/2), or share = c": (lambda v, d: (share_python(v, d)[0],) * 2, "not sqrt(d/2)"),
    "table width d_model": (
        lambda v, d: (np.linalg.norm(v) / math.sqrt(d / 2), np.linalg.norm(v) / math.sqrt(d / 2) / math.sqrt(2)),
        "len(vector)",
    ),
    "inverted share": (lambda v, d: (share_python(v, d)[0], 1 / share_python(v, d)[1]), "other way round"),
    "numbers of the picture, hard-coded": (lambda v, d: (0.0442, 0.0312), "a drawn vector of 6 entries"),
}


@pytest.mark.parametrize("name", SHARE_WRONG)
def test_the_share_checker_fails_typical_slips_with_their_hint(name, capsys):
    wrong, hint = SHARE_WRONG[name]
    result = check_position_share(wrong)
    assert not result and result.hint != SHARE_HINT
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer", [share_torch, share_numpy, share_python], ids=["torch", "numpy", "python"])
def test_the_share_checker_passes_right_answers(answer):
    assert check_position_share(answer)


def test_the_drawn_vector_gives_the_numbers_the_chapter_states():
    c, share = share_python([0.02, 0.01, 0.05, 0.03], 512)
    assert abs(c - 0.044) < 0.0005 and abs(share - 0.031) < 0.0005

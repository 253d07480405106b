"""posenc_lib.design: the naive candidates, the desiderata checks and the two index misreadings."""

import functools
import math

import pytest
import torch

import posenc_lib as pe
from posenc_lib import design


def test_candidates_hold_the_values_they_promise():
    assert design.integer_code(5)[:, 0].tolist() == [0, 1, 2, 3, 4]
    assert design.normalised_code(4)[:, 0].tolist() == [0, 0.25, 0.5, 0.75]
    # 6 = 0b110, least significant digit first
    assert design.binary_code(8, bits=3)[6].tolist() == [0, 1, 1]
    assert design.one_sine_code(33, wavelength=128)[32, 0] == pytest.approx(1.0, abs=1e-15)
    pair = design.one_pair_code(65, wavelength=128)
    assert pair[64].tolist() == pytest.approx([0.0, -1.0], abs=1e-15)
    assert torch.equal(design.sinusoidal_code(10, d_model=8), pe.sinusoidal_encoding(10, 8, dtype=torch.float64))


def test_each_check_measures_its_own_property():
    table = torch.tensor([[0.0, 0.0], [3.0, 4.0], [3.0, 5.0]])
    assert design.nearest_other_row(table) == pytest.approx(1.0)
    assert design.largest_entry(table) == 5.0
    assert design.step_spread(table) == pytest.approx(5.0)  # steps 5 and 1
    repeated = torch.tensor([[1.0], [1.0], [2.0]])
    assert design.step_spread(repeated) == math.inf
    # a rotation by 0.3 rad per step: an exact linear shift with M = rot(0.3)
    angle = 0.3 * torch.arange(10, dtype=torch.float64)
    circle = torch.stack([angle.cos(), angle.sin()], dim=1)
    assert design.shift_residual(circle) < 1e-12
    rot = torch.tensor([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]], dtype=torch.float64)
    assert torch.allclose(design.shift_map(circle), rot, atol=1e-12)
    # p -> p + 1 is affine, not linear: p = 0 must map to 1
    assert design.shift_residual(design.integer_code(10)) > 0.5


def test_extrapolation_gap_sees_both_a_moved_row_and_a_grown_norm():
    # p / s: position 4 is 4/8 in 8 tokens and 4/16 in 16: moved by 0.25
    assert design.extrapolation_gap(design.normalised_code, 8, 2) >= 0.25
    # p: rows do not move, the norm grows from 7 to 15
    assert design.extrapolation_gap(design.integer_code, 8, 2) == pytest.approx(8.0)
    assert design.extrapolation_gap(design.one_pair_code, 8, 2) < 1e-12


def test_verdicts_of_the_chapter():
    verdict = {
        "p": design.desiderata(design.integer_code),
        "p/s": design.desiderata(design.normalised_code),
        "binary": design.desiderata(design.binary_code),
        "sine": design.desiderata(design.one_sine_code),
        "pair": design.desiderata(design.one_pair_code),
        "long pair": design.desiderata(functools.partial(design.one_pair_code, wavelength=512.0)),
        "table": design.desiderata(design.sinusoidal_code),
    }
    assert not verdict["p"]["bounded"] and verdict["p"]["unique"] and verdict["p"]["smooth"]
    assert not verdict["p/s"]["extrapolates"] and verdict["p/s"]["bounded"]
    assert not verdict["binary"]["smooth"] and verdict["binary"]["unique"] and verdict["binary"]["bounded"]
    assert not verdict["sine"]["unique"] and not verdict["sine"]["linear shift"]
    assert not verdict["pair"]["unique"] and verdict["pair"]["linear shift"] and verdict["pair"]["smooth"]
    assert all(verdict["long pair"].values()) and all(verdict["table"].values())


def test_misreading_a_leaves_the_odd_pairs_empty_and_b_doubles_the_exponent():
    right = pe.sinusoidal_encoding(50, 16, dtype=torch.float64)
    a = design.misread_table(50, 16, "A")
    pair = torch.arange(16) // 2
    filled = pair % 2 == 0  # columns 0, 1, 4, 5, 8, 9, 12, 13
    assert torch.allclose(a[:, filled], right[:, filled], atol=1e-12)
    assert torch.count_nonzero(a[:, ~filled]) == 0
    b = design.misread_table(50, 16, "B")
    # exponent 4l/d: the first d/2 columns are the correct table of width d/2, and pair l is
    # the correct pair 2l of width d
    assert torch.allclose(b[:, :8], pe.sinusoidal_encoding(50, 8, dtype=torch.float64), atol=1e-12)
    for ell in range(4):
        assert torch.allclose(b[:, 2 * ell : 2 * ell + 2], right[:, 4 * ell : 4 * ell + 2], atol=1e-12)
    assert not torch.allclose(b, right)


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: design.binary_code(300, bits=8), ValueError, "seq_len"),
        (lambda: design.one_pair_code(4, wavelength=0), ValueError, "wavelength"),
        (lambda: design.nearest_other_row(torch.zeros(1, 2)), ValueError, "table"),
        (lambda: design.largest_entry([[1.0]]), TypeError, "table"),  # type: ignore[arg-type]  # a list on purpose
        (lambda: design.extrapolation_gap(design.integer_code, 8, 1), ValueError, "factor"),
        (lambda: design.misread_table(4, 8, "C"), ValueError, "reading"),
        (lambda: design.sinusoidal_code(4, d_model=7), ValueError, "d_model"),
    ],
)
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()

"""Partial rotary (GPT-NeoX rotary_pct, GPT-J rotary_dim) and 2-D (axial) RoPE."""

import pytest
import torch

import posenc_lib as pe
from posenc_lib.rope import apply_partial_rope, apply_rope_2d


def test_partial_rope_rotates_the_leading_coordinates_only():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 12, dtype=torch.float64)  # (b, n_h, s, d_h)
    out = apply_partial_rope(x, 4, offset=5)
    torch.testing.assert_close(out[..., 4:], x[..., 4:], rtol=0, atol=0)
    torch.testing.assert_close(out[..., :4], pe.apply_rope(x[..., :4], offset=5))
    assert not torch.allclose(out[..., :4], x[..., :4])
    torch.testing.assert_close(apply_partial_rope(x, 12, offset=5), pe.apply_rope(x, offset=5))


def test_partial_rope_uses_the_frequencies_of_the_rotated_width():
    x = torch.zeros(1, 8, dtype=torch.float64)
    x[0, 1] = 1.0  # pair 1 of the rotated part (half layout, width 4: coordinates 1 and 3)
    out = apply_partial_rope(x, 4, torch.tensor([1]), base=100.0)
    angle = torch.tensor(100.0 ** (-2 * 1 / 4), dtype=torch.float64)  # θ_1 for a width of 4, not of 8
    torch.testing.assert_close(out[0, [1, 3]], torch.stack([angle.cos(), angle.sin()]))


def test_partial_rope_matches_hugging_face_gpt_neox():
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb

    torch.manual_seed(1)
    b, h, s, d, rotary_dim = 2, 4, 9, 24, 8  # rotary_pct = 1/3
    q, k = torch.randn(b, h, s, d), torch.randn(b, h, s, d)
    positions = torch.arange(s) + 3
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim))
    freqs = positions[:, None].float() * inv_freq  # (s, rot/2), HF's own float32 construction
    emb = torch.cat((freqs, freqs), dim=-1)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, emb.cos()[None], emb.sin()[None])
    torch.testing.assert_close(apply_partial_rope(q, rotary_dim, positions), q_ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(apply_partial_rope(k, rotary_dim, positions), k_ref, atol=1e-5, rtol=1e-5)


def test_partial_rope_matches_hugging_face_gpt_j():
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions

    torch.manual_seed(2)
    b, s, h, d, rotary_dim = 2, 11, 3, 16, 8  # GPT-J keeps (b, s, n_h, d_h)
    x = torch.randn(b, s, h, d)
    sincos = create_sinusoidal_positions(s, rotary_dim)[None]  # (1, s, rot)
    sin, cos = torch.split(sincos, rotary_dim // 2, dim=-1)
    reference = torch.cat([apply_rotary_pos_emb(x[..., :rotary_dim], sin, cos), x[..., rotary_dim:]], -1)
    ours = apply_partial_rope(x.transpose(1, 2), rotary_dim, layout="interleaved").transpose(1, 2)
    torch.testing.assert_close(ours, reference, atol=1e-5, rtol=1e-5)


def test_partial_rope_score_depends_on_the_offset_only():
    torch.manual_seed(3)
    q, k = torch.randn(2, 1, 16, dtype=torch.float64)

    def score(i, j):
        return (apply_partial_rope(q, 4, offset=i) * apply_partial_rope(k, 4, offset=j)).sum()

    torch.testing.assert_close(score(3, 10), score(1003, 1010))
    assert not torch.isclose(score(3, 10), score(10, 3))


@pytest.mark.parametrize("rotary_dim, error", [(3, ValueError), (0, ValueError), (18, ValueError), (2.0, TypeError)])
def test_partial_rope_refuses_bad_rotary_dim(rotary_dim, error):
    with pytest.raises(error, match="rotary_dim"):
        apply_partial_rope(torch.randn(5, 16), rotary_dim)


def test_rope_2d_rotates_the_halves_by_row_and_column():
    torch.manual_seed(4)
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    rows, cols = torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 1, 0, 1, 0, 1])
    out = apply_rope_2d(x, rows, cols)
    torch.testing.assert_close(out[..., :8], pe.apply_rope(x[..., :8], rows))
    torch.testing.assert_close(out[..., 8:], pe.apply_rope(x[..., 8:], cols))


def test_rope_2d_score_depends_on_the_row_and_column_offsets_only():
    torch.manual_seed(5)
    q, k = torch.randn(2, 1, 16, dtype=torch.float64)

    def score(query_at, key_at):
        (r1, c1), (r2, c2) = query_at, key_at
        q_rot = apply_rope_2d(q, torch.tensor([r1]), torch.tensor([c1]))
        k_rot = apply_rope_2d(k, torch.tensor([r2]), torch.tensor([c2]))
        return (q_rot * k_rot).sum()

    torch.testing.assert_close(score((1, 2), (4, 7)), score((11, 32), (14, 37)))
    assert not torch.isclose(score((0, 0), (1, 0)), score((0, 0), (0, 1)))  # the two axes differ


def test_rope_2d_refuses_bad_input():
    with pytest.raises(ValueError, match="multiple of 4"):
        apply_rope_2d(torch.randn(3, 6), torch.arange(3), torch.arange(3))
    with pytest.raises(ValueError, match="cols"):
        apply_rope_2d(torch.randn(3, 8), torch.arange(3), torch.arange(4))
    with pytest.raises(TypeError, match="rows"):
        apply_rope_2d(torch.randn(3, 8), 0, torch.arange(3))

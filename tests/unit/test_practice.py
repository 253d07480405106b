"""posenc_lib.practice: padded and packed batches, sink caches, SDPA backends, the RoPE base rule."""

import math

import pytest
import torch

import posenc_lib as pe
from posenc_lib import practice


def _positions_by_loop(mask: torch.Tensor) -> list[list[int]]:
    rows = []
    for row in mask.tolist():
        count, out = 0, []
        for real in row:
            out.append(count if real else 0)
            count += int(real)
        rows.append(out)
    return rows


def test_positions_count_only_the_real_tokens():
    mask = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1], [1, 1, 1, 0, 0], [0, 1, 0, 1, 1]])
    ids = practice.position_ids_from_mask(mask)
    assert ids.dtype == torch.int64
    assert ids.tolist() == _positions_by_loop(mask)
    assert ids[1].tolist() == [0, 0, 0, 1, 2]  # left padding: the real tokens start at 0
    assert torch.equal(practice.position_ids_from_mask(mask.bool()), ids)


def test_padded_mask_hides_padding_keys_and_the_future():
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1]])
    allowed = practice.padded_mask(mask)
    assert allowed.shape == (2, 1, 4, 4) and allowed.dtype == torch.bool
    for b in range(2):
        for i in range(4):
            for j in range(4):
                expected = j <= i and (bool(mask[b, j]) or i == j)
                assert bool(allowed[b, 0, i, j]) == expected, (b, i, j)


def test_packed_positions_restart_and_the_mask_is_block_diagonal():
    # three documents: ids need not be distinct across runs, a change starts a new document
    ids = torch.tensor([0, 0, 0, 1, 1, 0, 0])
    assert practice.packed_position_ids(ids).tolist() == [[0, 1, 2, 0, 1, 0, 1]]
    run = [0, 0, 0, 1, 1, 2, 2]
    allowed = practice.packed_mask(ids)[0, 0]
    for i in range(7):
        for j in range(7):
            assert bool(allowed[i, j]) == (j <= i and run[i] == run[j]), (i, j)
    two_rows = torch.tensor([[5, 5, 7], [5, 7, 7]])
    assert practice.packed_position_ids(two_rows).tolist() == [[0, 1, 0], [0, 0, 1]]
    assert practice.packed_mask(two_rows).shape == (2, 1, 3, 3)


def _sequences():
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(n, 8, generator=generator, dtype=torch.float64) for n in (5, 3)]


@pytest.mark.parametrize("layout", practice.BATCH_LAYOUTS)
def test_a_learned_table_needs_the_counted_positions(layout):
    head = practice.PositionedHead(8, scheme="learned", seed=1)
    gaps = practice.batching_gaps(head, _sequences(), layout)
    assert gaps["masked, counted"] < 1e-12  # float64 rounding: the same as separate runs
    assert gaps["masked, 0..s-1"] > 0.5  # the second sequence read the wrong rows
    assert gaps["causal, 0..s-1"] > 0.5


@pytest.mark.parametrize("layout", practice.BATCH_LAYOUTS)
def test_rope_needs_only_the_mask(layout):
    head = practice.PositionedHead(8, scheme="rope", seed=1)
    gaps = practice.batching_gaps(head, _sequences(), layout)
    assert gaps["masked, counted"] < 1e-12
    assert gaps["masked, 0..s-1"] < 1e-12  # a shift of every position: the scores stay
    assert gaps["causal, 0..s-1"] > 0.5  # padding (or the other document) was attended to


def test_positioned_head_uses_its_positions():
    x = _sequences()[0][None]  # (1, 5, 8)
    for scheme in practice.SCHEMES:
        head = practice.PositionedHead(8, scheme=scheme, seed=1)
        same = head(x, torch.arange(5)[None])
        assert torch.equal(same, head(x))  # the default positions are 0 .. s-1
        # RoPE: a shift of every position leaves the output; a learned table reads other rows
        shifted = head(x, torch.arange(3, 8)[None])
        gap = (shifted - same).abs().max().item()
        assert (gap < 1e-12) if scheme == "rope" else (gap > 0.5)
        reversed_order = head(x, torch.arange(4, -1, -1)[None])
        assert (reversed_order - same).abs().max() > 0.1


def test_sink_cache_keeps_the_sinks_and_the_window():
    kept, new = practice.sink_cache_positions(12, 2, 4)
    assert kept.tolist() == [0, 1, 8, 9, 10, 11]
    assert new.tolist() == [0, 1, 2, 3, 4, 5]
    kept, new = practice.sink_cache_positions(5, 2, 4)  # nothing evicted yet
    assert kept.tolist() == new.tolist() == [0, 1, 2, 3, 4]
    kept, _ = practice.sink_cache_positions(10, 0, 3)  # a plain window
    assert kept.tolist() == [7, 8, 9]


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_repositioned_keys_are_the_keys_rotated_at_the_new_positions(layout):
    generator = torch.Generator().manual_seed(3)
    keys = torch.randn(1, 2, 12, 16, generator=generator, dtype=torch.float64)
    kept, new = practice.sink_cache_positions(12, 2, 4)
    cached = pe.apply_rope(keys, torch.arange(12), layout=layout)[..., kept, :]  # rotated at the old positions
    moved = practice.reposition_keys(cached, kept, new, layout=layout)
    recomputed = pe.apply_rope(keys[..., kept, :], new, layout=layout)
    assert (moved - recomputed).abs().max() < 1e-12
    assert (cached - recomputed).abs().max() > 0.1  # not re-rotated: other keys
    base = practice.reposition_keys(cached, kept, new, base=500_000.0, layout=layout)
    assert (base - recomputed).abs().max() > 1e-3  # the base is passed on


def test_sdpa_support_on_this_cpu():
    verdicts = practice.sdpa_support()
    assert list(verdicts) == list(practice.SDPA_CASES)
    assert all(list(row) == list(practice.SDPA_BACKENDS) for row in verdicts.values())
    assert all(row["math"] == "agrees" for row in verdicts.values())
    assert "differs" not in {v for row in verdicts.values() for v in row.values()}
    # measured on the pinned PyTorch: CPU flash takes a float mask of 2 or 4 dimensions, not 3
    assert verdicts["ALiBi: float mask (1, n_h, s, s)"]["flash"] == "agrees"
    assert verdicts["ALiBi: float mask (n_h, s, s)"]["flash"] == "refused"
    assert all(row[b] == "refused" for row in verdicts.values() for b in ("efficient", "cudnn"))


def test_sdpa_support_sees_a_wrong_result(monkeypatch):
    real = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", lambda *a, **k: real(*a, **k) * 1.001)
    verdicts = practice.sdpa_support()
    assert verdicts["NoPE, is_causal"]["math"] == "differs"


def test_base_rule():
    assert practice.smallest_rope_base(4096, 128) == pytest.approx(722.52, abs=0.01)
    assert practice.longest_wavelength(128, 10_000.0) == pytest.approx(54_410.1, abs=0.1)
    for head_dim, context in ((64, 2048), (128, 131_072), (4, 100)):
        base = practice.smallest_rope_base(context, head_dim)
        assert practice.longest_wavelength(head_dim, base) == pytest.approx(context, rel=1e-12)
        largest = pe.wavelengths(pe.rope_frequencies(head_dim, base)).max().item()
        assert largest == pytest.approx(context, rel=1e-12)
    assert practice.longest_wavelength(128, 1e6) > practice.longest_wavelength(128, 1e4)


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: practice.position_ids_from_mask(torch.ones(4)), ValueError, "attention_mask"),
        (lambda: practice.position_ids_from_mask(torch.ones(2, 3)), TypeError, "attention_mask"),
        (lambda: practice.position_ids_from_mask(torch.tensor([[0, 2]])), ValueError, "attention_mask"),
        (lambda: practice.padded_mask(torch.tensor([[0, 0]])), ValueError, "attention_mask"),
        (lambda: practice.packed_position_ids([0, 0, 1]), TypeError, "document_ids"),  # type: ignore[arg-type]  # a list on purpose
        (lambda: practice.packed_mask(torch.zeros(3)), TypeError, "document_ids"),
        (lambda: practice.PositionedHead(7, scheme="rope"), ValueError, "d_model"),
        (lambda: practice.PositionedHead(8, scheme="alibi"), ValueError, "scheme"),
        (lambda: practice.PositionedHead(8)(torch.ones(1, 3, 8)), TypeError, "x"),
        (
            lambda: practice.PositionedHead(8, max_len=4)(torch.ones(1, 5, 8, dtype=torch.float64)),
            ValueError,
            "max_len",
        ),
        (lambda: practice.batching_gaps(practice.PositionedHead(8), _sequences(), "sorted"), ValueError, "layout"),
        (
            lambda: practice.batching_gaps(practice.PositionedHead(8), _sequences()[:1], "packed"),
            ValueError,
            "sequences",
        ),
        (lambda: practice.sink_cache_positions(10, -1, 3), ValueError, "n_sink"),
        (lambda: practice.sink_cache_positions(10, 1, 0), ValueError, "window"),
        (
            lambda: practice.reposition_keys(torch.ones(3, 4), torch.arange(2), torch.arange(3)),
            ValueError,
            "old_positions",
        ),
        (
            lambda: practice.reposition_keys(torch.ones(3, 4), torch.arange(3), torch.ones(3)),
            TypeError,
            "new_positions",
        ),
        (lambda: practice.sdpa_support(head_dim=7), ValueError, "head_dim"),
        (lambda: practice.smallest_rope_base(6, 128), ValueError, "context"),
        (lambda: practice.smallest_rope_base(4096, 2), ValueError, "head_dim"),
        (lambda: practice.longest_wavelength(128, -1.0), ValueError, "base"),
    ],
)
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_results_follow_the_input_device_and_dtype():
    mask = torch.tensor([[0, 1, 1]], dtype=torch.int32)
    assert practice.position_ids_from_mask(mask).dtype == torch.int64
    keys = torch.randn(1, 4, 8, dtype=torch.float32)
    moved = practice.reposition_keys(keys, torch.arange(4), torch.arange(4) + 2)
    assert moved.dtype == torch.float32 and moved.shape == keys.shape
    assert math.isclose(practice.longest_wavelength(2, 123.0), 2 * math.pi)  # d_h = 2: θ_0 = 1 whatever B


def test_masks_and_positions_are_built_on_the_meta_device():
    # shapes and devices without values (meta-device initialisation): no value check reads a meta tensor
    mask = torch.ones(2, 5, dtype=torch.long, device="meta")
    documents = torch.zeros(2, 6, dtype=torch.long, device="meta")
    keys, positions = torch.empty(1, 2, 4, 8, device="meta"), torch.arange(4, device="meta")
    built = {
        "position_ids_from_mask": (practice.position_ids_from_mask(mask), (2, 5)),
        "padded_mask": (practice.padded_mask(mask), (2, 1, 5, 5)),
        "packed_position_ids": (practice.packed_position_ids(documents), (2, 6)),
        "packed_mask": (practice.packed_mask(documents), (2, 1, 6, 6)),
        "reposition_keys": (practice.reposition_keys(keys, positions, positions), (1, 2, 4, 8)),
    }
    for name, (tensor, shape) in built.items():
        assert tensor.device.type == "meta" and tuple(tensor.shape) == shape, name

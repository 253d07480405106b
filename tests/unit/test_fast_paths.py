"""posenc_lib.fast computes what the formulas compute.

Every public function is written as its formula and hands its work to posenc_lib.fast
when a faster path exists. Here each fast path is compared with the formula, run inside
``posenc_lib.fast.disabled()``, on random shapes, offsets, layouts, dtypes and strides
(hypothesis), plus a few exactness checks against mpmath. No timing is asserted here.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posenc_lib as pe
from posenc_lib import fast

pytestmark = pytest.mark.usefixtures("one_thread")

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
# one unit in the last place near 1, per dtype: the scale of a table or rotation rounding
EPS = {dtype: torch.finfo(dtype).eps for dtype in FLOATS}


def reference(call):
    """Run ``call()`` with every fast path off: the formula as written in the public function."""
    with fast.disabled():
        return call()


def test_disabled_turns_the_fast_paths_off_and_restores_them():
    assert fast.enabled()
    with fast.disabled():
        assert not fast.enabled()
        assert fast.rotate_pairs(torch.zeros(2, 4), torch.ones(2, 2), torch.zeros(2, 2), "half") is None
    assert fast.enabled()
    with pytest.raises(RuntimeError), fast.disabled():
        raise RuntimeError("boom")
    assert fast.enabled()


def test_fast_is_a_leaf_of_the_import_graph():
    """posenc_lib.fast is handed θ, slopes and tables: it imports no formula module and reads no module's state."""
    code = "import sys, posenc_lib.fast; print(*sorted(m for m in sys.modules if m.startswith('posenc_lib')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["posenc_lib", "posenc_lib.fast"]  # a fresh process: nothing else of the package
    source = inspect.getsource(fast)
    tree = ast.parse(source)
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]  # also in bodies
    modules = [alias.name for node in imports if isinstance(node, ast.Import) for alias in node.names]
    modules += [("." * node.level) + (node.module or "") for node in imports if isinstance(node, ast.ImportFrom)]
    assert modules and not [m for m in modules if m.startswith((".", "posenc_lib"))], modules
    # no private state of a module: no _buffers lookups, no buffer names of RotaryEmbedding
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert "_buffers" not in names and not [text for text in strings if text.endswith("_cached")]


def test_the_package_loads_its_names_on_first_use():
    code = "import posenc_lib as pe, sys; print(pe.apply_rope.__module__, 'posenc_lib.analysis' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["posenc_lib.rope", "True"]
    # a notebook's order: the package, then a submodule whose imports (`from . import fast`) pass through it
    code = "import posenc_lib as pe; from posenc_lib.analysis import rope_decay_bound as f; print(pe.rope_decay_bound is f)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["True"]
    assert set(pe.__all__) <= set(dir(pe)) and pe.rope_decay_bound.__module__ == "posenc_lib.analysis"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        pe.no_such_name  # noqa: B018 (the attribute access is what is tested)


# ---------------------------------------------------------------------------------------------- sinusoidal


@SETTINGS
@given(
    seq_len=st.integers(1, 300),
    d_model=st.integers(1, 70),
    offset=st.one_of(st.just(0), st.integers(0, 10**6), st.integers(0, 2**35)),
    layout=st.sampled_from(["interleaved", "concatenated"]),
    dtype=st.sampled_from(FLOATS),
    base=st.sampled_from([10000.0, 500.0, 1e6]),
)
def test_sinusoidal_table_equals_the_formula(seq_len, d_model, offset, layout, dtype, base):
    kwargs = dict(offset=offset, base=base, layout=layout, dtype=dtype)
    ours = pe.sinusoidal_encoding(seq_len, d_model, **kwargs)
    formula = reference(lambda: pe.sinusoidal_encoding(seq_len, d_model, **kwargs))
    assert ours.shape == formula.shape == (seq_len, d_model) and ours.dtype == formula.dtype == dtype
    # the formula rounds the angle p * theta in float64 (half an ulp of p, about (offset + s) * 1.1e-16), in
    # every output dtype (at p ~ 2**32 that is 4.8e-7, as much as float32's own rounding); the fast table does
    # not, and is otherwise a couple of ulps of the dtype away
    angle_rounding = (offset + seq_len) * 2.3e-16
    tolerance = 4 * EPS[dtype] + angle_rounding
    assert (ours.double() - formula.double()).abs().max().item() <= tolerance


def direct_float64(seq_len: int, d_model: int, offset: int = 0) -> torch.Tensor:
    with fast.disabled():
        return pe.sinusoidal_encoding(seq_len, d_model, offset=offset, dtype=torch.float64)


def exact_entries(positions: np.ndarray, columns: np.ndarray, d_model: int) -> np.ndarray:
    """Entries of the interleaved table to 30 significant digits (mpmath), for the float64 frequencies."""
    theta = pe.sinusoidal_frequencies(d_model).tolist()
    mpmath.mp.dps = 30
    values = []
    for p, c in zip(positions.tolist(), columns.tolist()):
        angle = mpmath.mpf(p) * mpmath.mpf(theta[c // 2])  # exact product of two binary numbers
        values.append(float(mpmath.sin(angle) if c % 2 == 0 else mpmath.cos(angle)))
    return np.array(values)


def test_float64_table_within_1e12_of_the_formula_at_8192_by_1024():
    table = pe.sinusoidal_encoding(8192, 1024, dtype=torch.float64)
    assert (table - direct_float64(8192, 1024)).abs().max() <= 1e-12


def test_far_table_is_accurate_to_a_few_ulp_where_the_formula_is_not():
    # 300 000 positions: the formula rounds angles near 3e5 by up to ulp(3e5) / 2 = 2.9e-11 rad
    seq_len, d_model = 300_000, 8
    table = pe.sinusoidal_encoding(seq_len, d_model, dtype=torch.float64).numpy()
    direct = direct_float64(seq_len, d_model).numpy()
    rng = np.random.default_rng(0)
    rows = np.concatenate([rng.integers(0, seq_len, 150), np.arange(seq_len - 50, seq_len)])
    cols = np.tile(np.arange(d_model), rows.size)
    rows = np.repeat(rows, d_model)
    exact = exact_entries(rows, cols, d_model)
    assert np.abs(table[rows, cols] - exact).max() < 2e-15
    assert np.abs(direct[rows, cols] - exact).max() > 1e-12  # the rounded angle, not the sine, limits the formula


def test_offset_table_far_out_is_exact_too():
    table = pe.sinusoidal_encoding(16, 8, offset=10**7, dtype=torch.float64).numpy()
    rows, cols = np.repeat(np.arange(16), 8), np.tile(np.arange(8), 16)
    assert np.abs(table[rows, cols] - exact_entries(rows + 10**7, cols, 8)).max() < 2e-15


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_8192_by_1024_against_exact_values_in_both_dtypes(dtype):
    table = pe.sinusoidal_encoding(8192, 1024, dtype=dtype).numpy()
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, 8192, 400), rng.integers(0, 1024, 400)
    rows[:4], cols[:4] = 8191, [0, 1, 1022, 1023]  # the last row, where angles are largest
    error = np.abs(table[rows, cols].astype(np.float64) - exact_entries(rows, cols, 1024)).max()
    assert error < (2e-15 if dtype == torch.float64 else 2.5e-7)  # float32: a product of two rounded phasors


def test_module_table_is_the_fast_table():
    module = pe.SinusoidalPositionalEncoding(d_model=16, max_len=3000)
    assert torch.equal(module.pe, pe.sinusoidal_encoding(3000, 16))
    torch.testing.assert_close(module.pe, reference(lambda: pe.sinusoidal_encoding(3000, 16)), atol=3e-7, rtol=0)


# ---------------------------------------------------------------------------------------------- RoPE


def strided(x: torch.Tensor, kind: str) -> torch.Tensor:
    """The same values as ``x`` (..., s, d) in a different memory layout."""
    if kind == "contiguous":
        return x
    if kind == "transposed" and x.dim() >= 3:  # (b, s, h, d) memory viewed as (b, h, s, d)
        return x.transpose(-3, -2).contiguous().transpose(-3, -2)
    if kind == "every_other":  # last-dimension stride 2: no complex view
        wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    if kind == "misaligned":  # odd storage offset: pairs are not aligned to complex numbers
        storage = torch.zeros(x.numel() + 1, dtype=x.dtype)
        view = storage[1:].view(x.shape)
        view.copy_(x)
        return view
    return x


ROPE_INPUTS = dict(
    lead=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    seq_len=st.integers(1, 40),
    half=st.integers(1, 24),
    layout=st.sampled_from(["half", "interleaved"]),
    dtype=st.sampled_from(FLOATS),
    kind=st.sampled_from(["contiguous", "transposed", "every_other", "misaligned"]),
    seed=st.integers(0, 2**16),
)


def rope_tolerance(dtype: torch.dtype, x: torch.Tensor) -> float:
    # a few roundings of products of |x| by numbers <= 1, in the dtype of x
    return 4 * EPS[dtype] * max(1.0, float(x.double().abs().max()))


@SETTINGS
@given(**ROPE_INPUTS, start=st.integers(0, 10**6))
def test_rotate_pairs_equals_the_formula(lead, seq_len, half, layout, dtype, kind, seed, start):
    gen = torch.Generator().manual_seed(seed)
    x = strided(torch.randn(*lead, seq_len, 2 * half, generator=gen).to(dtype), kind)
    angles = pe.rope_angles(torch.arange(start, start + seq_len), pe.rope_frequencies(2 * half))
    cos, sin = angles.cos().float(), angles.sin().float()
    with torch.no_grad():
        ours = pe.rotate_pairs(x, cos, sin, layout)
        assert fast.rotate_pairs(x, cos.to(dtype), sin.to(dtype), layout) is not None  # a fast path was taken
    formula = reference(lambda: pe.rotate_pairs(x, cos, sin, layout))
    assert ours.shape == x.shape and ours.dtype == dtype and ours.is_contiguous()
    assert (ours.double() - formula.double()).abs().max().item() <= rope_tolerance(dtype, x)


@SETTINGS
@given(**ROPE_INPUTS, max_len=st.integers(1, 64), start=st.one_of(st.integers(0, 70), st.integers(0, 10**7)))
def test_rotary_module_equals_the_formula(lead, seq_len, half, layout, dtype, kind, seed, max_len, start):
    gen = torch.Generator().manual_seed(seed)
    rotary = pe.RotaryEmbedding(2 * half, max_len, layout=layout)
    q = strided(torch.randn(*lead, seq_len, 2 * half, generator=gen).to(dtype), kind)
    k = strided(torch.randn(seq_len, 2 * half, generator=gen).to(dtype), kind)  # fewer leading dims, as in GQA
    with torch.no_grad():
        out = rotary(q, offset=start)
        q_out, k_out = rotary.rotate_qk(q, k, offset=start)
    with fast.disabled():
        formula_q, formula_k = rotary(q, offset=start), rotary(k, offset=start)
        function_q = pe.apply_rope(q, offset=start, layout=layout)
    for ours, formula, x in ((out, formula_q, q), (q_out, formula_q, q), (k_out, formula_k, k)):
        assert ours.shape == x.shape and ours.dtype == dtype
        assert (ours.double() - formula.double()).abs().max().item() <= rope_tolerance(dtype, x)
    # and the module is apply_rope: the same angles, rounded the same way
    assert (formula_q.double() - function_q.double()).abs().max().item() <= rope_tolerance(dtype, q)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("shape", [(1, 32, 1, 128), (2, 4, 33, 64), (4, 16, 300, 64)])
def test_both_sizes_of_input_take_a_fast_path(layout, shape):
    """Small inputs (one decoding step) and large ones (a prefill) each have a fast path in the module."""
    rotary = pe.RotaryEmbedding(shape[-1], 512, layout=layout)
    x = torch.randn(shape)
    rows = tuple(table[7 : 7 + shape[-2]] for table in fast.rotary_table(rotary.cos_cached, rotary.sin_cached, layout))
    with torch.no_grad():
        assert fast.rotary(x, rows, layout) is not None
        assert fast.rotary_qk(x, x, rows, layout) is not None
        short = tuple(table[:-1] for table in rows)  # rows past the end of the tables: the formula runs
        assert fast.rotary(x, short, layout) is None
        torch.testing.assert_close(rotary(x, offset=7), reference(lambda: rotary(x, offset=7)), atol=2e-6, rtol=0)
    assert fast.rotary(x.requires_grad_(), rows, layout) is None  # autograd: the formula runs


@SETTINGS
@given(**ROPE_INPUTS, start=st.integers(0, 60), few_calls=st.booleans(), block=st.integers(1, 2048), gqa=st.booleans())
def test_half_table_paths_equal_the_formula(
    lead, seq_len, half, layout, kind, seed, start, few_calls, block, gqa, dtype
):
    """Both paths over the cached tables: x [cos|cos] + roll(x) [-sin|sin], and three passes by blocks."""
    gen = torch.Generator().manual_seed(seed)
    q = strided(torch.randn(*lead, seq_len, 2 * half, generator=gen), kind)
    k_lead = [] if gqa else lead  # fewer leading dimensions, as in grouped-query attention, or q's shape
    k = strided(torch.randn(*k_lead, seq_len, 2 * half, generator=gen), kind)
    rotary = pe.RotaryEmbedding(2 * half, 128, layout=layout)
    tables = fast.rotary_table(rotary.cos_cached, rotary.sin_cached, layout)
    rows = tuple(table[start : start + seq_len] for table in tables)
    previous = fast._FEW_CALLS_NUMEL, fast._BLOCK_NUMEL
    try:
        fast._FEW_CALLS_NUMEL = 1 << 40 if few_calls else 0  # every input takes the one path, or the other
        fast._BLOCK_NUMEL = block  # blocks of whole (s, d_h) slices, a last one shorter, or no blocks at all
        with torch.no_grad():
            q_out, k_out = fast.rotary_qk(q, k, rows, layout)
            single = fast.rotary(q, rows, layout)
    finally:
        fast._FEW_CALLS_NUMEL, fast._BLOCK_NUMEL = previous
    formula_q, formula_k = (reference(lambda x=x: pe.apply_rope(x, offset=start, layout=layout)) for x in (q, k))
    for ours, formula, x in ((q_out, formula_q, q), (single, formula_q, q), (k_out, formula_k, k)):
        assert ours is not None and ours.shape == x.shape and ours.dtype == torch.float32
        assert (ours.double() - formula.double()).abs().max().item() <= rope_tolerance(torch.float32, x)


@pytest.mark.parametrize("lead, slices_per_block", [((3, 5), 2), ((7,), 3), ((2, 2), 1), ((4,), 4), ((4,), 0)])
def test_half_rotation_by_blocks_is_the_rotation_in_one_go(lead, slices_per_block, monkeypatch):
    """Blocks of whole (s, d_h) slices, the last one shorter, give the very numbers of one pass over everything."""
    seq_len, head_dim = 9, 16
    x = torch.randn(*lead, seq_len, head_dim, generator=torch.Generator().manual_seed(len(lead)))
    rotary = pe.RotaryEmbedding(head_dim, 64, layout="half")
    cos_full, sin_signed = (t[3 : 3 + seq_len] for t in fast.rotary_table(rotary.cos_cached, rotary.sin_cached, "half"))
    sin = sin_signed[:, head_dim // 2 :]
    monkeypatch.setattr(fast, "_BLOCK_NUMEL", 0)  # no blocks: one pass over the whole of x
    whole = fast._rotate_half(x, cos_full, sin)
    # not a whole number of slices
    monkeypatch.setattr(fast, "_BLOCK_NUMEL", slices_per_block * seq_len * head_dim + 5)
    blocked = fast._rotate_half(x, cos_full, sin)
    assert torch.equal(blocked, whole)
    formula = reference(lambda: pe.apply_rope(x, offset=3, layout="half"))
    assert (blocked.double() - formula.double()).abs().max().item() <= rope_tolerance(torch.float32, x)


# ---------------------------------------------------------------------------------------------- ALiBi


def test_float32_alibi_refuses_distances_past_two_to_the_24():
    slopes = torch.ones(1, 1, 1)
    assert fast.alibi_bias_compact(slopes, 2**24).shape == (1, 1, 2**24)  # the last exact distance
    with pytest.raises(ValueError, match="k_len must be at most 16,777,216 in torch.float32"):
        fast.alibi_bias(slopes, 1, 2**24 + 1, causal=True)
    with pytest.raises(ValueError, match="k_len must be at most"):
        fast.alibi_bias_compact(slopes, 2**24 + 1)
    with pytest.raises(ValueError, match="slopes must be float32 or float64"):
        fast.alibi_bias(slopes.half(), 1, 4, causal=False)
    assert fast.alibi_applies(2**24, torch.float32) and not fast.alibi_applies(2**24 + 1, torch.float32)
    assert fast.alibi_applies(2**24 + 1, torch.float64) and not fast.alibi_applies(4, torch.bfloat16)
    # the public function takes the formula there: float64 distances, rounded once
    assert float(pe.alibi_bias_compact(1, 2**24 + 1)[0, 0, 0]) == -(2**24) * 2**-8


@SETTINGS
@given(
    n_heads=st.integers(1, 40),
    q_len=st.integers(1, 30),
    extra=st.integers(0, 30),
    causal=st.booleans(),
    dtype=st.sampled_from(FLOATS),
)
def test_alibi_bias_equals_the_formula(n_heads, q_len, extra, causal, dtype):
    k_len = q_len + extra
    ours = pe.alibi_bias(n_heads, q_len, k_len, causal=causal, dtype=dtype)
    formula = reference(lambda: pe.alibi_bias(n_heads, q_len, k_len, causal=causal, dtype=dtype))
    assert ours.shape == formula.shape == (n_heads, q_len, k_len) and ours.dtype == dtype
    assert torch.equal(torch.isinf(ours), torch.isinf(formula))  # the same mask
    finite = torch.isfinite(formula)
    # the fast path rounds the slope to dtype first, the formula rounds the product once: <= 1 ulp apart
    torch.testing.assert_close(ours[finite], formula[finite], rtol=2 * EPS[dtype], atol=0)


@SETTINGS
@given(n_heads=st.integers(1, 40), k_len=st.integers(1, 5000), dtype=st.sampled_from(FLOATS))
def test_alibi_compact_equals_the_formula(n_heads, k_len, dtype):
    ours = pe.alibi_bias_compact(n_heads, k_len, dtype=dtype)
    formula = reference(lambda: pe.alibi_bias_compact(n_heads, k_len, dtype=dtype))
    assert ours.shape == (n_heads, 1, k_len) and ours.dtype == dtype
    torch.testing.assert_close(ours, formula, rtol=2 * EPS[dtype], atol=0)


@pytest.mark.parametrize("n_heads", [1, 5, 8, 12, 32])
@pytest.mark.parametrize("dtype", FLOATS)
def test_compact_is_the_last_query_row(n_heads, dtype):
    for k_len in (1, 6, 3000):
        compact = pe.alibi_bias_compact(n_heads, k_len, dtype=dtype)
        assert compact.shape == (n_heads, 1, k_len) and compact.dtype == dtype
        torch.testing.assert_close(compact, pe.alibi_bias(n_heads, 1, k_len, dtype=dtype), rtol=2 * EPS[dtype], atol=0)


@pytest.mark.parametrize("q_len,k_len", [(1, 9), (9, 9), (4, 9)])
def test_compact_gives_the_same_attention_as_the_full_bias(q_len, k_len):
    gen = torch.Generator().manual_seed(5)
    scores = torch.randn(2, 6, q_len, k_len, generator=gen, dtype=torch.float64)  # (b, n_h, s_q, s_k)
    mask = torch.where(pe.causal_mask(q_len, k_len), 0.0, float("-inf")).double()  # (s_q, s_k)
    compact = pe.alibi_bias_compact(6, k_len, dtype=torch.float64)  # (n_h, 1, s_k)
    full = pe.alibi_bias(6, q_len, k_len, dtype=torch.float64)  # (n_h, s_q, s_k)
    torch.testing.assert_close(torch.softmax(scores + compact + mask, -1), torch.softmax(scores + full, -1))
    # not the same numbers: on the visible keys the two differ by a constant per query row
    visible = torch.isfinite(full)  # (n_h, s_q, s_k)
    shift = torch.where(visible, compact - full, 0.0)
    row = shift[..., :1]  # key 0 is visible to every query
    torch.testing.assert_close(torch.where(visible, shift, row), row.expand_as(shift))
    assert bool((row != 0).any()) == (q_len > 1)


@pytest.mark.parametrize("n_heads", [8, 12, 32])
def test_compact_matches_hugging_face_mpt(n_heads):
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    torch.testing.assert_close(
        pe.alibi_bias_compact(n_heads, 300), build_mpt_alibi_tensor(n_heads, 300), rtol=1e-6, atol=0
    )

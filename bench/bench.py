"""Side-by-side timings of posenc_lib against the libraries people use (``make bench``).

    python bench/bench.py            # full run, writes book/data/bench.json and book/data/bench.md
    python bench/bench.py --quick    # a smoke run with few samples, writes nothing unless --out-dir is given
    python bench/bench.py --render   # times nothing: rewrites bench.md from bench.json (after a format change)

Every case first checks that all contenders compute the same numbers (up to layout
permutation and float tolerance) and stops if one does not. Besides the peers, each case times
posenc_lib's reference formula (the public function inside ``posenc_lib.fast.disabled()``), so
the table shows what the fast paths of ``posenc_lib/fast.py`` buy. Then it times them
*interleaved*: each round calls every contender once, in a fresh random order, so
that a burst of load from something else on the machine hits all of them alike.
It reports the median over the rounds with the interquartile range, and ratios to
the reference rows; no number here is asserted in the tests.

Peers (pinned in requirements-bench.txt / requirements-test.txt):
HF transformers' ``apply_rotary_pos_emb`` and ``build_mpt_alibi_tensor``,
torchtune's ``RotaryPositionalEmbeddings`` (only its ``modules/position_embeddings.py``
is loaded: ``import torchtune`` needs torchao, datasets and more), and lucidrains'
``rotary-embedding-torch``.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.metadata
import importlib.util
import json
import math
import os
import pathlib
import platform
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import mpmath
import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import posenc_lib as pe
from posenc_lib import fast

ROOT = pathlib.Path(__file__).resolve().parents[1]
T = TypeVar("T")

# ----------------------------------------------------------------------------------------------
# timing


def time_interleaved(
    contenders: Mapping[str, Callable[[], object]], rounds: int, seed: int = 0
) -> dict[str, list[float]]:
    """Seconds per call of every contender: ``rounds`` samples each, one call per sample.

    Every round runs all contenders once in a new random order. The garbage
    collector is off while timing; each result is dropped right away, so every
    call pays for allocating its output, as it would in real use.
    """
    names = list(contenders)
    for name in names:  # warm-up: lazy initialisation, caches, first-touch of code paths
        contenders[name]()
        contenders[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    order = random.Random(seed)
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            order.shuffle(names)
            for name in names:
                call = contenders[name]
                start = time.perf_counter()
                call()
                samples[name].append(time.perf_counter() - start)
    finally:
        gc.enable()
    return samples


# ATen operators that only make a new view of existing memory (no kernel runs over the data)
VIEW_OPS = {
    "view",
    "_unsafe_view",
    "slice",
    "select",
    "unsqueeze",
    "squeeze",
    "expand",
    "transpose",
    "t",
    "permute",
    "view_as_complex",
    "view_as_real",
    "alias",
    "as_strided",
    "detach",
    "split",
    "unbind",
}


class CountOps(TorchDispatchMode):
    """Counts the ATen operators a piece of code dispatches: every one costs a few microseconds of overhead."""

    def __init__(self) -> None:
        super().__init__()
        self.views = self.kernels = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in VIEW_OPS:
            self.views += 1
        else:
            self.kernels += 1
        return func(*args, **(kwargs or {}))


def count_ops(call: Callable[[], object]) -> tuple[int, int]:
    """(kernels, views) that one call dispatches."""
    with CountOps() as counter:
        call()
    return counter.kernels, counter.views


@dataclass
class Row:
    name: str
    samples: list[float]  # seconds per call; empty when the row was read back from bench.json
    error: float | None = None  # max |result - reference|, where a reference exists
    ops: tuple[int, int] | None = None  # ATen (kernels, views) per call, for torch contenders
    scale: float = 1.0  # the loop contender times a few rows; its samples are scaled to the full table
    median: float = 0.0
    quartiles: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        if self.samples:
            q1, q2, q3 = statistics.quantiles(self.samples, n=4)
            self.median = statistics.median(self.samples) * self.scale
            self.quartiles = (q1 * self.scale, q3 * self.scale)


@dataclass
class Section:
    title: str
    rows: list[Row]
    references: list[str]  # names of rows every other row is divided by
    rounds: int
    notes: list[str] = field(default_factory=list)

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)


@dataclass
class Target:
    what: str
    ratio: float
    limit: float
    kind: str  # "at most" (ratio of times must be <= limit) or "at least" (speed-up must be >= limit)

    @property
    def met(self) -> bool:
        return self.ratio <= self.limit if self.kind == "at most" else self.ratio >= self.limit


NBSP = "\u00a0"  # keeps a number and its unit on one line in a narrow table cell
DASH = "\u2060–\u2060"  # an en dash between word joiners: a range is not broken over two lines
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_seconds(seconds: float) -> str:
    """Three significant digits (the spread between samples is wider) and a unit: '151 ms', '7.40 µs'."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale or unit == "µs":
            value = seconds / scale
            decimals = min(2, max(0, 2 - math.floor(math.log10(value)))) if value > 0 else 0
            return f"{value:.{decimals}f}{NBSP}{unit}"
    raise AssertionError("unreachable")


def format_range(low: float, high: float) -> str:
    """'138–165 ms': the unit once when both ends share it."""
    a, b = format_seconds(low).split(NBSP), format_seconds(high).split(NBSP)
    if a[1] == b[1]:
        return f"{a[0]}{DASH}{b[0]}{NBSP}{b[1]}"
    return f"{a[0]}{NBSP}{a[1]}{DASH}{b[0]}{NBSP}{b[1]}"


def format_power(value: float, digits: int) -> str:
    """'2.8×10⁻⁴' (``digits`` after the point): a cell that does not break at the exponent's minus."""
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa}×10{str(int(exponent)).translate(SUPERSCRIPT)}"


def format_error(error: float | None) -> str:
    if error is None:
        return "—"
    if error == 0:
        return "0"
    return format_power(error, 1)


def short_label(name: str) -> str:
    """Column label for a reference row: 'floor', 'HF' or 'posenc'."""
    return name.split(":")[0].split(" ")[0]


def course_notation(title: str) -> str:
    """A title or note in the course's notation: n_h heads of width d_h, tables of s rows and d columns."""
    title = title.replace("(b, h, s, d)", "(b, n_h, s, d_h)").replace("(b, s, h, d)", "(b, s, n_h, d_h)")
    title = title.replace("(h, ", "(n_h, ")
    return re.sub(r"table, (\d+) × (\d+)", r"table, (s, d) = (\1, \2)", title)


def section_table(section: Section) -> str:
    """The section's title line and its table."""
    with_ops = any(row.ops for row in section.rows)
    header = (
        ["contender", "median", "middle half"]
        + [f"×{NBSP}{short_label(ref)}" for ref in section.references]
        + ["error"]
    )
    header += ["ops"] if with_ops else []
    lines = [
        f"**{course_notation(section.title)}** ({section.rounds} interleaved rounds)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    for row in section.rows:
        q1, q3 = row.quartiles
        cells = [row.name, format_seconds(row.median), format_range(q1, q3)]
        cells += [f"{row.median / section.row(ref).median:.2f}" for ref in section.references]
        cells.append(format_error(row.error))
        if with_ops:
            cells.append("—" if row.ops is None else f"{row.ops[0]}+{row.ops[1]}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_markdown(section: Section) -> str:
    """The section's title line, table and notes."""
    return "\n\n".join([section_table(section), *map(course_notation, section.notes)])


def targets_markdown(targets: list[Target]) -> str:
    lines = ["| comparison | ratio | target | met |", "|---|---:|---:|:---:|"]
    for t in targets:
        sign = "≤" if t.kind == "at most" else "≥"
        lines.append(f"| {t.what} | {t.ratio:.2f} | {sign} {t.limit:g} | {'yes' if t.met else '**no**'} |")
    return "\n".join(lines)


TARGETS_HEADING = "**Targets** (ratios of medians)"


def formula(call: Callable[[], T]) -> Callable[[], T]:
    """``call`` with every fast path off: posenc_lib's reference formula."""

    def run() -> T:
        with fast.disabled():
            return call()

    return run


def max_error(result: torch.Tensor, reference: torch.Tensor) -> float:
    return float((result.double() - reference.double()).abs().max())


def require(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"equality check failed before timing: {message}")


# ----------------------------------------------------------------------------------------------
# peers


def load_torchtune_rope() -> type:
    """torchtune's RotaryPositionalEmbeddings from its single file, without importing the torchtune package."""
    spec = importlib.util.find_spec("torchtune")
    if spec is None or spec.submodule_search_locations is None:
        raise SystemExit("torchtune is not installed: run `make bench` (pip install --no-deps torchtune==0.6.1)")
    path = pathlib.Path(spec.submodule_search_locations[0]) / "modules" / "position_embeddings.py"
    module_spec = importlib.util.spec_from_file_location("torchtune_position_embeddings", path)
    if module_spec is None or module_spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.RotaryPositionalEmbeddings


def hf_cos_sin(shape: tuple[int, int, int, int], positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin as HF's own LlamaRotaryEmbedding makes them, (1, s, d) float32 (computed once, outside the timing)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    b, h, s, d = shape
    config = LlamaConfig(
        hidden_size=h * d,
        num_attention_heads=h,
        head_dim=d,
        max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    rotary = LlamaRotaryEmbedding(config)
    return rotary(torch.empty(1, dtype=torch.float32), positions[None])


# ----------------------------------------------------------------------------------------------
# cases


def rope_section(shape: tuple[int, int, int, int], start: int, rounds: int) -> Section:
    from rotary_embedding_torch import RotaryEmbedding as LucidrainsRotary
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    b, h, s, d = shape
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)  # (b, h, s, d)
    q_bshd, k_bshd = q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous()  # torchtune's (b, s, h, d)
    positions = torch.arange(start, start + s)

    cos, sin = hf_cos_sin(shape, positions)  # (1, s, d) each
    torchtune = load_torchtune_rope()(d, max_seq_len=4096)
    tt_positions = None if start == 0 else positions[None]  # (1, s)
    lucid = LucidrainsRotary(dim=d)
    lucid.rotate_queries_or_keys(torch.zeros(1, 1, 4096, d))  # fills its cache, as a prefill would
    half = pe.RotaryEmbedding(d, 4096, layout="half")
    interleaved = pe.RotaryEmbedding(d, 4096, layout="interleaved")
    q_buffer, k_buffer = torch.empty_like(q), torch.empty_like(k)

    contenders: dict[str, Callable[[], object]] = {
        "floor: clone q and k": lambda: (q.clone(), k.clone()),
        "HF apply_rotary_pos_emb (half)": lambda: apply_rotary_pos_emb(q, k, cos, sin),
        "torchtune (interleaved)": lambda: (
            torchtune(q_bshd, input_pos=tt_positions),
            torchtune(k_bshd, input_pos=tt_positions),
        ),
        "rotary-embedding-torch (interleaved)": lambda: (
            lucid.rotate_queries_or_keys(q, offset=start),
            lucid.rotate_queries_or_keys(k, offset=start),
        ),
        "posenc rotate_qk (half)": lambda: half.rotate_qk(q, k, offset=start),
        "posenc rotate_qk (interleaved)": lambda: interleaved.rotate_qk(q, k, offset=start),
        "posenc module, q then k (half)": lambda: (half(q, offset=start), half(k, offset=start)),
        "posenc module, q then k (interleaved)": lambda: (interleaved(q, offset=start), interleaved(k, offset=start)),
        "posenc apply_rope (half, no cache)": lambda: (pe.apply_rope(q, offset=start), pe.apply_rope(k, offset=start)),
        "posenc formula (half)": formula(lambda: half.rotate_qk(q, k, offset=start)),
        "posenc formula (interleaved)": formula(lambda: interleaved.rotate_qk(q, k, offset=start)),
        "copy into existing buffers": lambda: (q_buffer.copy_(q), k_buffer.copy_(k)),
    }

    # equality before timing: every contender against a float64 reference in its own layout
    reference = {
        layout: (
            pe.apply_rope(q.double(), offset=start, layout=layout),
            pe.apply_rope(k.double(), offset=start, layout=layout),
        )
        for layout in ("half", "interleaved")
    }
    outputs = {
        "HF apply_rotary_pos_emb (half)": ("half", apply_rotary_pos_emb(q, k, cos, sin)),
        "torchtune (interleaved)": (
            "interleaved",
            tuple(torchtune(x, input_pos=tt_positions).transpose(1, 2) for x in (q_bshd, k_bshd)),
        ),
        "rotary-embedding-torch (interleaved)": (
            "interleaved",
            tuple(lucid.rotate_queries_or_keys(x, offset=start) for x in (q, k)),
        ),
        "posenc rotate_qk (half)": ("half", half.rotate_qk(q, k, offset=start)),
        "posenc rotate_qk (interleaved)": ("interleaved", interleaved.rotate_qk(q, k, offset=start)),
        "posenc module, q then k (half)": ("half", (half(q, offset=start), half(k, offset=start))),
        "posenc module, q then k (interleaved)": (
            "interleaved",
            (interleaved(q, offset=start), interleaved(k, offset=start)),
        ),
        "posenc apply_rope (half, no cache)": (
            "half",
            (pe.apply_rope(q, offset=start), pe.apply_rope(k, offset=start)),
        ),
        "posenc formula (half)": ("half", contenders["posenc formula (half)"]()),
        "posenc formula (interleaved)": ("interleaved", contenders["posenc formula (interleaved)"]()),
    }
    errors: dict[str, float] = {}
    for name, (layout, (q_out, k_out)) in outputs.items():
        require(q_out.shape == q.shape and q_out.dtype == torch.float32, f"{name} returned {q_out.shape} {q_out.dtype}")
        errors[name] = max(max_error(q_out, reference[layout][0]), max_error(k_out, reference[layout][1]))
        # the peers compute angles p * theta in float32 (error up to ~1e-4 rad at p ~ 2000); posenc_lib in float64
        limit = 1e-5 if name.startswith("posenc") else 2e-3
        require(
            errors[name] <= limit, f"{name}: max error {errors[name]:.2e} > {limit:g} against the float64 reference"
        )
    del outputs

    samples = time_interleaved(contenders, rounds)
    rows = [Row(name, samples[name], errors.get(name), ops=count_ops(call)) for name, call in contenders.items()]
    where = "positions 0 .. " + str(s - 1) if start == 0 else f"one decoding step at position {start}"
    return Section(
        title=f"RoPE on q and k, float32, (b, h, s, d) = {shape}, {where}",
        rows=rows,
        references=["floor: clone q and k", "HF apply_rotary_pos_emb (half)"],
        rounds=rounds,
        notes=[
            "middle half: the 25th to 75th percentile of the samples. error: largest absolute difference from "
            "posenc_lib's float64 computation in the contender's own layout (torchtune's (b, s, h, d) output "
            "transposed back). ops: ATen operators one call dispatches, kernels (which run over data) + views "
            "(which only relabel memory), counted with a TorchDispatchMode; each costs microseconds."
        ],
    )


def sinusoidal_section(seq_len: int, d_model: int, dtype: torch.dtype, rounds: int, loop_rows: int) -> Section:
    loop = pe.sinusoidal_encoding_loop
    # equality before timing: the formula in float64 (angles rounded once) as the reference for every contender
    reference = formula(lambda: pe.sinusoidal_encoding(seq_len, d_model, dtype=torch.float64))()
    ours = pe.sinusoidal_encoding(seq_len, d_model, dtype=dtype)
    direct = formula(lambda: pe.sinusoidal_encoding(seq_len, d_model, dtype=dtype))()
    loop_table = loop(loop_rows, d_model)
    loop_name = f"Python loop ({loop_rows} rows, scaled)"
    errors = {
        "posenc sinusoidal_encoding": max_error(ours, reference),
        "posenc formula": max_error(direct, reference),
        loop_name: max_error(loop_table, reference[:loop_rows]),
    }
    limit = 1e-12 if dtype == torch.float64 else 3e-7  # float32: both round to float32 once or twice
    for name, err in errors.items():
        require(err <= limit, f"{name}: max error {err:.2e} > {limit:g}")
    require(ours.shape == (seq_len, d_model) and ours.dtype == dtype, "wrong shape or dtype")
    del reference, ours, direct, loop_table

    numpy_dtype = np.float64 if dtype == torch.float64 else np.float32
    contenders = {
        "floor: np.full": lambda: np.full((seq_len, d_model), 1.0, dtype=numpy_dtype),
        "torch.full": lambda: torch.full((seq_len, d_model), 1.0, dtype=dtype),
        "posenc sinusoidal_encoding": lambda: pe.sinusoidal_encoding(seq_len, d_model, dtype=dtype),
        "posenc formula": formula(lambda: pe.sinusoidal_encoding(seq_len, d_model, dtype=dtype)),
        loop_name: lambda: loop(loop_rows, d_model),
    }
    samples = time_interleaved(contenders, rounds)
    rows = [
        Row(name, samples[name], errors.get(name), scale=seq_len / loop_rows if name == loop_name else 1.0)
        for name in contenders
    ]
    dtype_name = str(dtype).removeprefix("torch.")
    return Section(
        title=f"Sinusoidal table, {seq_len} × {d_model}, {dtype_name}",
        rows=rows,
        references=["floor: np.full", "posenc sinusoidal_encoding"],
        rounds=rounds,
        notes=[
            f"error: largest absolute difference from the formula sin/cos(p·θ) in float64. 'posenc formula' is "
            f"`sinusoidal_encoding` inside `posenc_lib.fast.disabled()`: angles p·θ in float64, one sin or cos "
            f"per entry. The loop is `{loop.__module__}.{loop.__name__}` (always float64), timed on its first "
            f"{loop_rows} rows and multiplied by {seq_len // loop_rows}. The floor fills a NumPy array: on the CPU "
            f"the table lives in memory from NumPy's allocator, which asks Linux for huge pages (torch.full's fresh "
            f"4 KiB pages cost a page fault each)."
        ],
    )


def sinusoidal_accuracy(d_model: int = 8, seq_len: int = 1_000_000) -> dict[str, Any]:
    """Max error against exact values (mpmath, 30 digits) near a few positions: formula and fast table, both dtypes."""
    bands = [1_000, 10_000, 100_000, seq_len - 8]
    theta = pe.sinusoidal_frequencies(d_model).tolist()
    mpmath.mp.dps = 30

    def exact(p: int, c: int) -> float:
        angle = mpmath.mpf(p) * mpmath.mpf(theta[c // 2])
        return float(mpmath.sin(angle) if c % 2 == 0 else mpmath.cos(angle))

    truth = {
        p: torch.tensor([[exact(p + i, c) for c in range(d_model)] for i in range(8)], dtype=torch.float64)
        for p in bands
    }
    tables = {
        "posenc formula, float64": formula(lambda: pe.sinusoidal_encoding(seq_len, d_model, dtype=torch.float64))(),
        "posenc formula, float32": formula(lambda: pe.sinusoidal_encoding(seq_len, d_model))(),
        "posenc sinusoidal_encoding, float64": pe.sinusoidal_encoding(seq_len, d_model, dtype=torch.float64),
        "posenc sinusoidal_encoding, float32": pe.sinusoidal_encoding(seq_len, d_model),
    }
    errors = {name: [max_error(table[p : p + 8], truth[p]) for p in bands] for name, table in tables.items()}
    return {"d_model": d_model, "positions": bands, "errors": errors}


def accuracy_markdown(accuracy: dict[str, Any]) -> str:
    bands = accuracy["positions"]
    lines = [
        f"**Sinusoidal table: largest error against exact values** (mpmath, 30 digits; d = {accuracy['d_model']}, "
        "8 rows from each position on, all columns)",
        "",
        "| table | " + " | ".join(f"p{NBSP}={NBSP}{p:,}" for p in bands) + " |",
        "|---|" + "---:|" * len(bands),
    ]
    for name, errs in accuracy["errors"].items():
        lines.append(f"| {name} | " + " | ".join(format_power(e, 0) for e in errs) + " |")
    return "\n".join(lines)


def alibi_compact_section(n_heads: int, k_len: int, rounds: int) -> Section:
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    ours, theirs = pe.alibi_bias_compact(n_heads, k_len), build_mpt_alibi_tensor(n_heads, k_len)
    direct = formula(lambda: pe.alibi_bias_compact(n_heads, k_len))()
    require(ours.shape == theirs.shape == direct.shape == (n_heads, 1, k_len), f"shapes {ours.shape} vs {theirs.shape}")
    torch.testing.assert_close(
        ours, theirs, rtol=1e-6, atol=0
    )  # same slopes and distances; float32 slopes may differ by an ulp
    torch.testing.assert_close(direct, theirs, rtol=1e-6, atol=0)
    errors = {"posenc alibi_bias_compact": max_error(ours, theirs), "posenc formula": max_error(direct, theirs)}
    contenders = {
        "HF build_mpt_alibi_tensor": lambda: build_mpt_alibi_tensor(n_heads, k_len),
        "posenc alibi_bias_compact": lambda: pe.alibi_bias_compact(n_heads, k_len),
        "posenc formula": formula(lambda: pe.alibi_bias_compact(n_heads, k_len)),
    }
    samples = time_interleaved(contenders, rounds)
    return Section(
        title=f"ALiBi, compact form (h, 1, s_k) = ({n_heads}, 1, {k_len}), float32",
        rows=[Row(name, samples[name], errors.get(name)) for name in contenders],
        references=["HF build_mpt_alibi_tensor"],
        rounds=rounds,
        notes=[
            "error: largest absolute difference from HF's tensor. All are one row per head; the causal mask is "
            "applied separately. 'posenc formula' computes the slopes and the product in float64 and rounds once."
        ],
    )


def alibi_full_section(n_heads: int, seq_len: int, rounds: int) -> Section:
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    def hf_full() -> torch.Tensor:  # HF's compact rows broadcast to every query, future keys masked
        mask = pe.causal_mask(seq_len, seq_len)  # (s, s) bool
        return torch.where(mask, build_mpt_alibi_tensor(n_heads, seq_len), float("-inf"))  # (h, s, s)

    # equality before timing, up to a constant per row (softmax ignores it); rows sampled to bound the cost
    ours, theirs = pe.alibi_bias(n_heads, seq_len), hf_full()
    require(ours.shape == theirs.shape == (n_heads, seq_len, seq_len), "shapes differ")
    rows_checked = torch.arange(0, seq_len, 61)
    a, b = ours[:, rows_checked], theirs[:, rows_checked]  # (h, r, s)
    require(torch.equal(torch.isinf(a), torch.isinf(b)), "masks differ")
    shift = torch.where(torch.isinf(a), 0.0, a - b)  # (h, r, s): constant along each row where finite
    row_constant = shift[..., :1]  # key 0 is never masked
    spread = float((torch.where(torch.isinf(a), row_constant, shift) - row_constant).abs().max())
    require(spread < 2e-3, f"bias rows differ by more than a constant: {spread}")
    del ours, theirs, a, b, shift
    gc.collect()

    contenders = {
        "floor: torch.full": lambda: torch.full((n_heads, seq_len, seq_len), 1.0),
        "HF rows + causal mask (torch.where)": hf_full,
        "posenc alibi_bias": lambda: pe.alibi_bias(n_heads, seq_len),
    }
    samples = time_interleaved(contenders, rounds)
    return Section(
        title=f"ALiBi, full causal bias (h, s_q, s_k) = ({n_heads}, {seq_len}, {seq_len}), float32 "
        f"({n_heads * seq_len * seq_len * 4 / 2**30:.1f} GiB each)",
        rows=[Row(name, samples[name]) for name in contenders],
        references=["floor: torch.full", "HF rows + causal mask (torch.where)"],
        rounds=rounds,
        notes=[
            f"Checked before timing: same -inf pattern, and on every 61st query row the two biases differ by a "
            f"constant along the row (largest deviation {spread:.1e}), which softmax ignores. The formula (float64, "
            f"several full-size temporaries) is not timed at this size."
        ],
    )


# ----------------------------------------------------------------------------------------------
# targets, and the machine


def targets_for(sections: dict[str, Section]) -> list[Target]:
    targets: list[Target] = []
    for key in ("rope_long", "rope_decode"):
        section = sections[key]
        shape = section.title.split("= ")[1].split(")")[0] + ")"
        for layout in ("half", "interleaved"):
            ours = section.row(f"posenc rotate_qk ({layout})").median
            peers: list[tuple[str, float]] = [
                ("HF apply_rotary_pos_emb (half)", 0.8),
                ("torchtune (interleaved)", 1.0),
                ("rotary-embedding-torch (interleaved)", 1.0),
            ]
            if key == "rope_long":
                # the half-split case: pairs with no complex view, three passes, two over half-rows (the appendix).
                # No floor target for one decoding step: 16 KiB per tensor costs a call's overhead, not memory
                # traffic, and a rotation takes at least three calls where the floor takes one
                peers.append(("floor: clone q and k", 2.5 if layout == "half" else 2.0))
            for peer, limit in peers:
                short = peer.split(" (")[0].replace("floor: clone q and k", "clone floor")
                targets.append(
                    Target(
                        f"RoPE {shape}, posenc_lib {layout} / {short}",
                        ours / section.row(peer).median,
                        limit,
                        "at most",
                    )
                )
    for key in ("sin64", "sin32"):
        section = sections[key]
        ours = section.row("posenc sinusoidal_encoding").median
        loop = next(r for r in section.rows if r.name.startswith("Python loop")).median
        dtype = section.title.rsplit(", ", 1)[1]
        targets.append(Target(f"sinusoidal {dtype}: speed-up over the Python loop", loop / ours, 50.0, "at least"))
        targets.append(
            Target(
                f"sinusoidal {dtype}: posenc_lib / floor", ours / section.row("floor: np.full").median, 3.0, "at most"
            )
        )
    section = sections["alibi_compact"]
    targets.append(
        Target(
            "ALiBi compact (32, 1, 4096): posenc_lib / HF",
            section.row("posenc alibi_bias_compact").median / section.row("HF build_mpt_alibi_tensor").median,
            1.0,
            "at most",
        )
    )
    section = sections["alibi_full"]
    targets.append(
        Target(
            "ALiBi full causal: posenc_lib / HF rows broadcast + mask",
            section.row("posenc alibi_bias").median / section.row("HF rows + causal mask (torch.where)").median,
            1.0,
            "at most",
        )
    )
    return targets


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        kib = int(pathlib.Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    versions = {}
    for package in ("torch", "numpy", "transformers", "torchtune", "rotary-embedding-torch"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M"),
    }


def report_markdown(info: dict[str, Any], sections: dict[str, Section], accuracy: dict[str, Any]) -> str:
    """bench.md: the machine line, each section and the exactness table, each between HTML-comment markers.

    A page includes one part with MyST's ``{include}`` and ``:start-after:`` / ``:end-before:``:
    ``<!-- key -->`` title and table ``<!-- key notes -->`` notes ``<!-- /key -->`` for each section
    key (rope_long, rope_decode, sin64, sin32, alibi_compact, alibi_full); ``<!-- machine -->`` and
    ``<!-- sinusoidal_accuracy -->``, each closed by ``<!-- /... -->``. The markers are invisible on
    GitHub and never reach the page. The targets stay in bench.json.
    """
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    start, end = info["load_average_at_start"][0], info["load_average_at_end"][0]
    lines = [
        "<!-- machine -->",
        "",
        f"Measured by `make bench` on {info['date_utc']} UTC: {info['cpu']}, {info['logical_cpus']} logical CPUs "
        f"(torch uses {info['torch_threads']} threads), {info['memory']} RAM, {info['os']}, Python {info['python']}; "
        f"{versions}. One-minute load average: {start} at the start, {end} at the end.",
        "",
        "<!-- /machine -->",
        "",
    ]
    for key, section in sections.items():
        lines += [f"<!-- {key} -->", "", section_table(section), "", f"<!-- {key} notes -->", ""]
        for note in section.notes:
            lines += [course_notation(note), ""]
        lines += [f"<!-- /{key} -->", ""]
    lines += ["<!-- sinusoidal_accuracy -->", "", accuracy_markdown(accuracy), "", "<!-- /sinusoidal_accuracy -->"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few rounds, to check that everything runs")
    parser.add_argument(
        "--out-dir",
        type=pathlib.Path,
        default=None,
        help="where to write bench.json and bench.md (default: book/data, or nowhere with --quick)",
    )
    parser.add_argument(
        "--render",
        action="store_true",
        help="time nothing: rewrite bench.md from the bench.json of an earlier run (after a format change)",
    )
    args = parser.parse_args(argv)
    out_dir = args.out_dir or (None if args.quick else ROOT / "book" / "data")
    if args.render:
        return render(out_dir or ROOT / "book" / "data")
    torch.manual_seed(0)
    quick = args.quick

    info = machine()
    print(
        f"{info['cpu']}, {info['logical_cpus']} CPUs, torch {info['versions']['torch']}, load {info['load_average_at_start']}",
        flush=True,
    )
    sections: dict[str, Section] = {}
    with torch.no_grad():
        steps = [
            ("rope_long", lambda: rope_section((4, 16, 2048, 64), 0, 3 if quick else 25)),
            ("rope_decode", lambda: rope_section((1, 32, 1, 128), 1000, 50 if quick else 3000)),
            ("sin64", lambda: sinusoidal_section(8192, 1024, torch.float64, 3 if quick else 21, 16)),
            ("sin32", lambda: sinusoidal_section(8192, 1024, torch.float32, 3 if quick else 21, 16)),
            ("alibi_compact", lambda: alibi_compact_section(32, 4096, 50 if quick else 2000)),
            # 2048 tokens: (32, 4096, 4096) is 2 GiB, past posenc_lib's 1 GiB budget per tensor (MAX_TENSOR_BYTES)
            ("alibi_full", lambda: alibi_full_section(32, 1024 if quick else 2048, 2 if quick else 10)),
        ]
        for key, run in steps:
            start = time.perf_counter()
            sections[key] = run()
            print(f"\n{section_markdown(sections[key])}\n({time.perf_counter() - start:.0f} s)", flush=True)
    info["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    accuracy = sinusoidal_accuracy()
    print("\n" + accuracy_markdown(accuracy), flush=True)
    targets = targets_for(sections)
    print(f"\n{TARGETS_HEADING}\n\n" + targets_markdown(targets), flush=True)

    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "bench.md").write_text(report_markdown(info, sections, accuracy))
        payload = {
            "command": "make bench  (python bench/bench.py)",
            "machine": info,
            "sections": [
                {
                    "key": key,
                    "title": s.title,
                    "rounds": s.rounds,
                    "references": s.references,
                    "notes": s.notes,
                    "rows": [
                        {
                            "name": r.name,
                            "median_s": r.median,
                            "quartiles_s": list(r.quartiles),
                            "max_abs_error": r.error,
                            "ops": r.ops,
                        }
                        for r in s.rows
                    ],
                }
                for key, s in sections.items()
            ],
            "sinusoidal_accuracy": accuracy,
            "targets": [
                {"what": t.what, "ratio": t.ratio, "limit": t.limit, "kind": t.kind, "met": t.met} for t in targets
            ],
        }
        (out_dir / "bench.json").write_text(json.dumps(payload, indent=1) + "\n")
        print(f"\nwrote {out_dir / 'bench.md'} and {out_dir / 'bench.json'}")
    return 0


def render(out_dir: pathlib.Path) -> int:
    """Rewrite bench.md from bench.json: the same numbers, the current formatting."""
    payload = json.loads((out_dir / "bench.json").read_text())
    sections = {
        s["key"]: Section(
            s["title"],
            [
                Row(
                    r["name"],
                    [],
                    r["max_abs_error"],
                    tuple(r["ops"]) if r["ops"] else None,
                    median=r["median_s"],
                    quartiles=tuple(r["quartiles_s"]),
                )
                for r in s["rows"]
            ],
            s["references"],
            s["rounds"],
            s["notes"],
        )
        for s in payload["sections"]
    }
    text = report_markdown(payload["machine"], sections, payload["sinusoidal_accuracy"])
    (out_dir / "bench.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Explorable figures: a chapter's formula computed in the reader's browser, with controls, no kernel.

One call places one (the cell is tagged ``remove-input`` on the website)::

    pe.explore.rope(base=10000, head_dim=64)

Each call returns an :class:`Explorable`, which Jupyter, Colab and the website show as the same HTML:
a ``<div class="pe-explore" data-pe-kind="...">`` holding the starting parameters as JSON, the
script that draws it (``static/*.js``) and its style sheet inline. In a notebook the inline script
runs (Jupyter runs the scripts of trusted outputs: those of cells run in the session); on the
website, ``tools/course_site.py`` replaces the inline script and style sheet by one file each in
``_static/explore/``, linked only from pages that have explorables. The stored output is the same on
every machine: parameters, data and code, no random ids and no numbers computed in floating point.

Every explorable keeps, after every change, ``<script type="application/json" class="pe-state">``
holding ``{"kind", "params", "drawn"}``: its current parameters and the numbers it draws.
:func:`posenc_lib.explore.reference.reference` computes the same numbers with the library;
tests/site/test_explorables.py sets controls in a browser and compares the two.

The kinds, with the library function each one draws:

- :func:`sinusoidal`: :func:`posenc_lib.sinusoidal_encoding`, :func:`posenc_lib.sinusoidal_dot_by_distance`;
- :func:`rope`: :func:`posenc_lib.apply_rope` (one pair turning, and the score ``q · R_r k``);
- :func:`alibi`: :func:`posenc_lib.alibi_slopes`, :func:`posenc_lib.alibi_attention_span`;
- :func:`rope_scaling`: the rules of :mod:`posenc_lib.rope_scaling`;
- :func:`t5_buckets`: :func:`posenc_lib.t5_relative_position_bucket` (float32, as the library);
- :func:`experiment_curves`: chapter 12's stored accuracy per position (``book/data/experiments.json``).

:func:`fallback_caption` captions the static figure an explorable stands in for (shown in print).
"""

from __future__ import annotations

import dataclasses
import html
import json
import pathlib
from collections.abc import Iterable, Sequence
from typing import Any

from .._checks import check_bool, check_choice, check_even_int, check_positive_float, check_positive_int
from ..relative import _check_bucket_arguments
from .fallback import FallbackCaption as FallbackCaption
from .fallback import fallback_caption as fallback_caption

STATIC = pathlib.Path(__file__).with_name("static")
KIND_FILES = {
    "sinusoidal": "sinusoidal.js",
    "rope": "rope.js",
    "alibi": "alibi.js",
    "rope_scaling": "rope_scaling.js",
    "t5_buckets": "t5.js",
    "experiment_curves": "experiment_curves.js",
    "quiz": "quiz.js",
}
STYLE_FILE = "explore.css"
INLINE = "data-pe-inline"  # marks the inline script and style sheet the website build replaces
NO_SCRIPT = (
    "An interactive figure: it needs JavaScript. In Jupyter, run this cell to use it "
    "(Jupyter runs the scripts of trusted notebooks only)."
)
SCALING_METHODS = ("linear", "ntk", "dynamic_ntk", "yarn", "llama3")


def script(kinds: Iterable[str] | None = None) -> str:
    """The script that draws these kinds (all by default): core.js, one file per kind, boot.js, in one function
    scope, so that the copies a notebook's outputs carry do not collide. A classic script, not a module: pages
    opened from disk (file://) may not load modules."""
    names = list(KIND_FILES) if kinds is None else [check_choice("kind", kind, KIND_FILES) for kind in kinds]
    files = ["core.js", *(KIND_FILES[name] for name in dict.fromkeys(names)), "boot.js"]
    body = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in files)
    return f'(() => {{\n"use strict";\n{body}}})();\n'


def stylesheet() -> str:
    return (STATIC / STYLE_FILE).read_text(encoding="utf-8")


def to_json(value: Any) -> str:
    """JSON that is the same on every machine and safe inside ``<script>`` (no ``</``)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c")


@dataclasses.dataclass(frozen=True)
class Explorable:
    """An explorable figure: its kind, its starting parameters and, for stored results, its data."""

    kind: str
    params: dict[str, Any]
    description: str
    data: Any = None
    css_class: str = ""

    def container(self) -> str:
        """The figure's element, without the script and style sheet."""
        data = f'<script type="application/json" class="pe-data">{to_json(self.data)}</script>' if self.data else ""
        classes = " ".join(["pe-explore", self.css_class]).strip()
        return (
            f'<div class="{classes}" data-pe-kind="{self.kind}">'
            f'<script type="application/json" class="pe-params">{to_json(self.params)}</script>{data}'
            f'<p class="pe-nojs">{html.escape(NO_SCRIPT)}</p></div>'
        )

    def _repr_html_(self) -> str:
        return (
            f"<style {INLINE}>\n{stylesheet()}</style>\n{self.container()}\n"
            f"<script {INLINE}>\n{script([self.kind])}</script>"
        )

    def __repr__(self) -> str:
        return f"{self.description} (interactive: shown in Jupyter, Colab and on the course website)"


def _in_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low:,} and {high:,}, got {value:,}")
    return value


def _real_in_range(name: str, value: object, low: float, high: float) -> float:
    number = check_positive_float(name, value)
    if not low <= number <= high:
        raise ValueError(f"{name} must be between {low:g} and {high:g}, got {number:g}")
    return number


def sinusoidal(
    d_model: int = 64,
    base: float = 10000.0,
    *,
    layout: str = "interleaved",
    max_distance: int = 256,
    positions: int = 64,
) -> Explorable:
    """The sinusoidal table ``PE(p)`` (``positions`` rows) and ``PE(p) · PE(p + Δ)`` for ``|Δ| <= max_distance``.

    Controls: the width ``d`` (``d_model``, even), the base ``B``, the layout and the distance range.
    """
    params = {
        "d_model": _in_range("d_model", check_even_int("d_model", d_model), 2, 1024),
        "base": _real_in_range("base", base, 2.0, 1e12),
        "layout": check_choice("layout", layout, ("interleaved", "concatenated")),
        "max_distance": _in_range("max_distance", check_positive_int("max_distance", max_distance), 1, 8192),
        "positions": _in_range("positions", check_positive_int("positions", positions), 1, 256),
    }
    return Explorable("sinusoidal", params, f"Sinusoidal table and dot product, d = {d_model}, B = {base:g}")


def rope(
    base: float = 10000.0,
    head_dim: int = 64,
    *,
    layout: str = "half",
    vector: str = "ones",
    pair: int = 0,
    position: int = 8,
    max_distance: int = 512,
) -> Explorable:
    """One RoPE pair of a query turning with its position, and the score ``q · R_r k`` for ``r = 0 .. max_distance``.

    ``q = k`` is all ones (``vector="ones"``) or 1 in its first half and 0.3 in its second
    (``"split"``), as stored coordinates: then the layout (``"half"`` or ``"interleaved"``) decides
    which coordinates turn together, and changes the score. Controls: ``B``, ``d_h``, the layout,
    the vector, the pair ``ℓ``, the position ``p`` (0 .. 127, with a Play button) and the range of ``r``.
    """
    head_dim = _in_range("head_dim", check_even_int("head_dim", head_dim), 2, 512)
    if isinstance(pair, bool) or not isinstance(pair, int) or not 0 <= pair < head_dim // 2:
        raise ValueError(f"pair must be an integer in 0 .. head_dim/2 - 1 = {head_dim // 2 - 1}, got {pair!r}")
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= 127:
        raise ValueError(f"position must be an integer in 0 .. 127, got {position!r}")
    params = {
        "base": _real_in_range("base", base, 2.0, 1e12),
        "head_dim": head_dim,
        "layout": check_choice("layout", layout, ("half", "interleaved")),
        "vector": check_choice("vector", vector, ("ones", "split")),
        "pair": pair,
        "position": position,
        "max_distance": _in_range("max_distance", check_positive_int("max_distance", max_distance), 1, 8192),
    }
    return Explorable("rope", params, f"RoPE pair and score, B = {base:g}, d_h = {head_dim}, {layout} layout")


def alibi(n_heads: int = 8, *, mass: float = 0.9, seq_len: int = 1024) -> Explorable:
    """ALiBi's slopes for ``n_heads`` heads (the authors' rule, any count) and each head's attention span:
    the distance within which the last of ``seq_len`` queries puts ``mass`` of its attention when
    content scores are equal. Controls: ``n_h`` (1 .. 64), the share and the sequence length."""
    if isinstance(mass, bool) or not isinstance(mass, (int, float)) or not 0.0 < mass < 1.0:
        raise ValueError(f"mass must be a number between 0 and 1 (exclusive), got {mass!r}")
    params = {
        "n_heads": _in_range("n_heads", check_positive_int("n_heads", n_heads), 1, 64),
        "mass": float(mass),
        "seq_len": _in_range("seq_len", check_positive_int("seq_len", seq_len), 2, 65536),
    }
    return Explorable("alibi", params, f"ALiBi slopes and spans, {n_heads} heads")


def rope_scaling(
    factor: float = 4.0,
    original_max_len: int = 4096,
    *,
    head_dim: int = 128,
    base: float = 10000.0,
    methods: Sequence[str] = SCALING_METHODS,
    view: str = "ratio",
    seq_multiple: float | None = None,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
) -> Explorable:
    """Each pair's frequency under the context-extension rules of :mod:`posenc_lib.rope_scaling`.

    ``methods``: any of ``"linear"`` (position interpolation), ``"ntk"``, ``"dynamic_ntk"``,
    ``"yarn"``, ``"llama3"``. ``view``: ``"ratio"`` (``θ'_ℓ / θ_ℓ``) or ``"wavelength"``.
    Dynamic NTK is evaluated at a sequence of ``seq_multiple`` × ``L`` tokens (default ``α``).
    YaRN's ``beta_fast``/``beta_slow`` and Llama 3's ``low_freq_factor``/``high_freq_factor`` are
    the library's defaults unless given. Controls: the rules, ``α``, ``L``, ``s``, ``d_h``, ``B``, the view.
    """
    factor = check_positive_float("factor", factor)
    if factor < 1:
        raise ValueError(f"factor must be >= 1 (how many times longer the new context is), got {factor:g}")
    chosen = [check_choice("methods", method, SCALING_METHODS) for method in methods]
    multiple = factor if seq_multiple is None else check_positive_float("seq_multiple", seq_multiple)
    if multiple < 1:
        raise ValueError(f"seq_multiple must be >= 1 (a sequence of at least L tokens), got {multiple:g}")
    beta_fast, beta_slow = check_positive_float("beta_fast", beta_fast), check_positive_float("beta_slow", beta_slow)
    if beta_fast <= beta_slow:
        raise ValueError(f"beta_fast must be greater than beta_slow, got {beta_fast:g} <= {beta_slow:g}")
    low, high = (
        check_positive_float("low_freq_factor", low_freq_factor),
        check_positive_float("high_freq_factor", high_freq_factor),
    )
    if high <= low:
        raise ValueError(f"high_freq_factor must be greater than low_freq_factor, got {high:g} <= {low:g}")
    params = {
        "factor": factor,
        "original_max_len": _in_range(
            "original_max_len", check_positive_int("original_max_len", original_max_len), 2, 2**20
        ),
        "head_dim": _in_range("head_dim", check_even_int("head_dim", head_dim), 4, 512),
        "base": _real_in_range("base", base, 2.0, 1e12),
        "methods": chosen,
        "view": check_choice("view", view, ("ratio", "wavelength")),
        "seq_multiple": multiple,
        "beta_fast": beta_fast,
        "beta_slow": beta_slow,
        "low_freq_factor": low,
        "high_freq_factor": high,
    }
    return Explorable("rope_scaling", params, f"RoPE context extension, α = {factor:g}, L = {original_max_len}")


def t5_buckets(
    num_buckets: int = 32, max_distance: int = 128, *, bidirectional: bool = True, probe: int | None = None
) -> Explorable:
    """T5's bucket of each relative position ``r`` in ``-2 max_distance .. 2 max_distance``; ``probe`` is the
    ``r`` whose bucket is spelled out (default ``-max_distance // 4``). Controls: encoder or decoder,
    the bucket count, the maximum distance (up to 4096) and the probe."""
    num_buckets, max_distance = _check_bucket_arguments(
        check_bool("bidirectional", bidirectional), num_buckets, max_distance
    )
    _in_range("num_buckets", num_buckets, 2, 256)
    _in_range("max_distance", max_distance, 2, 4096)
    probe = -max_distance // 4 if probe is None else probe
    if isinstance(probe, bool) or not isinstance(probe, int) or abs(probe) > 2 * max_distance:
        raise ValueError(f"probe must be an integer with |probe| <= 2 max_distance = {2 * max_distance}, got {probe!r}")
    params = {"num_buckets": num_buckets, "max_distance": max_distance, "bidirectional": bidirectional, "probe": probe}
    return Explorable("t5_buckets", params, f"T5 buckets, {num_buckets} buckets, max distance {max_distance}")


# ------------------------------------------------------------------ chapter 12's stored curves

SCHEME_LABELS = {"learned": "learned (clamped)"}
METHOD_LABELS = {
    "plain": "plain RoPE",
    "linear": "PI",
    "ntk": "NTK-aware",
    "dynamic_ntk": "dynamic NTK",
    "yarn": "YaRN",
    "llama3": "Llama 3",
}
TASK_LABELS = {"language": "Tiny language", "copy": "Copy three back"}
VIEWS = ("schemes", "extension_2", "extension_4", "fine_tuned")


def curve_runs(results: dict, task: str, view: str) -> dict[str, dict[str, list[float | None]]]:
    """The stored accuracy per position bucket of every run of a view: ``{series: {seed: values}}``.

    ``view``: ``"schemes"`` (each position scheme), ``"extension_2"`` / ``"extension_4"`` (RoPE
    models stretched to ``α`` times the training length by each rule, without fine-tuning),
    ``"fine_tuned"`` (each rule after the stored fine-tuning steps).
    """
    settings = results["settings"]
    runs = [run for run in results["runs"] if run["experiment"] == task]
    if not runs:
        raise ValueError(f"task must be one of the decoder tasks in results, got {task!r}")
    check_choice("view", view, VIEWS)
    found: dict[str, dict[str, list[float | None]]] = {}
    if view == "schemes":
        for scheme in settings["schemes"]:
            found[scheme] = {str(r["seed"]): r["eval"]["accuracy_by_position"] for r in runs if r["scheme"] == scheme}
        return found
    rope_runs = [r for r in runs if r["scheme"] == "rope"]
    extension = settings["extension"]
    if view == "fine_tuned":
        factor = str(extension["fine_tune"]["factor"])
        for method in extension["fine_tuned"]:
            found[method] = {
                str(r["seed"]): r["extension"]["fine_tune"][factor][method]["accuracy_by_position"] for r in rope_runs
            }
        return found
    factor = view.split("_")[1]
    for method in extension["methods"]:
        found[method] = {
            str(r["seed"]): r["extension"]["no_fine_tune"][method][factor]["accuracy_by_position"] for r in rope_runs
        }
    return found


def experiment_curves(
    results: dict,
    *,
    task: str = "language",
    view: str = "schemes",
    tasks: Sequence[str] = ("language", "copy"),
    views: Sequence[str] = VIEWS,
    seeds: Sequence[int] | None = None,
) -> Explorable:
    """Chapter 12's accuracy per position, averaged over the seeds a reader picks.

    ``results``: the contents of ``book/data/experiments.json`` (the chapter's ``results``). Only the
    curves of ``tasks`` and ``views`` are embedded (see :func:`curve_runs`), with the stored values
    as they are; ``task`` and ``view`` are shown first. Controls: the task, the view, the curves, the seeds.
    """
    settings = results["settings"]
    decoder = settings["decoder"]
    tasks = [check_choice("tasks", name, list(settings["decoder_tasks"])) for name in tasks]
    views = [check_choice("views", name, VIEWS) for name in views]
    task, view = check_choice("task", task, tasks), check_choice("view", view, views)
    all_seeds = list(settings["decoder_seeds"])
    chosen_seeds = all_seeds if seeds is None else [check_choice("seeds", seed, all_seeds) for seed in seeds]
    labels = {
        "schemes": "the five position schemes",
        "extension_2": "RoPE at α = 2, no fine-tuning",
        "extension_4": "RoPE at α = 4, no fine-tuning",
        "fine_tuned": f"RoPE at α = {settings['extension']['fine_tune']['factor']}, "
        f"{settings['extension']['fine_tune']['steps']} fine-tuning steps",
    }
    data: dict[str, Any] = {"bucket": decoder["bucket"], "train_len": decoder["train_len"], "seeds": all_seeds}
    data["length"] = decoder["train_len"] * decoder["eval_factor"]
    data["tasks"] = {}
    for name in tasks:
        task_views = {}
        for view_name in views:
            runs = curve_runs(results, name, view_name)
            buckets = len(next(iter(next(iter(runs.values())).values())))
            names = SCHEME_LABELS if view_name == "schemes" else METHOD_LABELS
            task_views[view_name] = {
                "label": labels[view_name],
                "centres": [(i + 0.5) * decoder["bucket"] for i in range(buckets)],
                "length": buckets * decoder["bucket"],
                "series": {
                    series: {"label": names.get(series, series), "runs": by_seed} for series, by_seed in runs.items()
                },
                "order": list(runs),  # (the JSON's keys are sorted)
            }
        vocab = settings["decoder_tasks"][name].get("vocab_size")
        chance = 1 / vocab if name == "copy" and vocab else None
        data["tasks"][name] = {
            "label": TASK_LABELS.get(name, name),
            "views": task_views,
            "chance": chance,
            "order": views,
        }
    data["order"] = tasks
    series = list(data["tasks"][task]["views"][view]["series"])
    params = {"task": task, "view": view, "series": series, "seeds": chosen_seeds}
    return Explorable("experiment_curves", params, f"Chapter 12's accuracy per position ({task}, {view})", data=data)

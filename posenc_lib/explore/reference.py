"""What each explorable should draw, computed by the library: the reference the browser tests compare with.

:func:`reference` takes the state an explorable publishes (``{"kind", "params", "drawn"}``, see
:mod:`posenc_lib.explore`) and returns, for its ``params``, the same keys as its ``drawn``, computed
with the library's functions in float64 (T5's buckets as the library computes them, in float32).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .. import rope_scaling as scaling
from ..alibi import alibi_slopes
from ..analysis import alibi_attention_span, sinusoidal_dot_by_distance
from ..relative import t5_relative_position_bucket
from ..rope import apply_rope, rope_angles, rope_frequencies, wavelengths
from ..sinusoidal import sinusoidal_encoding
from . import curve_runs


def _sinusoidal(p: dict, results: Any) -> dict:
    distance = torch.arange(-p["max_distance"], p["max_distance"] + 1)
    table = sinusoidal_encoding(p["positions"], p["d_model"], base=p["base"], layout=p["layout"], dtype=torch.float64)
    dot = sinusoidal_dot_by_distance(distance, p["d_model"], base=p["base"])
    return {"table": table.tolist(), "distance": distance.tolist(), "dot": dot.tolist()}


def rope_vector(kind: str, head_dim: int) -> torch.Tensor:
    """The explorable's query (= key), ``(d_h,)`` float64: all ones, or 1 then 0.3 (``"split"``)."""
    vector = torch.ones(head_dim, dtype=torch.float64)
    if kind == "split":
        vector[head_dim // 2 :] = 0.3
    return vector


def _rope(p: dict, results: Any) -> dict:
    d_h, layout, pair = p["head_dim"], p["layout"], p["pair"]
    q = rope_vector(p["vector"], d_h)  # (d_h,); k = q
    positions = torch.arange(p["position"] + 1)
    turned = apply_rope(q.expand(len(positions), d_h), positions, base=p["base"], layout=layout)  # (p + 1, d_h)
    columns = [pair, pair + d_h // 2] if layout == "half" else [2 * pair, 2 * pair + 1]
    angle = rope_angles(torch.tensor([p["position"]]), rope_frequencies(d_h, p["base"]))[0, pair]
    r = torch.arange(p["max_distance"] + 1)
    keys = apply_rope(q.expand(len(r), d_h), r, base=p["base"], layout=layout)  # (n, d_h): k at positions r
    query = apply_rope(q[None], torch.tensor([0]), base=p["base"], layout=layout)[0]  # (d_h,): q at position 0
    return {
        "pair_path": turned[:, columns].tolist(),
        "angle": angle.item(),
        "r": r.tolist(),
        "score": (keys @ query).tolist(),
    }


def _alibi(p: dict, results: Any) -> dict:
    n = p["n_heads"]
    heads = torch.arange(1, n + 1, dtype=torch.float64)
    return {
        "slopes": alibi_slopes(n).tolist(),
        "naive": (2.0 ** (-8 * heads / n)).tolist(),
        "spans": alibi_attention_span(n, p["seq_len"], p["mass"]).tolist(),
    }


def _rope_scaling(p: dict, results: Any) -> dict:
    theta = rope_frequencies(p["head_dim"], p["base"])
    factor, length = p["factor"], p["original_max_len"]
    rules: dict[str, Callable[[], torch.Tensor]] = {
        "linear": lambda: scaling.linear_scaling_frequencies(theta, factor),
        "ntk": lambda: scaling.ntk_aware_frequencies(theta, factor),
        "dynamic_ntk": lambda: scaling.dynamic_ntk_frequencies(
            theta, round(p["seq_multiple"] * length), length, factor
        ),
        "yarn": lambda: scaling.yarn_frequencies(
            theta, factor, length, beta_fast=p["beta_fast"], beta_slow=p["beta_slow"]
        ),
        "llama3": lambda: scaling.llama3_frequencies(
            theta, factor, length, low_freq_factor=p["low_freq_factor"], high_freq_factor=p["high_freq_factor"]
        ),
    }
    methods = {}
    for method in p["methods"]:
        frequency = rules[method]()
        methods[method] = {"frequency": frequency.tolist(), "wavelength": wavelengths(frequency).tolist()}
    return {"frequency": theta.tolist(), "wavelength": wavelengths(theta).tolist(), "methods": methods}


def _t5_buckets(p: dict, results: Any) -> dict:
    options = {"bidirectional": p["bidirectional"], "num_buckets": p["num_buckets"], "max_distance": p["max_distance"]}
    r = torch.arange(-2 * p["max_distance"], 2 * p["max_distance"] + 1)
    probe = t5_relative_position_bucket(torch.tensor(p["probe"]), **options)
    return {"r": r.tolist(), "bucket": t5_relative_position_bucket(r, **options).tolist(), "probe_bucket": probe.item()}


def _experiment_curves(p: dict, results: Any) -> dict:
    if results is None:
        raise ValueError("results must be the contents of experiments.json for an experiment_curves state")
    runs = curve_runs(results, p["task"], p["view"])
    length = len(next(iter(next(iter(runs.values())).values())))  # position buckets
    series = {}
    for name in p["series"]:
        chosen = [runs[name][str(seed)] for seed in p["seeds"]]
        series[name] = [
            None
            if not chosen or any(run[i] is None for run in chosen)
            else sum(float(run[i] or 0) for run in chosen) / len(chosen)
            for i in range(length)
        ]
    bucket = results["settings"]["decoder"]["bucket"]
    return {"centres": [(i + 0.5) * bucket for i in range(length)], "series": series}


REFERENCES: dict[str, Callable[[dict, Any], dict]] = {
    "sinusoidal": _sinusoidal,
    "rope": _rope,
    "alibi": _alibi,
    "rope_scaling": _rope_scaling,
    "t5_buckets": _t5_buckets,
    "experiment_curves": _experiment_curves,
}


def reference(state: dict, results: dict | None = None) -> dict:
    """The numbers the explorable of this state should draw, computed by the library (``results``: the
    contents of experiments.json, for ``experiment_curves``)."""
    if state.get("kind") not in REFERENCES:
        raise ValueError(f"state['kind'] must be one of {sorted(REFERENCES)}, got {state.get('kind')!r}")
    return REFERENCES[state["kind"]](state["params"], results)

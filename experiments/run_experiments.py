"""Train the tiny Transformers of the experiments chapter and write what they measured to a JSON file.

Usage (from the repository root; ``make experiments`` runs exactly this):

    python experiments/run_experiments.py [--out book/data/experiments.json] [--workers 2]

Experiments (every setting with several seeds; ``all_specs()`` lists the runs):

1. ``order``: a bidirectional encoder, mean-pooled, classifies whether token A
   comes before token B (``posenc_lib.tasks.order_batch``), for every scheme;
   ``learned_init``: the same with the learned table drawn at a larger scale.
2. ``language`` and ``copy``: a causal decoder trained at length ``L = 32`` on a
   tiny synthetic language (``tasks.markov_batch``) or on copying the token three
   steps back (``tasks.lag_copy_batch``), evaluated on sequences of ``4L``
   tokens, also with a sliding window of ``L`` keys; the attention per relative
   offset is recorded. The RoPE runs are also extended to ``2L`` and ``4L`` with
   the methods of ``context_extension.py``, without and with a short fine-tune.
3. ``alibi_long`` and ``alibi_slopes``: ALiBi on the copy task with four times
   the training steps, or with all slopes multiplied by a constant.

Every run is seeded (initial weights and batches) and uses one torch thread,
so a run is reproducible on its own: ``run_spec(spec)`` gives the same numbers
whether it runs here, in a worker process, or in ``tests/experiments/test_experiments.py``.
Runs are spread over ``--workers`` processes; that changes only the wall time.
The RoPE model of the tiny language with seed 0 is also saved (``STORED_MODEL``)
for the chapter's exercise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import copy
import datetime
import hashlib
import json
import math
import multiprocessing
import os
import pathlib
import platform
import sys
import time
from typing import Any

import torch
from tqdm import tqdm

import context_extension as extension
import posenc_lib
import posenc_lib.model as model_module
from posenc_lib import LearnedPositionalEmbedding, tasks, training
from posenc_lib.model import TinyTransformer, TransformerConfig, build_model, count_parameters

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "book" / "data" / "experiments.json"
# the schemes these experiments train (T5's learned bias is a scheme of the model too; the real-text
# experiments train it)
SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")
ORDER_SEEDS = (0, 1, 2, 3, 4)
DECODER_SEEDS = (0, 1, 2, 3, 4, 5)
MODEL: dict[str, Any] = {"d_model": 64, "n_heads": 4, "n_layers": 2, "d_ff": 128}

# Experiment 1: does the model see order?
ORDER: dict[str, Any] = {
    "vocab_size": 12,  # A, B and 10 filler tokens
    "seq_len": 16,
    "batch_size": 64,
    "steps": 300,
    "lr": 3e-3,
    "eval_groups": 512,  # 4 rows each: 2048 evaluation sequences
    "eval_seed": 1000,
}
# the learned table drawn from N(0, init_std^2) instead of the default N(0, 0.02^2)
LEARNED_INIT: dict[str, Any] = {"init_std": 1.0}
# Experiment 2: longer than training, on two causal tasks
DECODER_TASKS: dict[str, dict[str, Any]] = {
    "language": {"vocab_size": 16, "p_rule": 0.8, "rule_seed": 7},
    "copy": {"vocab_size": 16, "lag": 3},
}
DECODER: dict[str, Any] = {
    "train_len": 32,  # L
    "batch_size": 32,
    "steps": 600,
    "lr": 3e-3,
    "eval_sequences": 256,
    "eval_factor": 4,  # evaluated on sequences of 4L tokens
    "eval_seed": 2000,
    "bucket": 4,  # per-position curves are stored as means over buckets of 4 positions
    "log_every": 50,  # training curves are stored as means over blocks of 50 steps
}
# positions [start L, stop L) of a 4L evaluation; causal models compute them as in a shorter sequence
FIRST_LOSSES = 20  # decoder runs also store the loss of each of their first 20 steps
REGIONS = {"inside": (0, 1), "2x": (1, 2), "4x": (2, 4)}
WINDOW: dict[str, Any] = {"schemes": ["none", "sinusoidal", "rope", "alibi"], "window": DECODER["train_len"]}
ATTENTION: dict[str, Any] = {"queries": [16, 32], "offsets": 8}  # mean weight at offsets 0 .. -7 for queries 16 .. 31
ALIBI: dict[str, Any] = {"long_steps": 2400, "slope_scales": [0.25, 4.0]}  # both on the copy task
EXTENSION: dict[str, Any] = {
    "methods": list(extension.METHODS),
    "factors": [2, 4],
    "dynamic_bucket": 16,
    "fine_tuned": list(extension.FINE_TUNED),
    "fine_tune": {"factor": 4, "steps": 50, "batch_size": 16, "lr": 1e-3, "seed_offset": 10000},
}
STORED_MODEL: dict[str, Any] = {"experiment": "language", "scheme": "rope", "seed": 0, "file": "rope_language_seed0.pt"}
# every posenc_lib module the runs compute with: the modules this script and context_extension.py import and
# everything those import (tests/experiments/test_experiments.py derives the list from the imports)
LIBRARY_FILES = (
    "model.py",
    "training.py",
    "tasks.py",
    "attention.py",
    "alibi.py",
    "relative.py",
    "rope.py",
    "rope_scaling.py",
    "learned.py",
    "sinusoidal.py",
    "fast.py",
    "_checks.py",
    "_buffers.py",
)


def settings() -> dict:
    """Everything that defines the runs; stored with the results and compared by the tests."""
    return {
        "schemes": list(SCHEMES),
        "order_seeds": list(ORDER_SEEDS),
        "decoder_seeds": list(DECODER_SEEDS),
        "model": MODEL,
        "order": ORDER,
        "learned_init": LEARNED_INIT,
        "decoder": DECODER,
        "decoder_tasks": DECODER_TASKS,
        "regions": REGIONS,
        "window": WINDOW,
        "attention": ATTENTION,
        "alibi": ALIBI,
        "extension": EXTENSION,
        "stored_model": STORED_MODEL,
    }


def all_specs() -> list[dict]:
    """One dict per training run: ``{"experiment", "scheme", "seed"}`` and, for slope runs, ``"slope_scale"``."""
    specs = [{"experiment": "order", "scheme": s, "seed": seed} for s in SCHEMES for seed in ORDER_SEEDS]
    specs += [{"experiment": "learned_init", "scheme": "learned", "seed": seed} for seed in ORDER_SEEDS]
    specs += [
        {"experiment": task, "scheme": s, "seed": seed}
        for task in DECODER_TASKS
        for s in SCHEMES
        for seed in DECODER_SEEDS
    ]
    specs += [{"experiment": "alibi_long", "scheme": "alibi", "seed": seed} for seed in DECODER_SEEDS]
    specs += [
        {"experiment": "alibi_slopes", "scheme": "alibi", "seed": seed, "slope_scale": scale}
        for scale in ALIBI["slope_scales"]
        for seed in DECODER_SEEDS
    ]
    return specs


def spec_key(spec: dict) -> tuple:
    """What identifies a run: its experiment, scheme, seed and slope scale."""
    return spec["experiment"], spec["scheme"], spec["seed"], spec.get("slope_scale")


def _rounded(values: list[float], digits: int = 5) -> list[float | None]:
    """``digits`` significant digits (the file stays small); NaN becomes null in JSON."""
    return [None if math.isnan(v) else float(f"{v:.{digits}g}") for v in values]


def _block_means(history: list[dict], key: str, block: int) -> list[float | None]:
    """Means of ``history[i][key]`` over consecutive blocks of ``block`` steps."""
    values = [h[key] for h in history]
    return _rounded([sum(values[i : i + block]) / len(values[i : i + block]) for i in range(0, len(values), block)])


def _train(
    model, next_batch, *, steps: int, seed: int, lr: float, progress: bool, desc: str, first_steps: int | None = None
) -> list[dict]:
    """``training.train`` with a warm-up of 5% of ``steps``, stated here rather than left to the default.

    With ``first_steps`` (at most the warm-up) only the first steps of that
    schedule are trained: the warm-up's learning rates do not depend on the
    total, so these steps are exactly those of the full run (the tests use it).
    """
    warmup = max(1, steps // 20)
    if first_steps is not None:
        if not 0 < first_steps <= warmup:
            raise ValueError(f"first_steps must be in 1..{warmup} (the warm-up), got {first_steps}")
        steps = first_steps
    return training.train(model, next_batch, steps=steps, seed=seed, lr=lr, warmup=warmup, progress=progress, desc=desc)


# --- experiment 1: the encoder ------------------------------------------------------------------


def _order_run(
    scheme: str, seed: int, progress: bool, *, learned_init_std: float | None = None, first_steps: int | None = None
) -> dict:
    c = ORDER
    config = TransformerConfig(
        vocab_size=c["vocab_size"], scheme=scheme, causal=False, n_outputs=2, max_len=c["seq_len"], **MODEL
    )
    model = build_model(config, seed=seed)
    if learned_init_std is not None:  # every other weight stays that of the default `learned` run of this seed
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model.position = LearnedPositionalEmbedding(
                max_len=c["seq_len"], d_model=MODEL["d_model"], init_std=learned_init_std
            )
    history = _train(
        model,
        lambda g: tasks.order_batch(c["batch_size"], c["seq_len"], c["vocab_size"], generator=g),
        steps=c["steps"],
        seed=seed,
        lr=c["lr"],
        progress=progress,
        desc=f"order {scheme} seed {seed}",
        first_steps=first_steps,
    )
    if first_steps is not None:
        return {"train_loss": _rounded([h["loss"] for h in history])}
    eval_tokens, eval_labels = tasks.order_eval_set(
        c["eval_groups"], c["seq_len"], c["vocab_size"], seed=c["eval_seed"]
    )
    logits = training.predict(model, eval_tokens)  # (4n, 2)
    return {
        "n_params": count_parameters(model),
        "train_loss": _rounded([h["loss"] for h in history]),  # per step, on that step's batch
        "eval_accuracy": training.accuracy(logits, eval_labels),
        "eval_loss": float(training.loss_fn(logits, eval_labels)),
        **_group_diagnostics(logits, eval_labels),
    }


def _group_diagnostics(logits: torch.Tensor, labels: torch.Tensor) -> dict:
    """How the logits behave inside the evaluation set's groups of four (x, swapped, reversed, both).

    For a model blind to order, rows with the same tokens get the same logits up to float rounding, and every
    group has exactly two correct rows -- unless a prediction is a near-tie that rounding can tip either way.
    """
    groups = logits.view(-1, 4, 2)  # (n, 4 rows, 2 classes)
    margin = (logits[:, 1] - logits[:, 0]).abs().view(-1, 4)  # (n, 4): distance from a tie
    right = (logits.argmax(-1) == labels).view(-1, 4).sum(1)  # (n,): correct rows per group
    off = right != 2
    return {
        "eval_margin_median": float(margin.median()),
        "eval_max_change_same_tokens": float((groups - groups[:, :1]).abs().max()),  # rows 1-3 vs row 0
        "eval_max_change_reversal": float((groups[:, 2:] - groups[:, :2]).abs().max()),  # reversed vs original
        "eval_groups_not_two_right": int(off.sum()),
        "eval_margin_max_in_those_groups": float(margin[off].max()) if off.any() else None,
    }


# --- experiments 2 and 3: the decoder -----------------------------------------------------------


def decoder_batch(
    task: str, batch_size: int, seq_len: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of one of the decoder tasks, tokens and targets ``(b, s)``; position 0 is the BOS token."""
    t = DECODER_TASKS[task]
    if task == "language":
        rule = tasks.markov_rule(t["vocab_size"], seed=t["rule_seed"])
        return tasks.markov_batch(batch_size, seq_len, rule, p_rule=t["p_rule"], generator=generator)
    return tasks.lag_copy_batch(batch_size, seq_len, t["vocab_size"], t["lag"], generator=generator)


def decoder_eval_set(task: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed evaluation sequences of a decoder task: tokens and targets ``(n, 4L)``."""
    c = DECODER
    generator = torch.Generator().manual_seed(c["eval_seed"])
    return decoder_batch(task, c["eval_sequences"], c["eval_factor"] * c["train_len"], generator)


def summarize(hits: torch.Tensor) -> dict:
    """Accuracy per region of positions (exact means) and per bucket of positions, from ``hits`` ``(n, s)``.

    ``hits`` is 1 / 0 / NaN (not scored) per prediction; regions that the
    sequence does not reach are left out.
    """
    train_len, seq_len = DECODER["train_len"], hits.shape[1]
    names = [name for name, (_, stop) in REGIONS.items() if stop * train_len <= seq_len]
    regions = [hits[:, REGIONS[n][0] * train_len : REGIONS[n][1] * train_len].nanmean().item() for n in names]
    curve = training.bucket_means(hits.nanmean(dim=0), DECODER["bucket"])  # (s / bucket,)
    return {"regions": dict(zip(names, _rounded(regions))), "accuracy_by_position": _rounded(curve.tolist(), 4)}


def _loss_summary(logits: torch.Tensor, targets: torch.Tensor) -> dict:
    train_len = DECODER["train_len"]
    loss = training.loss_by_position(logits, targets)  # (s,)
    regions = [loss[start * train_len : stop * train_len].nanmean().item() for start, stop in REGIONS.values()]
    return {
        "loss_regions": dict(zip(REGIONS, _rounded(regions))),
        "loss_by_position": _rounded(training.bucket_means(loss, DECODER["bucket"]).tolist(), 4),
    }


def attention_by_offset(model: TinyTransformer, tokens: torch.Tensor) -> dict:
    """Mean attention weight per layer and head at offsets ``r = 0, -1, ...`` and on the BOS key.

    Queries ``ATTENTION["queries"]`` of ``tokens`` ``(n, s)``; the result holds
    ``by_offset`` ``(layers, heads, offsets)`` and ``on_bos`` ``(layers, heads)`` as lists.
    """
    start, stop = ATTENTION["queries"]
    queries = torch.arange(start, stop)  # (q,)
    offsets = torch.arange(ATTENTION["offsets"])  # (r,): the key is query - r
    by_offset, on_bos = [], []
    for weights in attention_weights(model, tokens[:, :stop]):  # (n, h, s, s) per layer
        picked = weights[:, :, queries[:, None], queries[:, None] - offsets]  # (n, h, q, r)
        by_offset.append([_rounded(row, 4) for row in picked.mean(dim=(0, 2)).tolist()])
        on_bos.append(_rounded(weights[:, :, queries, 0].mean(dim=(0, 2)).tolist(), 4))
    return {"by_offset": by_offset, "on_bos": on_bos}


def attention_weights(model: TinyTransformer, tokens: torch.Tensor) -> list[torch.Tensor]:
    """The attention weights ``(n, n_h, s, s)`` of every layer of ``model`` on ``tokens``."""
    model.eval()
    with torch.no_grad():
        return [stages["weights"] for stages in model.trace(tokens)]


@contextlib.contextmanager
def alibi_slope_scale(scale: float):
    """Multiply every ALiBi slope of the library's model by ``scale`` (> 0) inside the ``with`` block."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0 (the causal bias holds -inf for future keys), got {scale}")
    original = model_module.alibi_bias
    model_module.alibi_bias = lambda *args, **kwargs: original(*args, **kwargs) * scale  # -inf stays -inf
    try:
        yield
    finally:
        model_module.alibi_bias = original


def _extension(
    model: TinyTransformer,
    task: str,
    seed: int,
    tokens: torch.Tensor,
    targets: torch.Tensor,
    plain_hits: torch.Tensor,
    fine_tuned: tuple[str, ...],
) -> dict:
    """Context extension of a trained RoPE decoder: each method at each factor, then fine-tuned at one factor."""
    train_len, e = DECODER["train_len"], EXTENSION
    no_fine_tune: dict = {method: {} for method in e["methods"]}
    dynamic_hits = extension.dynamic_correct_by_position(model, tokens, targets, train_len, e["dynamic_bucket"])
    for factor in e["factors"]:
        seq_len = factor * train_len
        for method in e["methods"]:
            if method == "plain":  # the trained model as it is: its hits on the first seq_len positions
                hits = plain_hits[:, :seq_len]
            elif method == "dynamic_ntk":  # the factor follows the length, not `factor`
                hits = dynamic_hits[:, :seq_len]
            else:
                extended = extension.with_method(model, method, factor, train_len, seq_len)
                hits = extension.correct_by_position(extended, tokens[:, :seq_len], targets[:, :seq_len])
            no_fine_tune[method][str(factor)] = summarize(hits)
    ft = e["fine_tune"]
    fine_tune = {}
    for method in fine_tuned:
        tuned = extension.fine_tune(
            model,
            method,
            ft["factor"],
            train_len,
            lambda b, s, g: decoder_batch(task, b, s, g),
            steps=ft["steps"],
            batch_size=ft["batch_size"],
            lr=ft["lr"],
            seed=ft["seed_offset"] + seed,
        )
        seq_len = ft["factor"] * train_len
        fine_tune[method] = summarize(extension.correct_by_position(tuned, tokens[:, :seq_len], targets[:, :seq_len]))
    return {"no_fine_tune": no_fine_tune, "fine_tune": {str(ft["factor"]): fine_tune}}


def _decoder_run(
    experiment: str,
    scheme: str,
    seed: int,
    progress: bool,
    *,
    slope_scale: float | None = None,
    fine_tuned: tuple[str, ...] | None = None,
    keep_model: bool = False,
    first_steps: int | None = None,
) -> dict:
    task = "copy" if experiment.startswith("alibi") else experiment
    c, t = DECODER, DECODER_TASKS[task]
    train_len = c["train_len"]
    steps = ALIBI["long_steps"] if experiment == "alibi_long" else c["steps"]
    # token ids: vocab_size content tokens and the BOS token; predictions: content tokens only
    config = TransformerConfig(
        vocab_size=t["vocab_size"] + 1,
        n_outputs=t["vocab_size"],
        scheme=scheme,
        causal=True,
        max_len=train_len,
        **MODEL,
    )
    model = build_model(config, seed=seed)
    with alibi_slope_scale(slope_scale) if slope_scale is not None else contextlib.nullcontext():
        history = _train(
            model,
            lambda g: decoder_batch(task, c["batch_size"], train_len, g),
            steps=steps,
            seed=seed,
            lr=c["lr"],
            progress=progress,
            desc=f"{experiment} {scheme} seed {seed}",
            first_steps=first_steps,
        )
        first_losses = _rounded([h["loss"] for h in history[:FIRST_LOSSES]])
        if first_steps is not None:
            return {"train_loss_first": first_losses}
        tokens, targets = decoder_eval_set(task)  # (n, 4L) each
        result: dict = {
            "n_params": count_parameters(model),
            "train_loss_first": first_losses,  # per step, for the tests' partial re-runs
            "train_loss": _block_means(history, "loss", c["log_every"]),  # on the training batches
            "train_accuracy": _block_means(history, "accuracy", c["log_every"]),
        }
        kwargs = {}
        if scheme == "learned":  # the table has no row past L: record the error, then evaluate with clamped positions
            try:
                training.predict(model, tokens[:, : 2 * train_len])
            except ValueError as error:
                result["error_past_table"] = str(error)
            kwargs = {"clamp_positions": True}
        logits = training.predict(model, tokens, **kwargs)  # (n, 4L, vocab)
        hits = training.correct(logits, targets)  # (n, 4L)
        result["eval"] = {**summarize(hits), **_loss_summary(logits, targets)}
        result["attention"] = attention_by_offset(model, tokens)
        if experiment in DECODER_TASKS and scheme in WINDOW["schemes"]:
            windowed = training.predict(model, tokens, window=WINDOW["window"])
            result["window"] = summarize(training.correct(windowed, targets))
        if experiment in DECODER_TASKS and scheme == "rope":
            chosen = EXTENSION["fine_tuned"] if fine_tuned is None else fine_tuned
            result["extension"] = _extension(model, task, seed, tokens, targets, hits, tuple(chosen))
    if keep_model:
        result["model"] = copy.deepcopy(model.state_dict())
    return result


def run_spec(
    spec: dict,
    *,
    progress: bool = False,
    fine_tuned: tuple[str, ...] | None = None,
    keep_model: bool = False,
    first_steps: int | None = None,
) -> dict:
    """Train and evaluate one run, single-threaded; returns the spec, the metrics and the timing.

    For the tests: ``fine_tuned`` restricts the fine-tuned extension methods of a
    RoPE decoder run; ``first_steps`` trains only the first steps (at most the
    warm-up) and returns their losses; ``keep_model`` adds the trained
    ``state_dict`` as ``"model"``.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: reproducible numbers and two runs side by side on two cores
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        if spec["experiment"] in ("order", "learned_init"):
            init_std = LEARNED_INIT["init_std"] if spec["experiment"] == "learned_init" else None
            metrics = _order_run(
                spec["scheme"], spec["seed"], progress, learned_init_std=init_std, first_steps=first_steps
            )
        else:
            metrics = _decoder_run(
                spec["experiment"],
                spec["scheme"],
                spec["seed"],
                progress,
                slope_scale=spec.get("slope_scale"),
                fine_tuned=fine_tuned,
                keep_model=keep_model,
                first_steps=first_steps,
            )
        timing = {
            "wall_seconds": round(time.perf_counter() - wall, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2),
        }
    finally:
        torch.set_num_threads(threads)
    return {**spec, **metrics, **timing}


def _run_stored_or_not(spec: dict, progress: bool = False) -> dict:
    """``run_spec``; the run of ``STORED_MODEL`` also returns its weights."""
    keep = all(spec.get(key) == STORED_MODEL[key] for key in ("experiment", "scheme", "seed"))
    return run_spec(spec, progress=progress, keep_model=keep)


def _expected_cost(spec: dict) -> float:
    """Rough CPU seconds of a run, to start the longest first (two workers finish together)."""
    if spec["experiment"] == "alibi_long":
        return 36.0
    if spec["experiment"] in DECODER_TASKS and spec["scheme"] == "rope":
        return 26.0
    return 4.0 if spec["experiment"] in ("order", "learned_init") else 9.5


# --- provenance and output ----------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _file_digest(paths: list[pathlib.Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def code_files() -> list[pathlib.Path]:
    """The files ``code_digest`` covers: ``LIBRARY_FILES`` of posenc_lib, this script and context_extension.py."""
    here = pathlib.Path(__file__).resolve()
    lib = pathlib.Path(posenc_lib.__file__).parent
    return [lib / name for name in LIBRARY_FILES] + [here, here.parent / "context_extension.py"]


def _load() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def provenance(argv: list[str], workers: int) -> dict:
    return {
        "command": " ".join(["python", *argv]),
        "started_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu": _cpu_model(),
            "logical_cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "load_average_at_start": _load(),
        },
        "workers": workers,
        "torch_threads_per_run": 1,
        "code_files": [path.name for path in code_files()],
        "code_digest": _file_digest(code_files()),
    }


def to_json(record: dict) -> str:
    """JSON with one line per run, so the file is small and a re-run gives a readable diff."""
    head = {key: value for key, value in record.items() if key != "runs"}
    lines = json.dumps(head, indent=1)[:-2]  # drop the closing "\n}"
    runs = ",\n".join("  " + json.dumps(run) for run in record["runs"])
    return f'{lines},\n "runs": [\n{runs}\n ]\n}}\n'


def run_all(specs: list[dict], workers: int) -> list[dict]:
    """Every run of ``specs``, longest first over ``workers`` processes, returned in the order of ``specs``."""
    order = sorted(range(len(specs)), key=lambda i: -_expected_cost(specs[i]))
    results: list[dict | None] = [None] * len(specs)
    if workers == 1:  # one progress bar per run, from posenc_lib.training.train
        for i in order:
            results[i] = _run_stored_or_not(specs[i], progress=True)
        return results  # type: ignore[return-value]  # every slot is filled by now
    context = multiprocessing.get_context("spawn")  # no fork after torch has started threads
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(_run_stored_or_not, specs[i]): i for i in order}
        for future in tqdm(concurrent.futures.as_completed(futures), total=len(specs), desc="training runs"):
            results[futures[future]] = future.result()
    return results  # type: ignore[return-value]  # every slot is filled by now


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="where to write the JSON results")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="parallel processes")
    args = parser.parse_args(argv[1:])
    if args.workers < 1:
        parser.error("--workers must be >= 1")

    record: dict[str, Any] = {"provenance": provenance(argv, args.workers), "settings": settings()}
    start = time.perf_counter()
    runs = run_all(all_specs(), args.workers)
    p = record["provenance"]
    p["wall_seconds"] = round(time.perf_counter() - start, 1)
    p["cpu_seconds"] = round(sum(r["cpu_seconds"] for r in runs), 1)
    p["finished_utc"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    p["machine"]["load_average_at_end"] = _load()
    [stored] = [r for r in runs if "model" in r]
    state_dict = stored.pop("model")
    record["runs"] = runs

    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state_dict, args.out.parent / STORED_MODEL["file"])
    args.out.write_text(to_json(record))
    print(f"{len(runs)} runs in {p['wall_seconds']} s ({p['cpu_seconds']} s CPU); results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

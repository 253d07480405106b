"""Train the tiny Transformers of chapter 11 and write what they measured to a JSON file.

Usage (from the repository root; ``make experiments`` runs exactly this):

    python experiments/run_experiments.py [--out book/data/experiments.json] [--workers 2]

Three experiments, five positional schemes, three seeds each (45 training runs):

1. ``order``: a bidirectional encoder, mean-pooled, classifies whether token A
   comes before token B (``posenc_lib.tasks.order_batch``).
2. ``language``: a causal decoder learns next-token prediction on a tiny
   synthetic language (``posenc_lib.tasks.markov_batch``) at length 32 and is
   evaluated at lengths 32, 64 and 128.
3. ``copy``: the same, for copying the token three steps back
   (``posenc_lib.tasks.lag_copy_batch``).

Every run is seeded (initial weights and batches) and uses one torch thread,
so a run is reproducible on its own: ``run_spec(spec)`` gives the same numbers
whether it runs here, in a worker process, or in ``tests/test_experiments.py``.
Runs are spread over ``--workers`` processes; that changes only the wall time.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import multiprocessing
import os
import pathlib
import platform
import sys
import time

import torch
from tqdm import tqdm

import posenc_lib
from posenc_lib import tasks, training
from posenc_lib.model import SCHEMES, TransformerConfig, build_model, count_parameters

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "book" / "data" / "experiments.json"
SEEDS = (0, 1, 2)
LENGTH_FACTORS = (1, 2, 4)
MODEL = {"d_model": 64, "n_heads": 4, "n_layers": 2, "d_ff": 128}

# Experiment 1: does the model see order?
ORDER = {
    "vocab_size": 12,  # A, B and 10 filler tokens
    "seq_len": 16,
    "batch_size": 64,
    "steps": 300,
    "lr": 3e-3,
    "eval_groups": 512,  # 4 rows each: 2048 evaluation sequences
    "eval_seed": 1000,
}
# Experiment 2: longer than training, on two causal tasks
DECODER_TASKS = {
    "language": {"vocab_size": 16, "p_rule": 0.8, "rule_seed": 7},
    "copy": {"vocab_size": 16, "lag": 3},
}
DECODER = {
    "train_len": 32,
    "batch_size": 32,
    "steps": 600,
    "lr": 3e-3,
    "eval_sequences": 512,
    "eval_seed": 2000,
}
LIBRARY_FILES = ("model.py", "training.py", "tasks.py", "attention.py", "alibi.py", "rope.py", "learned.py", "sinusoidal.py")


def settings() -> dict:
    """Everything that defines the runs; stored with the results and compared by the tests."""
    return {
        "schemes": list(SCHEMES),
        "seeds": list(SEEDS),
        "length_factors": list(LENGTH_FACTORS),
        "model": MODEL,
        "order": ORDER,
        "decoder": DECODER,
        "decoder_tasks": DECODER_TASKS,
    }


def all_specs() -> list[dict]:
    """One dict per training run: ``{"experiment", "scheme", "seed"}``."""
    specs = [{"experiment": "order", "scheme": s, "seed": seed} for s in SCHEMES for seed in SEEDS]
    specs += [{"experiment": task, "scheme": s, "seed": seed} for task in DECODER_TASKS for s in SCHEMES for seed in SEEDS]
    return specs


def _rounded(values: list[float]) -> list[float | None]:
    """Five significant digits (the file stays small); NaN becomes null in JSON."""
    return [None if v != v else float(f"{v:.5g}") for v in values]


def _order_run(scheme: str, seed: int, progress: bool) -> dict:
    c = ORDER
    config = TransformerConfig(vocab_size=c["vocab_size"], scheme=scheme, causal=False, n_outputs=2, max_len=c["seq_len"], **MODEL)
    model = build_model(config, seed=seed)
    history = training.train(
        model, lambda g: tasks.order_batch(c["batch_size"], c["seq_len"], c["vocab_size"], generator=g),
        steps=c["steps"], seed=seed, lr=c["lr"], progress=progress, desc=f"order {scheme} seed {seed}",
    )
    eval_tokens, eval_labels = tasks.order_eval_set(c["eval_groups"], c["seq_len"], c["vocab_size"], seed=c["eval_seed"])
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


def decoder_batch(task: str, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of one of the decoder tasks, tokens and targets ``(b, s)``; position 0 is the BOS token."""
    t = DECODER_TASKS[task]
    if task == "language":
        rule = tasks.markov_rule(t["vocab_size"], seed=t["rule_seed"])
        return tasks.markov_batch(batch_size, seq_len, rule, p_rule=t["p_rule"], generator=generator)
    return tasks.lag_copy_batch(batch_size, seq_len, t["vocab_size"], t["lag"], generator=generator)


def _evaluate_decoder(model, tokens, targets, **kwargs) -> tuple[dict, torch.Tensor, torch.Tensor]:
    logits = training.predict(model, tokens, **kwargs)  # (n, s, vocab)
    summary = {"accuracy": training.accuracy(logits, targets), "loss": float(training.loss_fn(logits, targets))}
    return summary, training.accuracy_by_position(logits, targets), training.loss_by_position(logits, targets)


def _decoder_run(task: str, scheme: str, seed: int, progress: bool) -> dict:
    c, t = DECODER, DECODER_TASKS[task]
    train_len = c["train_len"]
    # token ids: vocab_size content tokens and the BOS token; predictions: content tokens only
    config = TransformerConfig(
        vocab_size=t["vocab_size"] + 1, n_outputs=t["vocab_size"], scheme=scheme, causal=True, max_len=train_len, **MODEL
    )
    model = build_model(config, seed=seed)
    history = training.train(
        model, lambda g: decoder_batch(task, c["batch_size"], train_len, g),
        steps=c["steps"], seed=seed, lr=c["lr"], progress=progress, desc=f"{task} {scheme} seed {seed}",
    )
    result: dict = {
        "n_params": count_parameters(model),
        "train_loss": _rounded([h["loss"] for h in history]),  # per step, on that step's batch
        "by_length": {},
    }
    for factor in LENGTH_FACTORS:
        # the same seed at every length, so the 2x and 4x sets are new sequences, not the 1x set extended
        generator = torch.Generator().manual_seed(c["eval_seed"] + factor)
        tokens, targets = decoder_batch(task, c["eval_sequences"], factor * train_len, generator)
        entry: dict = {"seq_len": factor * train_len}
        try:
            summary, acc_pos, loss_pos = _evaluate_decoder(model, tokens, targets)
            entry.update(summary)
        except ValueError as error:  # the learned table has no row for these positions
            entry["error"] = str(error)
        if scheme == "learned":
            clamped, acc_pos, loss_pos = _evaluate_decoder(model, tokens, targets, clamp_positions=True)
            entry["clamped"] = clamped
        result["by_length"][str(factor)] = entry
    # per-position curves of the longest evaluation (for `learned`: with clamped positions)
    result["accuracy_by_position"] = _rounded(acc_pos.tolist())
    result["loss_by_position"] = _rounded(loss_pos.tolist())
    return result


def run_spec(spec: dict, *, progress: bool = False) -> dict:
    """Train and evaluate one run, single-threaded; returns the spec, the metrics and the timing."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: reproducible numbers and two runs side by side on two cores
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        if spec["experiment"] == "order":
            metrics = _order_run(spec["scheme"], spec["seed"], progress)
        else:
            metrics = _decoder_run(spec["experiment"], spec["scheme"], spec["seed"], progress)
        timing = {"wall_seconds": round(time.perf_counter() - wall, 2), "cpu_seconds": round(time.process_time() - cpu, 2)}
    finally:
        torch.set_num_threads(threads)
    return {**spec, **metrics, **timing}


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


def provenance(argv: list[str], workers: int) -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    lib = pathlib.Path(posenc_lib.__file__).parent
    return {
        "command": " ".join(["python", *argv]),
        "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cpu": _cpu_model(),
            "logical_cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "load_average_at_start": None if load is None else [round(x, 2) for x in load],
        },
        "workers": workers,
        "torch_threads_per_run": 1,
        "code_digest": _file_digest([lib / name for name in LIBRARY_FILES] + [pathlib.Path(__file__).resolve()]),
    }


def to_json(record: dict) -> str:
    """JSON with one line per run, so the file is small and a re-run gives a readable diff."""
    head = {key: value for key, value in record.items() if key != "runs"}
    lines = json.dumps(head, indent=1)[:-2]  # drop the closing "\n}"
    runs = ",\n".join("  " + json.dumps(run) for run in record["runs"])
    return f'{lines},\n "runs": [\n{runs}\n ]\n}}\n'


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="where to write the JSON results")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="parallel processes")
    args = parser.parse_args(argv[1:])
    if args.workers < 1:
        parser.error("--workers must be >= 1")

    record = {"provenance": provenance(argv, args.workers), "settings": settings()}
    start = time.perf_counter()
    specs = all_specs()
    if args.workers == 1:  # one progress bar per run, from posenc_lib.training.train
        runs = [run_spec(spec, progress=True) for spec in specs]
    else:  # runs in parallel; one progress bar over runs
        context = multiprocessing.get_context("spawn")  # no fork after torch has started threads
        with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=context) as pool:
            runs = list(tqdm(pool.map(run_spec, specs), total=len(specs), desc="training runs"))
    record["provenance"]["wall_seconds"] = round(time.perf_counter() - start, 1)
    record["provenance"]["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    record["runs"] = runs

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_json(record))
    print(f"{len(runs)} runs in {record['provenance']['wall_seconds']} s; results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Byte-level language models on real text, one per positional scheme: Press et al.'s experiment in miniature.

Usage (from the repository root; ``make experiments`` runs it after ``run_experiments.py``):

    python experiments/real_text.py [--out book/data/real_text.json] [--workers 2]

The corpus is the English text of the Python language reference that CPython ships
(``book/data/corpus``, PSF license): the first 90% of its bytes train, the last 10%
validate. Tokens are bytes (256 ids, no tokenizer). For every scheme of
``posenc_lib.model.SCHEMES`` and every seed a causal decoder is trained on windows of
``L`` bytes, then evaluated on the same validation bytes cut into sequences of
``L, 2L, 4L, 8L`` tokens (``learned``: only ``L``, its table has ``L`` rows):

- ``lengths``: perplexity over each whole sequence, and per bucket of positions at ``8L``;
- ``window``: at ``8L`` with sliding-window attention (each query sees its last ``L`` keys);
- ``key_sets``: at ``8L``, queries at positions ``4L .. 8L - 1`` attending to a fixed set of
  keys (``KEY_SETS``): the ``L`` nearest, ``L`` keys dilated by 2 or 4 (same count, distances up
  to ``2L`` or ``4L``), the ``L / k`` nearest keys at stride ``k`` (fewer keys, familiar
  distances), or all keys: it separates the number of keys per query from the distances;
- the RoPE runs also: context extension to ``2L`` and ``4L`` with the methods of
  ``context_extension.py``, without and with a short fine-tune at that length, and the
  attention entropy at ``L`` and ``4L`` with YaRN's frequencies with and without its factor.

Every run is seeded and uses one torch thread, so ``run_spec(spec)`` gives the same numbers
here, in a worker process or in ``tests/experiments/test_real_text.py``. ``REFERENCE`` is a
short run (few steps) of every measurement, stored too, that the test re-trains.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import functools
import hashlib
import math
import multiprocessing
import os
import pathlib
import sys
import time
from typing import Any

import torch
from tqdm import tqdm

import context_extension as extension
import run_experiments as synthetic
from posenc_lib import RotaryEmbedding, alibi_bias, rope_frequencies, training
from posenc_lib.model import SCHEMES, TinyTransformer, TransformerConfig, build_model, count_parameters
from posenc_lib.rope_scaling import yarn_frequencies

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "book" / "data" / "real_text.json"
CORPUS = ROOT / "book" / "data" / "corpus" / "python_reference_topics.txt"
CORPUS_SHA256 = "71f2ff5d99bdc1f9c48c5c2353ad138201c5ca1c377e0226857ef8fa89b8bcee"
TRAIN_FRACTION = 0.9
SEEDS = (0, 1, 2, 3, 4)
MODEL: dict[str, Any] = {"d_model": 64, "n_heads": 4, "n_layers": 2, "d_ff": 128}
TRAIN: dict[str, Any] = {"train_len": 64, "batch_size": 8, "steps": 200, "lr": 3e-3, "log_every": 50}
EVAL: dict[str, Any] = {"factors": [1, 2, 4, 8], "bucket": 32, "sequences": 24, "key_set_sequences": 12}
# key sets of the two-cause test: (name, number of keys, stride); queries at positions [4L, 8L) of an 8L sequence
KEY_SETS: list[tuple[str, str, int]] = [
    ("dilated_2", "L", 2),
    ("dilated_4", "L", 4),
    ("strided_2", "L/2", 2),
    ("strided_4", "L/4", 4),
]
EXTENSION: dict[str, Any] = {
    "methods": list(extension.METHODS),
    "factors": [2, 4],
    "dynamic_bucket": 64,
    "fine_tuned": list(extension.FINE_TUNED),
    "fine_tune": {"steps": 10, "batch_size": 4, "lr": 1e-3, "seed_offset": 10000},
}
ENTROPY: dict[str, Any] = {"factor": 4, "sequences": 16}
# a short run of every measurement, re-trained by the test
REFERENCE: dict[str, Any] = {"scheme": "rope", "seed": 0, "steps": 20, "fine_tune_steps": 2, "eval_sequences": 4}
LIBRARY_FILES = synthetic.LIBRARY_FILES


def settings() -> dict:
    """Everything that defines the runs; stored with the results and compared by the tests."""
    return {
        "corpus": {"file": CORPUS.name, "sha256": CORPUS_SHA256, "train_fraction": TRAIN_FRACTION},
        "schemes": list(SCHEMES),
        "seeds": list(SEEDS),
        "model": MODEL,
        "train": TRAIN,
        "eval": EVAL,
        "key_sets": KEY_SETS,
        "extension": EXTENSION,
        "entropy": ENTROPY,
        "reference": REFERENCE,
    }


# --- the corpus ---------------------------------------------------------------------------------


@functools.cache
def corpus_bytes() -> bytes:
    """The corpus file's bytes, after checking its SHA-256 against ``CORPUS_SHA256``."""
    data = CORPUS.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CORPUS_SHA256:
        raise ValueError(f"{CORPUS} has SHA-256 {digest}, expected {CORPUS_SHA256}")
    return data


def split() -> tuple[torch.Tensor, torch.Tensor]:
    """The training and validation bytes as int64 tensors ``(n_train,)``, ``(n_val,)``: a fixed 90/10 cut."""
    data = torch.frombuffer(bytearray(corpus_bytes()), dtype=torch.uint8).long()
    cut = int(len(data) * TRAIN_FRACTION)
    return data[:cut], data[cut:]


def train_batch(data: torch.Tensor, batch_size: int, seq_len: int, generator: torch.Generator):
    """Random windows of ``data``: tokens and next-byte targets ``(b, s)``; all randomness from ``generator``."""
    starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,), generator=generator)  # (b,)
    rows = starts[:, None] + torch.arange(seq_len + 1)  # (b, s + 1)
    windows = data[rows]
    return windows[:, :-1], windows[:, 1:]


def validation_set(n_sequences: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The validation bytes as ``(n, 8L)`` tokens and targets (consecutive, non-overlapping sequences).

    Every evaluation length reshapes these same rows, so every length scores the same targets.
    """
    _, val = split()
    seq_len = max(EVAL["factors"]) * TRAIN["train_len"]
    n = EVAL["sequences"] if n_sequences is None else n_sequences
    if n * seq_len + 1 > len(val):
        raise ValueError(f"n_sequences={n} of {seq_len} bytes do not fit in the {len(val)} validation bytes")
    tokens = val[: n * seq_len].view(n, seq_len)
    targets = val[1 : n * seq_len + 1].view(n, seq_len)
    return tokens, targets


def at_length(t: torch.Tensor, seq_len: int) -> torch.Tensor:
    """``(n, 8L) -> (n 8L / seq_len, seq_len)``: the same bytes in shorter sequences."""
    return t.reshape(-1, seq_len)


# --- evaluation ---------------------------------------------------------------------------------


def _rounded(value: float, digits: int = 5) -> float | None:
    return None if math.isnan(value) else float(f"{value:.{digits}g}")


def key_set_mask(seq_len: int, n_keys: int, stride: int) -> torch.Tensor:
    """``(s, s)`` score bias: 0 where query ``i`` may see key ``j = i - stride r`` for ``r < n_keys``, else ``-inf``."""
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    distance = i - j
    allowed = (distance >= 0) & (distance % stride == 0) & (distance < stride * n_keys)
    return torch.zeros(seq_len, seq_len).masked_fill(~allowed, float("-inf"))


def scheme_bias(model: TinyTransformer, seq_len: int) -> torch.Tensor | None:
    """The score bias ``(n_h, s, s)`` the model's scheme adds in every block (ALiBi's or T5's), or ``None``."""
    if model.config.scheme == "alibi":
        return alibi_bias(model.config.n_heads, seq_len, causal=True)
    if model.relative_bias is not None:
        return model.relative_bias(seq_len)
    return None


@torch.no_grad()
def logits_with_mask(model: TinyTransformer, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The decoder's logits ``(b, s, vocab)`` when every block adds ``mask`` ``(s, s)`` to its scores.

    The blocks are run one by one, as the model runs them, with the scheme's own bias plus ``mask``.
    """
    model.eval()
    x = model.embed(tokens)  # (b, s, d)
    base = scheme_bias(model, tokens.shape[1])
    bias = mask.expand(model.config.n_heads, -1, -1) if base is None else base + mask  # (n_h, s, s)
    for block in model.blocks:
        x = block(x, rope=model.rope, bias=bias)
    return model.head(model.ln_final(x))


def _nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy (nats) per prediction: ``(b, s, c), (b, s) -> (b, s)``."""
    return torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")


def _predict_nll(model, tokens, targets, **kwargs) -> torch.Tensor:
    return _nll(training.predict(model, tokens, batch_size=32, **kwargs), targets)


def _summary(nll: torch.Tensor) -> dict:
    """Perplexity over all predictions of ``nll`` ``(n, s)`` and the mean loss per bucket of positions."""
    curve = nll.mean(0)  # (s,)
    buckets = training.bucket_means(curve, EVAL["bucket"]) if nll.shape[1] >= EVAL["bucket"] else curve[None]
    return {
        "ppl": _rounded(math.exp(nll.mean().item())),
        "loss_by_position": [_rounded(v, 4) for v in buckets.tolist()],
    }


def evaluate(model: TinyTransformer, tokens: torch.Tensor, targets: torch.Tensor) -> dict:
    """Perplexity at every evaluation length, with a sliding window, and with each key set of the two-cause test."""
    L = TRAIN["train_len"]
    out: dict[str, Any] = {"lengths": {}}
    for factor in EVAL["factors"]:
        if model.config.scheme == "learned" and factor * L > model.config.max_len:
            continue  # the table has no rows past L
        nll = _predict_nll(model, at_length(tokens, factor * L), at_length(targets, factor * L))
        out["lengths"][str(factor)] = _summary(nll)
    if model.config.scheme == "learned":
        return out
    window = _predict_nll(model, tokens, targets, window=L)
    out["window"] = _summary(window)
    # the two-cause test on the first sequences, queries at 4L .. 8L - 1; "nearest" is the sliding window
    n, seq_len = min(EVAL["key_set_sequences"], len(tokens)), tokens.shape[1]
    region = slice(seq_len // 2, seq_len)
    full = _predict_nll(model, tokens[:n], targets[:n])
    key_sets = {"nearest": window[:n, region], "all": full[:, region]}
    for name, count, stride in KEY_SETS:
        n_keys = {"L": L, "L/2": L // 2, "L/4": L // 4}[count]
        mask = key_set_mask(seq_len, n_keys, stride)
        key_sets[name] = _nll(logits_with_mask(model, tokens[:n], mask), targets[:n])[:, region]
    out["key_sets"] = {name: _rounded(math.exp(nll.mean().item())) for name, nll in key_sets.items()}
    return out


def attention_entropy(model: TinyTransformer, tokens: torch.Tensor) -> float:
    """Mean entropy (nats) of the attention weights over layers, heads and queries; ``tokens`` ``(n, s)``."""
    total = []
    with torch.no_grad():
        for trace in model.trace(tokens):
            w = trace["weights"]  # (n, n_h, s, s)
            entropy = -(w * torch.log(w.clamp_min(1e-30))).sum(-1)  # (n, n_h, s)
            total.append(entropy.mean())
    return float(torch.stack(total).mean())


def _extension_nll(model, method, factor, tokens, targets) -> torch.Tensor:
    L = TRAIN["train_len"]
    seq_len = factor * L
    tokens, targets = at_length(tokens, seq_len), at_length(targets, seq_len)
    if method != "dynamic_ntk":
        return _predict_nll(extension.with_method(model, method, factor, L, seq_len), tokens, targets)
    bucket, columns = EXTENSION["dynamic_bucket"], []
    for stop in range(bucket, seq_len + 1, bucket):  # the prefix ending at each bucket's end sets the factor
        extended = extension.with_method(model, "dynamic_ntk", 1.0, L, stop)
        nll = _predict_nll(extended, tokens[:, :stop], targets[:, :stop])
        columns.append(nll[:, stop - bucket : stop])
    return torch.cat(columns, dim=1)


def extend(model: TinyTransformer, tokens, targets, data: torch.Tensor, seed: int, fine_tune_steps: int) -> dict:
    """Perplexity of the RoPE ``model`` at ``2L`` and ``4L`` with every method, then after a fine-tune at that length."""
    L, c = TRAIN["train_len"], EXTENSION["fine_tune"]
    out: dict[str, Any] = {"zero_shot": {}, "fine_tuned": {}}
    for factor in EXTENSION["factors"]:
        f = str(factor)
        out["zero_shot"][f] = {
            m: _rounded(math.exp(_extension_nll(model, m, factor, tokens, targets).mean().item()))
            for m in EXTENSION["methods"]
        }
        out["fine_tuned"][f] = {}
        for m in EXTENSION["fine_tuned"]:
            tuned = extension.fine_tune(
                model,
                m,
                factor,
                L,
                lambda b, s, g: train_batch(data, b, s, g),
                steps=fine_tune_steps,
                batch_size=c["batch_size"],
                lr=c["lr"],
                seed=seed + c["seed_offset"],
            )
            out["fine_tuned"][f][m] = _rounded(
                math.exp(_extension_nll(tuned, m, factor, tokens, targets).mean().item())
            )
    k = ENTROPY["factor"]
    few = tokens[: ENTROPY["sequences"]]
    out["entropy"] = {
        "plain_L": _rounded(attention_entropy(model, at_length(few, L)[: ENTROPY["sequences"]])),
        "plain_4L": _rounded(attention_entropy(model, at_length(few, k * L)[: ENTROPY["sequences"]])),
    }
    for name, factor_on in (("yarn_without_factor_4L", False), ("yarn_4L", True)):
        extended = extension.with_method(model, "yarn", k, L, k * L)
        if not factor_on:  # YaRN's frequencies, attention factor 1
            frequencies = yarn_frequencies(rope_frequencies(model.config.head_dim), k, L)
            extended.rope = RotaryEmbedding(model.config.head_dim, k * L, frequencies=frequencies)
        out["entropy"][name] = _rounded(attention_entropy(extended, at_length(few, k * L)[: ENTROPY["sequences"]]))
    return out


# --- one run ------------------------------------------------------------------------------------


def config_for(scheme: str) -> TransformerConfig:
    return TransformerConfig(vocab_size=256, scheme=scheme, causal=True, max_len=TRAIN["train_len"], **MODEL)


def run_spec(spec: dict, progress: bool = False) -> dict:
    """Train and evaluate one ``{"scheme", "seed"}`` run (``"reference": True``: the short reference run)."""
    torch.set_num_threads(1)
    wall, cpu = time.perf_counter(), time.process_time()
    reference = spec.get("reference", False)
    scheme, seed = spec["scheme"], spec["seed"]
    steps = REFERENCE["steps"] if reference else TRAIN["steps"]
    data, _ = split()
    model = build_model(config_for(scheme), seed=seed)
    L = TRAIN["train_len"]
    warmup = max(1, TRAIN["steps"] // 20)  # the full run's warm-up: a reference run is its first steps
    history = training.train(
        model,
        lambda g: train_batch(data, TRAIN["batch_size"], L, g),
        steps=steps,
        seed=seed,
        lr=TRAIN["lr"],
        warmup=warmup,
        progress=progress,
        desc=f"{scheme} seed {seed}",
    )
    tokens, targets = validation_set(REFERENCE["eval_sequences"] if reference else None)
    block = TRAIN["log_every"]
    losses = [h["loss"] for h in history]
    result: dict[str, Any] = {
        "scheme": scheme,
        "seed": seed,
        "n_params": count_parameters(model),
        "train_loss": [
            _rounded(sum(losses[i : i + block]) / len(losses[i : i + block])) for i in range(0, steps, block)
        ],
        **evaluate(model, tokens, targets),
    }
    if scheme == "rope":
        ft_steps = REFERENCE["fine_tune_steps"] if reference else EXTENSION["fine_tune"]["steps"]
        result["extension"] = extend(model, tokens, targets, data, seed, ft_steps)
    if reference:
        result["reference"] = True
    result["cpu_seconds"] = round(time.process_time() - cpu, 1)
    result["wall_seconds"] = round(time.perf_counter() - wall, 1)
    return result


def all_specs() -> list[dict]:
    return [{"scheme": s, "seed": seed} for s in SCHEMES for seed in SEEDS] + [
        {"scheme": REFERENCE["scheme"], "seed": REFERENCE["seed"], "reference": True}
    ]


def _expected_cost(spec: dict) -> float:
    """Rough CPU seconds of a run on an idle core (measured), for the estimate and to start the longest first."""
    if spec.get("reference"):
        return 3.0
    return {"rope": 14.0, "learned": 8.0}.get(spec["scheme"], 10.0)


# --- provenance and output ----------------------------------------------------------------------


def code_files() -> list[pathlib.Path]:
    """The files ``code_digest`` covers: the library files, context_extension.py, run_experiments.py and this script."""
    here = pathlib.Path(__file__).resolve()
    return [*synthetic.code_files(), here]


def provenance(argv: list[str], workers: int) -> dict:
    p = synthetic.provenance(argv, workers)
    p["code_files"] = [path.name for path in code_files()]
    p["code_digest"] = synthetic._file_digest(code_files())
    return p


def run_all(specs: list[dict], workers: int) -> list[dict]:
    order = sorted(range(len(specs)), key=lambda i: -_expected_cost(specs[i]))
    results: list[dict | None] = [None] * len(specs)
    if workers == 1:
        for i in tqdm(order, desc="real-text runs"):
            results[i] = run_spec(specs[i])
        return results  # type: ignore[return-value]  # every slot is filled by now
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(run_spec, specs[i]): i for i in order}
        for future in tqdm(concurrent.futures.as_completed(futures), total=len(specs), desc="real-text runs"):
            results[futures[future]] = future.result()
    return results  # type: ignore[return-value]  # every slot is filled by now


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="where to write the JSON results")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="parallel processes")
    args = parser.parse_args(argv[1:])
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    corpus_bytes()  # fail early on a changed corpus
    specs = all_specs()
    estimate = sum(map(_expected_cost, specs))
    print(
        f"real text: {len(specs)} runs, about {estimate / 60:.0f} CPU minutes, "
        f"{estimate / 60 / args.workers:.0f} minutes on {args.workers} idle cores"
    )
    record: dict[str, Any] = {"provenance": provenance(argv, args.workers), "settings": settings()}
    start = time.perf_counter()
    runs = run_all(specs, args.workers)
    p = record["provenance"]
    p["wall_seconds"] = round(time.perf_counter() - start, 1)
    p["cpu_seconds"] = round(sum(r["cpu_seconds"] for r in runs), 1)
    p["finished_utc"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    p["machine"]["load_average_at_end"] = synthetic._load()
    record["runs"] = runs
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(synthetic.to_json(record))
    print(f"{len(runs)} runs in {p['wall_seconds']} s ({p['cpu_seconds']} s CPU); results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

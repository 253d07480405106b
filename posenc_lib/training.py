"""A small, seeded training loop and the evaluation helpers the experiments use.

``train`` works for both variants of :class:`posenc_lib.model.TinyTransformer`:
logits ``(b, c)`` with targets ``(b,)`` (encoder) or logits ``(b, s, c)`` with
targets ``(b, s)`` (decoder); targets equal to ``IGNORE_INDEX`` are not scored.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TextIO

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import (
    check_bool,
    check_int,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_tensor,
)
from .tasks import IGNORE_INDEX

BatchFn = Callable[[torch.Generator], "tuple[torch.Tensor, torch.Tensor]"]


def _check_logits_targets(logits: torch.Tensor, targets: torch.Tensor) -> None:
    check_tensor("logits", logits, min_dim=2)
    check_tensor("targets", targets)
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor, got dtype {logits.dtype}")
    if targets.is_floating_point() or targets.is_complex() or targets.dtype == torch.bool:
        raise TypeError(f"targets must be an integer tensor of class ids, got dtype {targets.dtype}")
    if logits.device != targets.device:
        raise ValueError(f"logits and targets must be on one device, got {logits.device} and {targets.device}")
    if logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"logits (..., c) and targets (...) must agree on the leading dimensions, "
            f"got logits {tuple(logits.shape)} and targets {tuple(targets.shape)}"
        )


def loss_fn(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored targets: logits ``(..., c)``, targets ``(...)`` -> scalar."""
    _check_logits_targets(logits, targets)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE_INDEX)


def correct(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Float tensor shaped like ``targets``: 1 where the arg-max is right, 0 where wrong, NaN where not scored."""
    _check_logits_targets(logits, targets)
    hit = (logits.argmax(-1) == targets).float()  # (...)
    return hit.masked_fill(targets == IGNORE_INDEX, float("nan"))


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Fraction of scored targets predicted right (arg-max)."""
    return float(correct(logits, targets).nanmean())


def learning_rate(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then cosine decay to ``peak / 10`` at the last step.

    ``step`` counts from 0 to ``steps - 1``.
    """
    steps = check_positive_int("steps", steps)
    step = check_nonnegative_int("step", step)
    if step >= steps:
        raise ValueError(f"step must be in 0..{steps - 1} (steps={steps}), got {step}")
    peak = check_positive_float("peak", peak)
    warmup = check_positive_int("warmup", warmup)
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - 1 - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(
    model: nn.Module,
    next_batch: BatchFn,
    *,
    steps: int,
    seed: int,
    lr: float = 3e-3,
    warmup: int | None = None,
    grad_clip: float = 1.0,
    progress: bool = True,
    desc: str | None = None,
    progress_file: TextIO | None = None,
) -> list[dict[str, float]]:
    """Train ``model`` in place with AdamW and return one metrics dict per step.

    Args:
        model: maps a token batch to logits (see module docstring).
        next_batch: ``next_batch(generator) -> (tokens, targets)``; it must draw all
            its randomness from ``generator``, which ``train`` seeds with ``seed``.
            The batch is moved to the device of the model's parameters.
        steps: number of optimizer steps.
        seed: seeds the batches. (Initial weights are the caller's business, e.g.
            :func:`posenc_lib.model.build_model`.)
        lr: peak learning rate; ``warmup`` steps of linear warm-up (default 5% of
            ``steps``), then cosine decay to ``lr / 10``.
        grad_clip: clip the global gradient norm to this value.
        progress: show a ``tqdm`` progress bar (on ``progress_file``, default stderr).
            Turn it off in notebooks so stored outputs stay deterministic.

    Returns:
        ``[{"step", "loss", "accuracy", "lr", "grad_norm"}, ...]``, one per step,
        computed on that step's training batch before the update.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not callable(next_batch):
        raise TypeError(f"next_batch must be callable as next_batch(generator), got {type(next_batch).__name__}")
    steps = check_positive_int("steps", steps)
    seed = check_int("seed", seed)
    progress = check_bool("progress", progress)
    lr = check_positive_float("lr", lr)
    grad_clip = check_positive_float("grad_clip", grad_clip)
    warmup = max(1, steps // 20) if warmup is None else check_positive_int("warmup", warmup)

    parameters = list(model.parameters())
    if not parameters:
        raise ValueError("model has no parameters to train")
    device = parameters[0].device
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(parameters, lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    history: list[dict[str, float]] = []
    model.train()
    step_range, bar = range(steps), None
    if progress:
        from tqdm import tqdm  # imported here: only the progress bar needs it

        step_range = bar = tqdm(step_range, desc=desc, file=progress_file or sys.stderr, leave=False)
    for step in step_range:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, lr, warmup)
        batch = next_batch(generator)
        if not (isinstance(batch, tuple) and len(batch) == 2 and all(isinstance(t, torch.Tensor) for t in batch)):
            raise TypeError(
                f"next_batch(generator) must return a tuple (tokens, targets) of two tensors, got {type(batch).__name__}"
            )
        tokens, targets = batch[0].to(device), batch[1].to(device)
        logits = model(tokens)
        loss = loss_fn(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        history.append(
            {
                "step": step,
                "loss": loss.item(),
                "accuracy": accuracy(logits.detach(), targets),
                "lr": optimizer.param_groups[0]["lr"],
                "grad_norm": float(grad_norm),
            }
        )
        if bar is not None and (step % 25 == 0 or step == steps - 1):
            bar.set_postfix(loss=f"{history[-1]['loss']:.3f}", acc=f"{history[-1]['accuracy']:.2f}")
    if bar is not None:
        bar.close()
    model.eval()
    return history


@torch.no_grad()
def predict(model: nn.Module, tokens: torch.Tensor, *, batch_size: int = 256, **kwargs) -> torch.Tensor:
    """Logits for ``tokens`` ``(n, s)`` in eval mode and in chunks of ``batch_size`` rows; extra kwargs go to ``model``.

    The tokens are moved to the device of the model's parameters, and so are the logits returned.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    tokens = check_tensor("tokens", tokens, min_dim=2)
    batch_size = check_positive_int("batch_size", batch_size)
    if tokens.shape[0] == 0:
        raise ValueError(f"tokens must hold at least one row, got shape {tuple(tokens.shape)}")
    parameter = next(model.parameters(), None)
    if parameter is not None:
        tokens = tokens.to(parameter.device)
    model.eval()
    return torch.cat([model(chunk, **kwargs) for chunk in tokens.split(batch_size)])


def accuracy_by_position(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Decoder accuracy at every position: logits ``(b, s, c)``, targets ``(b, s)`` -> ``(s,)``, NaN where nothing is scored."""
    if logits.dim() != 3:
        raise ValueError(f"logits must have shape (b, s, c), got {tuple(logits.shape)}")
    return correct(logits, targets).nanmean(dim=0)  # (s,)


def loss_by_position(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Decoder cross-entropy (nats) at every position: logits ``(b, s, c)``, targets ``(b, s)`` -> ``(s,)``, NaN where nothing is scored."""
    if logits.dim() != 3:
        raise ValueError(f"logits must have shape (b, s, c), got {tuple(logits.shape)}")
    _check_logits_targets(logits, targets)
    nll = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=IGNORE_INDEX, reduction="none")  # (b, s)
    return nll.masked_fill(targets == IGNORE_INDEX, float("nan")).nanmean(dim=0)  # (s,)


def bucket_means(values: torch.Tensor, bucket_size: int) -> torch.Tensor:
    """Mean of consecutive buckets of ``bucket_size`` positions, ignoring NaN: ``(s,) -> (ceil(s / bucket_size),)``."""
    values = check_tensor("values", values)
    if values.dim() != 1:
        raise ValueError(f"values must be 1-D (one value per position), got shape {tuple(values.shape)}")
    bucket_size = check_positive_int("bucket_size", bucket_size)
    return torch.stack([chunk.nanmean() for chunk in values.split(bucket_size)])

"""Context extension of a trained RoPE decoder: new rotation frequencies at evaluation, and a short fine-tune.

A decoder trained on ``L`` positions is run on ``alpha L`` positions with the
frequencies of one of ``METHODS`` (``posenc_lib.rope_scaling``), by replacing the
model's shared ``rope`` module; nothing else changes. ``alpha`` (``factor``) is
the extension factor.

- ``plain``: the trained frequencies (no extension method);
- ``linear``: position interpolation, every frequency divided by ``alpha``;
- ``ntk``: NTK-aware scaling (a larger base);
- ``dynamic_ntk``: NTK-aware scaling whose factor follows the current length
  (nothing changes up to ``L``). Evaluated the way a model that recomputes the
  whole prefix would use it: the prediction at position ``p`` uses the factor
  of the prefix that ends at the end of ``p``'s bucket of positions;
- ``yarn``: YaRN's frequencies and its attention factor;
- ``llama3``: Llama 3.1's rule.

The fine-tune (``FINE_TUNED`` methods; dynamic NTK is an inference-time rule:
trained at one length it is the static NTK-aware scaling) trains a copy of the
model with the method's frequencies on sequences of ``alpha L`` tokens.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch import nn

from posenc_lib import RotaryEmbedding, rope_frequencies, training
from posenc_lib.model import TinyTransformer
from posenc_lib.rope_scaling import (
    dynamic_ntk_frequencies,
    linear_scaling_frequencies,
    llama3_frequencies,
    ntk_aware_frequencies,
    yarn_attention_factor,
    yarn_frequencies,
)

METHODS = ("plain", "linear", "ntk", "dynamic_ntk", "yarn", "llama3")
FINE_TUNED = ("plain", "linear", "ntk", "yarn", "llama3")

BatchFn = Callable[[int, int, torch.Generator], "tuple[torch.Tensor, torch.Tensor]"]


def method_rope(method: str, head_dim: int, factor: float, train_len: int, seq_len: int) -> RotaryEmbedding:
    """The RoPE module a ``method`` uses for sequences of ``seq_len`` tokens, for a model trained on ``train_len``.

    ``factor`` (alpha) is the extension factor of the static methods; ``dynamic_ntk``
    ignores it and takes its factor from ``seq_len / train_len``.
    """
    trained = rope_frequencies(head_dim)  # (d_h/2,) float64
    attention_factor = 1.0
    if method == "plain":
        frequencies = trained
    elif method == "linear":
        frequencies = linear_scaling_frequencies(trained, factor)
    elif method == "ntk":
        frequencies = ntk_aware_frequencies(trained, factor)
    elif method == "dynamic_ntk":
        frequencies = dynamic_ntk_frequencies(trained, seq_len, train_len)
    elif method == "yarn":
        frequencies = yarn_frequencies(trained, factor, train_len)
        attention_factor = yarn_attention_factor(factor)
    elif method == "llama3":
        frequencies = llama3_frequencies(trained, factor, train_len)
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return RotaryEmbedding(head_dim, seq_len, frequencies=frequencies, attention_factor=attention_factor)


def with_method(model: TinyTransformer, method: str, factor: float, train_len: int, seq_len: int) -> TinyTransformer:
    """A copy of the RoPE ``model`` whose blocks rotate with ``method``'s frequencies."""
    extended = copy.deepcopy(model)
    extended.rope = method_rope(method, model.config.head_dim, factor, train_len, seq_len)
    return extended


def correct_by_position(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """1/0/NaN (not scored) per prediction, ``(n, s)``: the decoder's arg-max against ``targets``."""
    return training.correct(training.predict(model, tokens), targets)


def dynamic_correct_by_position(
    model: TinyTransformer, tokens: torch.Tensor, targets: torch.Tensor, train_len: int, bucket: int
) -> torch.Tensor:
    """Like :func:`correct_by_position` with dynamic NTK: the prefix ending at each bucket's end sets the factor."""
    seq_len = tokens.shape[1]
    columns = []
    for stop in range(bucket, seq_len + bucket, bucket):
        stop = min(stop, seq_len)
        extended = with_method(model, "dynamic_ntk", 1.0, train_len, stop)
        logits = training.predict(extended, tokens[:, :stop])  # (n, stop, vocab)
        columns.append(training.correct(logits[:, stop - bucket : stop], targets[:, stop - bucket : stop]))
    return torch.cat(columns, dim=1)  # (n, s)


def fine_tune(
    model: TinyTransformer,
    method: str,
    factor: int,
    train_len: int,
    batch: BatchFn,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> TinyTransformer:
    """A copy of ``model`` with ``method``'s frequencies, trained ``steps`` steps on ``factor * train_len`` tokens.

    ``batch(batch_size, seq_len, generator) -> (tokens, targets)``; the batches
    depend only on ``seed``, so every method sees the same fine-tuning data.
    """
    seq_len = factor * train_len
    tuned = with_method(model, method, factor, train_len, seq_len)
    training.train(tuned, lambda g: batch(batch_size, seq_len, g), steps=steps, seed=seed, lr=lr, progress=False)
    return tuned

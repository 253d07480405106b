"""Learned absolute position embeddings (BERT, GPT-2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ._checks import (
    check_device,
    check_fits,
    check_int,
    check_nonnegative_float,
    check_nonnegative_int,
    check_offset,
    check_positive_float,
    check_positive_int,
    check_same_device,
    check_tensor,
)


class LearnedPositionalEmbedding(nn.Module):
    """One trainable vector per position ``0 .. max_len - 1``, added to the input.

    Args:
        d_model: embedding width ``d``.
        max_len: number of positions the table holds; a longer sequence cannot be served.
        init_std: standard deviation of the normal initialisation (GPT-2 uses 0.02; 0 starts at zero).

    ``forward(x, offset=0)``: ``x`` is ``(..., s, d)``, e.g. ``(b, s, d)``; returns
    ``x + W[offset : offset + s]`` with ``x``'s shape and dtype (``offset`` is the
    position of the first token). Unlike a bare ``nn.Embedding`` lookup, which fails
    with an ``IndexError`` from inside the kernel, a sequence past ``max_len``
    raises a ``ValueError`` that says which position was asked for and how many exist.
    """

    def __init__(self, d_model: int, max_len: int, *, init_std: float = 0.02):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.max_len = check_positive_int("max_len", max_len)
        self.init_std = check_nonnegative_float("init_std", init_std)
        check_fits(
            f"d_model={self.d_model} and max_len={self.max_len}",
            (self.max_len, self.d_model),
            torch.float32,
            check_device(None),
        )
        self.embedding = nn.Embedding(self.max_len, self.d_model)
        nn.init.normal_(self.embedding.weight, std=self.init_std)

    @property
    def weight(self) -> torch.Tensor:
        """The position table, ``(max_len, d)``."""
        return self.embedding.weight

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        x = check_tensor("x", x, min_dim=2)
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor of token vectors, got dtype {x.dtype}")
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        check_same_device("x", x, self.embedding.weight.device, "LearnedPositionalEmbedding")
        seq_len = x.shape[-2]
        offset = check_offset(offset, seq_len)
        if offset + seq_len > self.max_len:
            raise ValueError(
                f"position {offset + seq_len - 1} requested, but the learned table only has positions "
                f"0..{self.max_len - 1} (max_len={self.max_len}); it has no vector for a position "
                f"past its last row"
            )
        positions = torch.arange(offset, offset + seq_len, device=x.device)  # (s,)
        return x + self.embedding(positions).to(x.dtype)  # (b, s, d) + (s, d)


def cosine_similarity_matrix(table: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Cosine similarity of every row of a position table with every other row.

    Args:
        table: ``(s, d)`` position vectors (torch or numpy), e.g. a learned
            table's ``weight`` or a sinusoidal table.

    Returns:
        float32 tensor ``(s, s)``; entry ``(i, j)`` is ``cos`` of the angle
        between rows ``i`` and ``j`` (1 on the diagonal).
    """
    if isinstance(table, np.ndarray):
        table = torch.from_numpy(table)
    table = check_tensor("table", table, min_dim=2)
    if table.dim() != 2 or not table.is_floating_point():
        raise ValueError(
            f"table must be a 2-D floating-point (s, d) array, got shape {tuple(table.shape)}, dtype {table.dtype}"
        )
    check_fits(f"table of {table.shape[0]} rows (the similarity matrix)", (table.shape[0],) * 2, torch.float32)
    rows = table.detach().float()
    norms = rows.norm(dim=-1, keepdim=True)  # (s, 1)
    if rows.device.type != "meta" and bool(torch.any(norms == 0)):
        raise ValueError("table has an all-zero row; its cosine similarity is undefined")
    unit = rows / norms  # (s, d)
    return unit @ unit.T  # (s, s)


def similarity_by_offset(similarity: torch.Tensor, max_offset: int | None = None) -> torch.Tensor:
    """Mean of ``similarity[i, i + k]`` over ``i``, for offsets ``k = 0 .. max_offset``.

    Args:
        similarity: square ``(s, s)`` matrix, e.g. from :func:`cosine_similarity_matrix`.
        max_offset: largest offset (default ``s - 1``).

    Returns:
        float32 tensor ``(max_offset + 1,)``: how alike positions ``k`` apart are, on average.
    """
    similarity = check_tensor("similarity", similarity, min_dim=2)
    if similarity.dim() != 2 or similarity.shape[0] != similarity.shape[1]:
        raise ValueError(f"similarity must be a square (s, s) matrix, got shape {tuple(similarity.shape)}")
    if not similarity.is_floating_point():
        raise TypeError(f"similarity must be a floating-point matrix, got dtype {similarity.dtype}")
    size = similarity.shape[0]
    if size == 0:
        raise ValueError("similarity must have at least one row, got shape (0, 0)")
    max_offset = size - 1 if max_offset is None else check_nonnegative_int("max_offset", max_offset)
    if max_offset >= size:
        raise ValueError(f"max_offset must be an integer in 0..{size - 1}, got {max_offset!r}")
    return torch.stack([torch.diagonal(similarity.float(), offset=k).mean() for k in range(max_offset + 1)])


@dataclass
class PositionProbe:
    """What :func:`train_position_probe` returns.

    Attributes:
        positions: the trained position table (``positions.weight`` is ``(max_len, d)``).
        token_embedding: the trained word vectors, ``(vocab_size, d)``.
        readout: the linear layer ``d -> max_len`` that names a position.
        initial_table: a copy of the position table before training, ``(max_len, d)``.
        losses: the training loss at every step (KL divergence to the target, 0 is perfect).
        accuracy: fraction of tokens whose position the trained probe names exactly
            (argmax), measured on a fresh batch.
    """

    positions: LearnedPositionalEmbedding
    token_embedding: nn.Embedding
    readout: nn.Linear
    initial_table: torch.Tensor
    losses: list[float]
    accuracy: float


def position_targets(
    train_len: int, n_classes: int, *, target_width: float = 0.0, device: torch.device | str | None = None
) -> torch.Tensor:
    """Target distribution over ``n_classes`` positions for each true position ``0 .. train_len - 1``.

    ``target_width = 0`` gives one-hot targets (only the exact position is right);
    ``target_width = sigma > 0`` gives a Gaussian of width ``sigma`` around the true
    position, so naming a neighbour is almost right. Shape ``(train_len, n_classes)``,
    rows sum to 1, float32, built on ``device``.
    """
    train_len = check_positive_int("train_len", train_len)
    n_classes = check_positive_int("n_classes", n_classes)
    target_width = check_nonnegative_float("target_width", target_width)
    if n_classes < train_len:
        raise ValueError(
            f"n_classes must be >= train_len (every true position needs a class), got {n_classes} < {train_len}"
        )
    device = check_device(device)
    check_fits(f"train_len={train_len} and n_classes={n_classes}", (train_len, n_classes), torch.float32, device)
    true = torch.arange(train_len, dtype=torch.float32, device=device).unsqueeze(1)  # (train_len, 1)
    classes = torch.arange(n_classes, dtype=torch.float32, device=device).unsqueeze(0)  # (1, n_classes)
    if 2 * target_width**2 < torch.finfo(torch.float32).tiny:  # 0, or so narrow that the Gaussian is one-hot
        return (classes == true).float()
    return torch.softmax(-((classes - true) ** 2) / (2 * target_width**2), dim=-1)  # (train_len, n_classes)


def train_position_probe(
    *,
    max_len: int = 64,
    train_len: int = 48,
    d_model: int = 32,
    vocab_size: int = 100,
    steps: int = 300,
    batch_size: int = 32,
    lr: float = 0.01,
    target_width: float = 0.0,
    weight_decay: float = 0.0,
    seed: int = 0,
) -> PositionProbe:
    """Train a learned position table on the smallest task that needs it: name each token's position.

    The model is ``readout(token_embedding(ids) + W[p])``: random token ids
    ``(b, train_len)`` carry no information about where they stand, so the only
    way to name position ``p`` is through the position vector ``W[p]``. The loss
    is the KL divergence from :func:`position_targets` (one-hot or Gaussian of
    width ``target_width``) to the predicted distribution over ``max_len``
    positions, minimised with AdamW for ``steps`` steps. Sequences are only
    ``train_len`` long, so rows ``train_len .. max_len - 1`` of the table are
    never looked up: with ``weight_decay = 0`` they end exactly at their random
    initial values, with ``weight_decay > 0`` they only shrink, by the factor
    ``(1 - lr * weight_decay) ** steps``.

    Everything is seeded by ``seed``; the global torch RNG and thread count are
    left as they were. Runs on one CPU thread, about 0.3-0.5 s with the defaults.
    """
    max_len = check_positive_int("max_len", max_len)
    train_len = check_positive_int("train_len", train_len)
    d_model = check_positive_int("d_model", d_model)
    vocab_size = check_positive_int("vocab_size", vocab_size)
    steps = check_positive_int("steps", steps)
    batch_size = check_positive_int("batch_size", batch_size)
    lr = check_positive_float("lr", lr)
    if train_len > max_len:
        raise ValueError(f"train_len must be <= max_len={max_len}, got {train_len}")
    weight_decay = check_nonnegative_float("weight_decay", weight_decay)
    target_width = check_nonnegative_float("target_width", target_width)
    seed = check_int("seed", seed)
    check_fits(f"vocab_size={vocab_size} and d_model={d_model}", (vocab_size, d_model), torch.float32)
    check_fits(f"batch_size={batch_size} and train_len={train_len}", (batch_size, train_len, max_len), torch.float32)
    targets = position_targets(train_len, max_len, target_width=target_width)  # (train_len, max_len)
    target_entropy = -(targets * targets.clamp_min(1e-12).log()).sum(-1).mean()  # the lowest reachable cross-entropy

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tensors this small train faster on one thread, and timings stay steady on a busy machine
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            positions = LearnedPositionalEmbedding(d_model, max_len)
            token_embedding = nn.Embedding(vocab_size, d_model)
            readout = nn.Linear(d_model, max_len)
        initial_table = positions.weight.detach().clone()
        data = torch.Generator().manual_seed(seed)
        params = [*positions.parameters(), *token_embedding.parameters(), *readout.parameters()]
        optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)

        def log_probs(ids: torch.Tensor) -> torch.Tensor:
            return torch.log_softmax(readout(positions(token_embedding(ids))), dim=-1)  # (b, train_len, max_len)

        losses: list[float] = []
        for _ in range(steps):
            ids = torch.randint(vocab_size, (batch_size, train_len), generator=data)  # (b, train_len)
            cross_entropy = -(targets * log_probs(ids)).sum(-1).mean()
            loss = cross_entropy - target_entropy  # KL(target || prediction)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

        with torch.no_grad():
            ids = torch.randint(vocab_size, (256, train_len), generator=data)
            predicted = log_probs(ids).argmax(-1)  # (256, train_len)
            accuracy = (predicted == torch.arange(train_len)).float().mean().item()
    finally:
        torch.set_num_threads(threads)
    return PositionProbe(positions, token_embedding, readout, initial_table, losses, accuracy)

"""Synthetic tasks for the experiments chapter, generated from a seeded ``torch.Generator``.

- **A before B** (:func:`order_batch`, :func:`order_eval_set`): a sequence of
  filler tokens holds one ``A`` and one ``B``; the label is 1 if ``A`` comes
  first. The label depends on order only: swapping ``A`` and ``B`` flips it and
  keeps the multiset of tokens, so a model that cannot see order is at chance.
- **A tiny language** (:func:`markov_rule`, :func:`markov_batch`): each token is,
  with probability ``p_rule``, a fixed function of the two tokens before it
  (in that order), otherwise uniform noise. Next-token prediction on it is a
  miniature of language modelling: mostly local, and order matters.
- **Lag copy** (:func:`lag_copy_batch`): random tokens; at position ``i`` the
  target is the token ``lag`` steps back, ``tokens[i - lag]``. It needs the
  *relative* offset ``lag`` at every position, so it tests length extrapolation.

The two causal tasks start every sequence with a beginning-of-sequence token
(id ``vocab_size``) unless called with ``bos=False``.
"""

from __future__ import annotations

import math

import torch

from ._checks import (
    check_bool,
    check_device,
    check_fits,
    check_int,
    check_integer_tensor,
    check_positive_int,
    check_probability,
)

TOKEN_A = 0
TOKEN_B = 1
IGNORE_INDEX = -100  # targets with this value are not scored (PyTorch's cross_entropy default)
Device = torch.device | str | None


def _check_generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator (seeded by the caller), got {type(generator).__name__}")
    return generator


def _check_order_shapes(seq_len: int, vocab_size: int) -> tuple[int, int]:
    seq_len = check_positive_int("seq_len", seq_len)
    vocab_size = check_positive_int("vocab_size", vocab_size)
    if seq_len < 2:
        raise ValueError(f"seq_len must be >= 2 to hold both A and B, got {seq_len}")
    if vocab_size < 3:
        raise ValueError(f"vocab_size must be >= 3 (A, B and at least one filler token), got {vocab_size}")
    return seq_len, vocab_size


def _check_batch_fits(rows: int, seq_len: int, what: str) -> None:
    """Refuse a ``(rows, s)`` token batch (int64, plus a float32 copy for the shuffle) beyond the size budget."""
    check_fits(f"{what} and seq_len={seq_len}", (rows, seq_len), torch.int64)


def a_before_b(tokens: torch.Tensor) -> torch.Tensor:
    """Labels of the A-before-B task: ``(b, s)`` integer tokens -> ``(b,)`` int64, 1 where ``A`` precedes ``B``.

    Every row must hold exactly one ``TOKEN_A`` and one ``TOKEN_B``.
    """
    tokens = check_integer_tensor("tokens", tokens, dim=2, shape_text="(b, s)")
    is_a, is_b = tokens == TOKEN_A, tokens == TOKEN_B  # (b, s) each
    if not (torch.all(is_a.sum(1) == 1) and torch.all(is_b.sum(1) == 1)):
        raise ValueError("every row of tokens must contain exactly one A (id 0) and one B (id 1)")
    return (is_a.int().argmax(1) < is_b.int().argmax(1)).long()


def _random_order_rows(
    n: int, seq_len: int, vocab_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` random rows and the same rows with A and B swapped, each ``(n, s)``."""
    tokens = torch.randint(2, vocab_size, (n, seq_len), generator=generator)  # fillers only
    slots = torch.rand(n, seq_len, generator=generator).argsort(dim=1)[:, :2]  # (n, 2): two distinct positions
    rows = torch.arange(n)
    swapped = tokens.clone()
    tokens[rows, slots[:, 0]], tokens[rows, slots[:, 1]] = TOKEN_A, TOKEN_B
    swapped[rows, slots[:, 0]], swapped[rows, slots[:, 1]] = TOKEN_B, TOKEN_A
    return tokens, swapped


def order_batch(
    batch_size: int, seq_len: int, vocab_size: int, *, generator: torch.Generator, device: Device = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A training batch of the A-before-B task: tokens ``(b, s)`` and labels ``(b,)``, both int64.

    The second half of the batch is the first half with ``A`` and ``B`` swapped,
    so every batch is exactly balanced and every multiset of tokens appears
    once with each label. Drawn on the CPU (``generator`` is a CPU generator), returned on ``device``.
    """
    batch_size = check_positive_int("batch_size", batch_size)
    if batch_size % 2:
        raise ValueError(f"batch_size must be even (rows come in A/B-swapped pairs), got {batch_size}")
    seq_len, vocab_size = _check_order_shapes(seq_len, vocab_size)
    _check_batch_fits(2 * batch_size, seq_len, f"batch_size={batch_size}")
    device = check_device(device)
    tokens, swapped = _random_order_rows(batch_size // 2, seq_len, vocab_size, _check_generator(generator))
    tokens = torch.cat((tokens, swapped))  # (b, s)
    return tokens.to(device), a_before_b(tokens).to(device)


def order_eval_set(
    n_groups: int, seq_len: int, vocab_size: int, *, seed: int, device: Device = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed evaluation set of ``4 * n_groups`` sequences: tokens ``(4n, s)``, labels ``(4n,)``.

    Each group of four consecutive rows is ``x``, ``x`` with A and B swapped,
    ``x`` reversed, and ``x`` swapped and reversed. Within a group all four have
    the same multiset of tokens and two have each label; the two pairs related
    by reversal also have opposite labels. So a model that gives the same output
    to every reordering of a multiset, or to a sequence and its reversal, is
    right on exactly two of every four rows: exactly 50% accuracy. Returned on ``device``.
    """
    n_groups = check_positive_int("n_groups", n_groups)
    seq_len, vocab_size = _check_order_shapes(seq_len, vocab_size)
    _check_batch_fits(8 * n_groups, seq_len, f"n_groups={n_groups}")
    generator = torch.Generator().manual_seed(check_int("seed", seed))
    device = check_device(device)
    tokens, swapped = _random_order_rows(n_groups, seq_len, vocab_size, generator)
    group = torch.stack((tokens, swapped, tokens.flip(1), swapped.flip(1)), dim=1)  # (n, 4, s)
    tokens = group.reshape(4 * n_groups, seq_len)  # (4n, s)
    return tokens.to(device), a_before_b(tokens).to(device)


def lag_copy_batch(
    batch_size: int,
    seq_len: int,
    vocab_size: int,
    lag: int,
    *,
    generator: torch.Generator,
    bos: bool = True,
    device: Device = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens ``(b, s)`` and targets ``(b, s)`` with ``targets[:, i] = tokens[:, i - lag]``.

    Tokens are uniform over ``0 .. vocab_size - 1``, so chance accuracy is
    ``1 / vocab_size``. With ``bos=True`` position 0 holds the beginning-of-sequence
    token ``vocab_size`` (the model then needs ``vocab_size + 1`` token ids); a
    causal model without positions can count from it (:func:`markov_batch` explains).
    Positions with nothing to copy get ``IGNORE_INDEX``. Returned on ``device``.
    """
    batch_size = check_positive_int("batch_size", batch_size)
    seq_len = check_positive_int("seq_len", seq_len)
    vocab_size = check_positive_int("vocab_size", vocab_size)
    lag = check_positive_int("lag", lag)
    bos = check_bool("bos", bos)
    device = check_device(device)
    _check_batch_fits(2 * batch_size, seq_len, f"batch_size={batch_size}")
    first = 1 if bos else 0  # first content position
    if first + lag >= seq_len:
        raise ValueError(
            f"lag must be smaller than the number of content tokens, got lag={lag}, seq_len={seq_len}, bos={bos}"
        )
    tokens = torch.randint(0, vocab_size, (batch_size, seq_len), generator=_check_generator(generator))
    if bos:
        tokens[:, 0] = vocab_size
    targets = torch.full_like(tokens, IGNORE_INDEX)
    targets[:, first + lag :] = tokens[:, first:-lag]  # (b, s - first - lag)
    return tokens.to(device), targets.to(device)


def markov_rule(vocab_size: int, *, seed: int, device: Device = None) -> torch.Tensor:
    """The tiny language's rule: a table ``(vocab, vocab)`` of int64, ``rule[a, b]`` follows ``a, b``."""
    vocab_size = check_positive_int("vocab_size", vocab_size)
    generator = torch.Generator().manual_seed(check_int("seed", seed))
    check_fits(f"vocab_size={vocab_size} (the rule table)", (vocab_size, vocab_size), torch.int64)
    return torch.randint(0, vocab_size, (vocab_size, vocab_size), generator=generator).to(check_device(device))


def markov_batch(
    batch_size: int, seq_len: int, rule: torch.Tensor, *, p_rule: float, generator: torch.Generator, bos: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences of the tiny language: tokens ``(b, s)`` and next-token targets ``(b, s)``.

    Content tokens follow ``c[i] = rule[c[i-2], c[i-1]]`` with probability
    ``p_rule``, else a uniform random token; the first two are uniform. The
    target at every position is the next content token. Targets that the rule
    cannot predict (the first two content tokens) are ``IGNORE_INDEX``, so every
    scored position has the same best achievable accuracy (:func:`markov_optimum`).

    With ``bos=True`` (default) position 0 holds a beginning-of-sequence token,
    id ``vocab`` (the model needs ``vocab + 1`` token ids), as in the setting of
    Kazemnejad et al. (2023): with a causal mask, uniform attention gives the
    BOS token weight ``1 / (i + 1)`` at position ``i``, from which a model
    without positional encoding can recover ``i``.

    The sequences are drawn on the CPU and returned on ``rule``'s device.
    """
    batch_size = check_positive_int("batch_size", batch_size)
    seq_len = check_positive_int("seq_len", seq_len)
    _check_batch_fits(2 * batch_size, seq_len + 1, f"batch_size={batch_size}")
    rule = check_integer_tensor("rule", rule, dim=2, shape_text="(vocab, vocab)")
    if rule.shape[0] != rule.shape[1] or rule.shape[0] == 0:
        raise ValueError(f"rule must be a square integer table (vocab, vocab), got shape {tuple(rule.shape)}")
    if rule.device.type == "meta":
        raise ValueError("rule must hold values (the tokens are looked up in it), got a tensor on the meta device")
    device, rule = rule.device, rule.cpu()
    vocab_size = rule.shape[0]
    if int(rule.min()) < 0 or int(rule.max()) >= vocab_size:
        raise ValueError(
            f"rule must hold token ids in 0..{vocab_size - 1}, got values in {int(rule.min())}..{int(rule.max())}"
        )
    p_rule = check_probability("p_rule", p_rule)
    bos = check_bool("bos", bos)
    generator = _check_generator(generator)
    n = seq_len if bos else seq_len + 1  # content tokens: inputs and the last target
    c = torch.empty(batch_size, n, dtype=torch.long)
    c[:, :2] = torch.randint(0, vocab_size, (batch_size, min(2, n)), generator=generator)
    for i in range(2, n):
        follows_rule = torch.rand(batch_size, generator=generator) < p_rule  # (b,)
        noise = torch.randint(0, vocab_size, (batch_size,), generator=generator)  # (b,)
        c[:, i] = torch.where(follows_rule, rule[c[:, i - 2], c[:, i - 1]], noise)
    if bos:
        tokens = torch.cat((torch.full((batch_size, 1), vocab_size), c[:, :-1]), dim=1)  # (b, s)
        targets = c.clone()  # target at position i is c[i]
        targets[:, :2] = IGNORE_INDEX
    else:
        tokens, targets = c[:, :-1], c[:, 1:].clone()  # (b, s) each; target at position i is c[i + 1]
        targets[:, 0] = IGNORE_INDEX
    return tokens.to(device), targets.to(device)


def markov_optimum(vocab_size: int, p_rule: float) -> tuple[float, float]:
    """Best achievable ``(accuracy, cross-entropy in nats)`` per scored position of :func:`markov_batch`.

    Knowing the two previous tokens, the next one is ``rule[a, b]`` with probability
    ``q = p_rule + (1 - p_rule) / V`` and each other token with ``(1 - p_rule) / V``.
    """
    vocab_size = check_positive_int("vocab_size", vocab_size)
    p_rule = check_probability("p_rule", p_rule)
    q, r = p_rule + (1 - p_rule) / vocab_size, (1 - p_rule) / vocab_size
    entropy = -q * math.log(q) - ((vocab_size - 1) * r * math.log(r) if r > 0 else 0.0)
    return q, entropy

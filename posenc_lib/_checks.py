"""Argument checks shared by the library.

Every public function validates its arguments up front so that bad input fails
with a message naming the argument and what was expected, instead of an
``IndexError`` or a silently wrong number deep inside a computation.
"""

from __future__ import annotations

import numbers
from typing import Iterable

import torch


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is a positive integer, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r} of type {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def check_even_int(name: str, value: object) -> int:
    """Return ``value`` if it is a positive even integer, else raise."""
    value = check_positive_int(name, value)
    if value % 2:
        raise ValueError(f"{name} must be even (dimensions are rotated in pairs), got {value}")
    return value


def check_positive_float(name: str, value: object) -> float:
    """Return ``value`` as a ``float`` if it is a finite number > 0, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite positive number, got {value}")
    return value


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}; got {value!r}")
    return value  # type: ignore[return-value]


def check_tensor(name: str, value: object, *, min_dim: int = 1) -> torch.Tensor:
    """Return ``value`` if it is a ``torch.Tensor`` with at least ``min_dim`` dimensions."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions, got shape {tuple(value.shape)}")
    return value


def check_floating(name: str, value: torch.Tensor) -> torch.Tensor:
    """Raise ``TypeError`` unless ``value`` has a floating-point dtype."""
    if not value.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {value.dtype}")
    return value

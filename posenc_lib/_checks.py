"""Argument checks shared by the library.

Every public function validates its arguments up front so that bad input fails
with a ``TypeError`` or ``ValueError`` naming the argument and what was expected,
instead of an error from deep inside torch or a silently wrong number.

Integers: Python ints, NumPy integers and 0-d integer tensors are accepted; ``bool``
is refused (``True`` is not the number 1 here). Every tensor whose size an argument sets is
checked against a fixed budget, :data:`MAX_TENSOR_BYTES`, before it is allocated
(:func:`check_fits`): the same limit on every machine and device, so a call that works here
works on a laptop, and a typo such as ``seq_len=10**9`` is an error, not minutes of swapping.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import torch

# the largest integer a float64 holds exactly: positions beyond it would be rounded silently
MAX_EXACT_POSITION = 2**53

# The largest tensor posenc_lib builds from its arguments: 1 GiB, e.g. a float32 table of 131,072
# positions x 2,048 dimensions, or the float32 attention scores of 8 heads x 4,096 x 8,192 pairs.
# Every table, bias, mask and score matrix of the course is far below it (the largest is a few MiB);
# a larger request is a mistake in an argument, refused before anything is allocated, on every device.
MAX_TENSOR_BYTES = 2**30


def _as_integer(name: str, value: object, expected: str) -> int:
    """``value`` as an ``int``: Python/NumPy integers and 0-d integer tensors; ``bool`` is refused."""
    if (
        isinstance(value, torch.Tensor)
        and value.dim() == 0
        and not value.is_floating_point()
        and not value.is_complex()
        and value.dtype != torch.bool
        and value.device.type != "meta"
    ):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {expected}, got {value!r} of type {type(value).__name__}")
    return int(value)


def check_positive_int(name: str, value: object, *, maximum: int = 2**62) -> int:
    """Return ``value`` as an ``int`` if it is an integer in ``1 .. maximum``, else raise."""
    value = _as_integer(name, value, "a positive integer")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    if value > maximum:
        raise ValueError(f"{name} must be at most {maximum:,}, got {value:,}")
    return value


def check_even_int(name: str, value: object) -> int:
    """Return ``value`` if it is a positive even integer, else raise."""
    value = check_positive_int(name, value)
    if value % 2:
        raise ValueError(f"{name} must be even (dimensions are rotated in pairs), got {value}")
    return value


def check_offset(value: object, seq_len: int = 0, name: str = "offset") -> int:
    """Return the position of the first token, an integer >= 0 with ``offset + seq_len <= 2**53``."""
    if type(value) is int and 0 <= value <= MAX_EXACT_POSITION - seq_len:  # the common case, checked quickly
        return value
    value = _as_integer(name, value, "an integer >= 0 (the position of the first token)")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (the position of the first token), got {value}")
    if value + seq_len > MAX_EXACT_POSITION:
        raise ValueError(
            f"{name} + seq_len must be at most 2**53 (larger positions are not exact in float64), "
            f"got {value} + {seq_len}"
        )
    return value


def _unwrap_scalar(value: object) -> object:
    """A 0-d real tensor with a value (not on the meta device) as a Python number; anything else as it is."""
    if (
        isinstance(value, torch.Tensor)
        and value.dim() == 0
        and not value.is_complex()
        and value.dtype != torch.bool
        and value.device.type != "meta"
    ):
        return value.item()
    return value


def check_real(name: str, value: object) -> float:
    """Return ``value`` as a finite ``float`` (Python/NumPy numbers, 0-d real tensors), else raise."""
    value = _unwrap_scalar(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return value


def check_positive_float(name: str, value: object) -> float:
    """Return ``value`` as a ``float`` if it is a finite number > 0 (0-d real tensors too), else raise."""
    value = _unwrap_scalar(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a finite positive number, got {value}")
    return value


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError``."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}; got {value!r}")
    return value


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


def check_dtype(value: object, name: str = "dtype") -> torch.dtype:
    """Return ``value`` if it is a floating-point ``torch.dtype`` (``torch.float32`` ...), else raise ``TypeError``."""
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch dtype such as torch.float32, got {value!r}")
    return value


def check_device(value: object, name: str = "device") -> torch.device:
    """``value`` (``None``, a string or a ``torch.device``) as a ``torch.device``; ``None`` is the default device."""
    if value is None:
        get_default = getattr(torch, "get_default_device", None)
        return get_default() if get_default is not None else torch.device("cpu")
    if not isinstance(value, (str, torch.device)):
        raise TypeError(f"{name} must be None, a string such as 'cpu' or a torch.device, got {type(value).__name__}")
    try:
        device = torch.device(value)
    except RuntimeError:
        raise ValueError(f"{name} must name a device such as 'cpu', 'cuda' or 'meta', got {value!r}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{name}={value!r} asks for CUDA, which is not available on this machine")
    if device.type not in ("cpu", "cuda", "meta"):  # mps, xpu, ...: ask torch whether it can allocate there
        try:
            torch.empty(0, device=device)
        except (RuntimeError, AssertionError) as error:
            raise ValueError(f"{name}={value!r} is not usable here: {error}") from None
    return device


def check_same_device(name: str, value: torch.Tensor, device: torch.device, owner: str) -> None:
    """Raise ``ValueError`` unless ``value`` lives on ``device`` (where ``owner``'s tables are)."""
    if value.device != device:
        raise ValueError(
            f"{name} is on {value.device} but this {owner}'s tables are on {device}: "
            f"move one of them (module.to({str(value.device)!r}) moves the tables)"
        )


def all_finite(value: torch.Tensor) -> bool:
    """``True`` if every entry is finite; always ``True`` on the ``meta`` device, which holds no values."""
    return value.device.type == "meta" or bool(torch.isfinite(value).all())


def check_positions(positions: object, seq_len: int | None = None, name: str = "positions") -> torch.Tensor:
    """Return ``positions`` if it is a 1-D real tensor ``(s,)`` of finite values no larger than ``2**53``.

    An int is refused with a pointer to ``offset=``: in this library ``positions`` is always a
    tensor of token positions, and consecutive positions are given by their first one, ``offset``.
    """
    if (
        isinstance(positions, numbers.Number)
        and not isinstance(positions, bool)
        or (isinstance(positions, torch.Tensor) and positions.dim() == 0)
    ):
        start = (
            positions.item() if isinstance(positions, torch.Tensor) and positions.device.type != "meta" else positions
        )
        hint = f"offset={start}" if isinstance(start, numbers.Integral) else "offset=p"
        raise TypeError(
            f"{name} must be a 1-D tensor of positions (s,), got the number {start!r}; "
            f"for consecutive positions starting there use {hint} (or torch.arange)"
        )
    if not isinstance(positions, torch.Tensor):
        raise TypeError(f"{name} must be a 1-D torch.Tensor of positions (s,), got {type(positions).__name__}")
    if positions.is_complex() or positions.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer or real positions, got dtype {positions.dtype}")
    if positions.dim() != 1 or (seq_len is not None and positions.shape[0] != seq_len):
        expected = "(s,)" if seq_len is None else f"(s,) = ({seq_len},) to match x"
        raise ValueError(f"{name} must have shape {expected}, got shape {tuple(positions.shape)}")
    if positions.device.type != "meta" and positions.numel():
        largest = positions.detach().abs().max()  # a value to check, not part of the result
        if not bool(torch.isfinite(largest)) or float(largest) > MAX_EXACT_POSITION:
            raise ValueError(
                f"{name} must be finite and at most 2**53 in size, got a largest |position| of {float(largest)}"
            )
    return positions


def check_frequencies(
    frequencies: object, *, name: str = "frequencies", size: int | None = None, positive: bool = False
) -> torch.Tensor:
    """Return a 1-D floating tensor of finite frequencies (``> 0`` when ``positive``) as float64.

    The result is part of the caller's autograd graph (a module that stores it detaches it).
    """
    frequencies = check_tensor(name, frequencies)
    if frequencies.dim() != 1:
        raise ValueError(f"{name} must be a 1-D tensor of shape (d/2,), got shape {tuple(frequencies.shape)}")
    if not frequencies.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {frequencies.dtype}")
    if size is not None and frequencies.shape[0] != size:
        raise ValueError(f"{name} must have shape (head_dim/2,) = ({size},), got {tuple(frequencies.shape)}")
    frequencies = frequencies.to(torch.float64)  # not detached: gradients flow to the caller's frequencies
    expected = "finite and > 0" if positive else "finite"
    if not all_finite(frequencies) or (
        positive and frequencies.device.type != "meta" and not bool((frequencies > 0).all())
    ):
        raise ValueError(
            f"{name} must be {expected}, got {frequencies[:8].tolist()}{' ...' if frequencies.shape[0] > 8 else ''}"
        )
    return frequencies


def _bytes_text(n: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _element_bits(dtype: torch.dtype) -> int:
    if dtype == torch.bool:
        return 8
    return torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits


def check_fits(arguments: str, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device | None = None) -> None:
    """Refuse, before allocating, a tensor of ``shape`` and ``dtype`` larger than :data:`MAX_TENSOR_BYTES`.

    ``arguments`` names what set the size, e.g. ``"seq_len=10**9 and d_model=1024"``. The budget is
    the same on every device (``device`` is accepted for the message only), ``meta`` included.
    """
    nbytes = math.prod(shape) * _element_bits(dtype) // 8
    if nbytes > MAX_TENSOR_BYTES:
        where = "" if device is None else f" on {device}"
        raise ValueError(
            f"{arguments} ask for a {tuple(shape)} {dtype} tensor{where} of {nbytes:,} bytes ({_bytes_text(nbytes)}), "
            f"more than posenc_lib's limit of {MAX_TENSOR_BYTES:,} bytes ({_bytes_text(MAX_TENSOR_BYTES)}) "
            f"per tensor (posenc_lib._checks.MAX_TENSOR_BYTES)"
        )


# --- model-side checks (attention, model, learned table, tasks, training) ---------------------


def check_nonnegative_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 0 (as :func:`_as_integer` accepts), else raise."""
    value = _as_integer(name, value, "an integer >= 0")
    if value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value}")
    return value


def check_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is an integer of any sign (e.g. a seed), else raise ``TypeError``."""
    return _as_integer(name, value, "an integer")


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool``, else raise ``TypeError``: ``"False"`` or 0 is not a flag."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")
    return bool(value)


def check_nonnegative_float(name: str, value: object) -> float:
    """Return ``value`` as a ``float`` if it is a finite number >= 0, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite number >= 0, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not 0.0 <= value < float("inf"):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def check_probability(name: str, value: object) -> float:
    """Return ``value`` as a ``float`` if it is a number in ``[0, 1]``, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a probability in [0, 1], got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value}")
    return value


def check_integer_tensor(name: str, value: object, *, dim: int, shape_text: str) -> torch.Tensor:
    """Return ``value`` as an int64 tensor if it is an integer (not bool) tensor with ``dim`` dimensions, else raise.

    Every integer dtype is accepted (uint8, int8, int16, int32, int64, ...) and converted to int64,
    the index type ``nn.Embedding`` and indexing need (a uint8 index would be read as a mask).
    """
    value = check_tensor(name, value, min_dim=dim)
    if value.dim() != dim:
        raise ValueError(f"{name} must have shape {shape_text}, got shape {tuple(value.shape)}")
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor, got dtype {value.dtype}")
    converted = value.to(torch.int64)
    if value.dtype == torch.uint64 and converted.device.type != "meta" and bool((converted < 0).any()):
        raise ValueError(f"{name} must hold values below 2**63, got a uint64 value of 2**63 or more")
    return converted


def check_same_dtype(name: str, value: torch.Tensor, dtype: torch.dtype, owner: str) -> None:
    """Raise ``TypeError`` unless ``value`` has ``dtype``, the dtype of ``owner``'s weights.

    Inputs are not converted silently: rounding a float64 input to float32 weights loses digits the
    caller asked for, and float32 input to float64 weights would mix precisions without saying so.
    """
    if value.dtype != dtype:
        raise TypeError(
            f"{name} has dtype {value.dtype} but this {owner}'s weights are {dtype}: convert one of them "
            f"({name}.to({dtype}) or module.to({value.dtype}))"
        )

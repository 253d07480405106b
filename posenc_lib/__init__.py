"""posenc_lib: the library behind the Positional Encoding course.

Conventions (every function and module follows them):

- Shapes: ``(b, s, d)`` for token vectors and ``(b, n_h, s, d_h)`` for per-head
  queries and keys; ``b`` batch, ``s`` sequence length (``s_q`` queries, ``s_k``
  keys), ``d`` = ``d_model``, ``n_h`` = ``n_heads``, ``d_h`` = ``head_dim``.
  Pair index ``ℓ``, frequency ``θ_ℓ``, base ``B`` (``base``), wavelength
  ``λ_ℓ = 2π / θ_ℓ``, relative position ``r = j - i`` of key ``j`` seen from
  query ``i``, shift ``Δ`` (``delta``), ALiBi slope ``m_h``, extension factor
  ``α`` (``factor``).
- ``positions`` is always a tensor of token positions, shape ``(s,)`` (integer or
  real). An int is never ``positions``; passing one is a ``TypeError`` that
  points to ``offset``.
- ``offset`` (an integer >= 0; NumPy integers and 0-d integer tensors are
  accepted, ``bool`` is refused) is the position of the first token when
  positions are consecutive: ``offset, ..., offset + s - 1``. Default 0.
- Counts are ``seq_len``, ``q_len``, ``k_len``; the longest length a module
  precomputes is ``max_len``.
- Devices and dtypes: everything is built on the device of its input tensor;
  functions with no tensor input take ``device=`` (and ``dtype=`` where the result
  feeds a model: tables and biases default to float32, analysis helpers such as
  frequencies, angles and shift matrices return float64). Module tables follow
  ``.to(device)`` but keep their precision under ``.to(dtype)``.
- Bad input raises ``TypeError`` or ``ValueError`` naming the argument and what
  was expected, including sizes: every tensor whose size an argument sets is
  refused before allocating when it exceeds a fixed budget,
  ``posenc_lib._checks.MAX_TENSOR_BYTES`` (1 GiB), the same on every machine and device.
- Integer inputs (token ids) of any integer dtype are converted to int64; a
  module refuses a floating input of another dtype or device than its weights.
- Gradients flow to every tensor argument that can require grad (``frequencies``,
  real-valued positions, ``x``) and to every module parameter.
- Each encoding function is written as its formula; faster computations of the
  same numbers live in :mod:`posenc_lib.fast`, a leaf handed θ, slopes and tables
  (``posenc_lib.fast.disabled()`` runs the formulas only). Helpers that analyse an
  encoding rather than compute it are in :mod:`posenc_lib.analysis`.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy and editors read; at run time __getattr__ below binds the same names
    from ._api import *  # noqa: F403 (the names are those of posenc_lib._api.__all__)

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Bind every exported name (``posenc_lib._api.__all__``) on first use of any of them.

    So ``import posenc_lib.fast`` loads no formula module; ``import posenc_lib as pe`` followed by
    ``pe.apply_rope`` (or ``from posenc_lib import *``) loads them all, once.
    """
    if name.startswith("_") and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a submodule (`from . import fast`): just it
        return importlib.import_module(f".{name}", __name__)
    api = importlib.import_module("._api", __name__)  # imports every formula module
    globals().update({export: getattr(api, export) for export in api.__all__}, __all__=api.__all__)
    if name not in globals():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *importlib.import_module("._api", __name__).__all__})

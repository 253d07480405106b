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
  was expected, including sizes whose table would not fit in memory (refused
  before allocating).
- Each encoding function is written as its formula; faster computations of the
  same numbers live in :mod:`posenc_lib.fast`, a leaf handed θ, slopes and tables
  (``posenc_lib.fast.disabled()`` runs the formulas only). Helpers that analyse an
  encoding rather than compute it are in :mod:`posenc_lib.analysis`.
"""

from . import explore, fast, questions  # explorable figures and self-check questions; the speed work
from .alibi import alibi_bias, alibi_bias_compact, alibi_slopes
from .analysis import (
    SCORE_TERMS,
    additive_score_terms,
    alibi_attention_span,
    alibi_weights_by_distance,
    convert_qk_weight,
    rope_angle_gap,
    rope_decay_bound,
    sinusoidal_dot_by_distance,
)
from .attention import attention, causal_mask
from .learned import (
    LearnedPositionalEmbedding,
    PositionProbe,
    cosine_similarity_matrix,
    position_targets,
    similarity_by_offset,
    train_position_probe,
)
from .relative import T5RelativeBias, relative_positions, shaw_relative_index, t5_relative_position_bucket
from .rope import (
    RotaryEmbedding,
    apply_partial_rope,
    apply_rope,
    apply_rope_2d,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_angles,
    rope_frequencies,
    rotate_pairs,
    wavelengths,
)
from .rope_scaling import (
    dynamic_ntk_frequencies,
    linear_scaling_frequencies,
    llama3_frequencies,
    ntk_aware_base,
    ntk_aware_frequencies,
    rotations,
    unseen_arc,
    yarn_attention_factor,
    yarn_frequencies,
    yarn_ramp,
)
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    interleaved_to_concatenated_permutation,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_encoding_loop,
    sinusoidal_frequencies,
)
from .toy import ToyAttentionHead, embed_words

__version__ = "0.1.0"

__all__ = [
    "explore",
    "fast",
    "questions",
    # sinusoidal and learned extras
    "PositionProbe",
    "cosine_similarity_matrix",
    "interleaved_to_concatenated_permutation",
    "position_targets",
    "similarity_by_offset",
    "sinusoidal_dot_by_distance",
    "sinusoidal_encoding_loop",
    "train_position_probe",
    # analysis helpers (posenc_lib.analysis)
    "SCORE_TERMS",
    "additive_score_terms",
    "alibi_attention_span",
    "alibi_weights_by_distance",
    "convert_qk_weight",
    "rope_angle_gap",
    "rope_decay_bound",
    # relative biases and RoPE context extension
    "T5RelativeBias",
    "dynamic_ntk_frequencies",
    "linear_scaling_frequencies",
    "llama3_frequencies",
    "ntk_aware_base",
    "ntk_aware_frequencies",
    "relative_positions",
    "rotations",
    "shaw_relative_index",
    "t5_relative_position_bucket",
    "unseen_arc",
    "wavelengths",
    "yarn_attention_factor",
    "yarn_frequencies",
    "yarn_ramp",
    "LearnedPositionalEmbedding",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "ToyAttentionHead",
    "alibi_bias",
    "alibi_bias_compact",
    "alibi_slopes",
    "apply_partial_rope",
    "apply_rope",
    "apply_rope_2d",
    "attention",
    "embed_words",
    "causal_mask",
    "half_to_interleaved_permutation",
    "interleaved_to_half_permutation",
    "rope_angles",
    "rope_frequencies",
    "rotate_pairs",
    "shift_matrix",
    "sinusoidal_encoding",
    "sinusoidal_frequencies",
]

"""Every name ``posenc_lib`` exports, imported from its module (``posenc_lib.__getattr__`` loads this).

Importing this module imports every formula module; ``import posenc_lib.fast`` alone does not.
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

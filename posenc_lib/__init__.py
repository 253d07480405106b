"""posenc_lib: the library behind the Positional Encoding course.

Shape notation throughout: ``b`` batch, ``h`` heads, ``s`` sequence length,
``d`` width (``d_model`` for token vectors, ``head_dim`` for one head).
"""

from .alibi import alibi_bias, alibi_bias_compact, alibi_slopes
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
    apply_rope,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_angles,
    rope_frequencies,
    rotate_pairs,
)
from .rope_scaling import (
    dynamic_ntk_frequencies,
    linear_scaling_frequencies,
    llama3_frequencies,
    ntk_aware_base,
    ntk_aware_frequencies,
    rotations,
    unseen_arc,
    wavelengths,
    yarn_attention_factor,
    yarn_frequencies,
    yarn_ramp,
)
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    interleaved_to_concatenated_permutation,
    shift_matrix,
    sinusoidal_dot_by_distance,
    sinusoidal_encoding,
    sinusoidal_encoding_loop,
    sinusoidal_frequencies,
)
from .toy import ToyAttentionHead, embed_words

__version__ = "0.1.0"

__all__ = [
    # sinusoidal and learned extras (chapters 3 and 4)
    "PositionProbe",
    "cosine_similarity_matrix",
    "interleaved_to_concatenated_permutation",
    "position_targets",
    "similarity_by_offset",
    "sinusoidal_dot_by_distance",
    "sinusoidal_encoding_loop",
    "train_position_probe",
    # relative biases and RoPE context extension (chapter 7)
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
    "apply_rope",
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

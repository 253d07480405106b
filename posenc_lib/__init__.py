"""posenc_lib: the library behind the Positional Encoding course.

Shape notation throughout: ``b`` batch, ``h`` heads, ``s`` sequence length,
``d`` width (``d_model`` for token vectors, ``head_dim`` for one head).
"""

from .alibi import alibi_bias, alibi_slopes
from .attention import attention, causal_mask
from .learned import LearnedPositionalEmbedding
from .rope import (
    RotaryEmbedding,
    apply_rope,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_angles,
    rope_frequencies,
    rotate_pairs,
)
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_frequencies,
)
from .toy import ToyAttentionHead, embed_words

__version__ = "0.1.0"

__all__ = [
    "LearnedPositionalEmbedding",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "ToyAttentionHead",
    "alibi_bias",
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

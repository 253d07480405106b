"""Checkers for the course's coding exercises.

Each chapter's checkers live in their own module here and are re-exported below.
A notebook calls a checker right after the student's cell, e.g.
``check_sinusoidal(my_sinusoidal)``; it prints a verdict and returns a
:class:`CheckResult` that is truthy only when the answer is right.
"""

from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function
from .alibi import check_alibi_slopes
from .experiments import check_directional_alibi, check_interpolate
from .extension import check_ntk_frequencies, check_t5_bucket
from .model import check_fraction_unseen, check_interleaved_to_half, check_is_equivariant, check_rope_scores
from .rope import check_rope_half, check_rope_interleaved
from .analogy import check_add_positions
from .learned import check_position_lookup
from .sinusoidal import check_shift_matrix, check_sinusoidal

__all__ = ["Case", "CheckResult", "Diagnosis", "arrays_close", "check_function"]
__all__ += ["check_alibi_slopes", "check_rope_half", "check_rope_interleaved"]
__all__ += ["check_directional_alibi", "check_interpolate"]
__all__ += ["check_ntk_frequencies", "check_t5_bucket"]
__all__ += ["check_fraction_unseen", "check_interleaved_to_half", "check_is_equivariant", "check_rope_scores"]
__all__ += ["check_add_positions", "check_position_lookup", "check_shift_matrix", "check_sinusoidal"]

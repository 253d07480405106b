"""Checkers for the course's coding exercises.

Each chapter's checkers live in their own module here and are re-exported below.
A notebook calls a checker right after the student's cell, e.g.
``check_next_row(my_next_row)``; it prints a verdict and returns a
:class:`CheckResult` that is truthy only when the answer is right. How a checker is written
(cases, diagnoses, the library code the answer must not call) is in ``_core``'s docstring.
"""

from ._core import Case, CheckResult, Diagnosis, LibraryCallError, arrays_close, check_function, library_unavailable
from .alibi import check_alibi_slopes
from .analogy import check_add_positions, check_position_share
from .choosing import check_fraction_unseen
from .experiments import check_directional_alibi, check_interpolate
from .interview_questions import check_rope_partners, mystery_rope
from .learned import check_updates_per_row
from .long_context import check_llama3_groups, check_ntk_frequencies
from .real_text import check_key_set_mask
from .relative_biases import check_bucket_starts, check_untrained_buckets
from .rope import check_offset_scores, check_offset_scores_interleaved
from .sinusoidal import check_next_row, check_shift_matrix
from .where_it_plugs_in import check_rope_scores
from .why_order_matters import check_table_symmetries

__all__ = [
    "Case",
    "CheckResult",
    "Diagnosis",
    "LibraryCallError",
    "arrays_close",
    "check_function",
    "library_unavailable",
]
__all__ += ["check_alibi_slopes", "check_offset_scores", "check_offset_scores_interleaved"]
__all__ += ["check_directional_alibi", "check_interpolate"]
__all__ += ["check_llama3_groups", "check_ntk_frequencies", "check_bucket_starts", "check_untrained_buckets"]
__all__ += [
    "check_fraction_unseen",
    "check_rope_partners",
    "check_table_symmetries",
    "check_rope_scores",
    "mystery_rope",
]
__all__ += ["check_add_positions", "check_next_row", "check_shift_matrix", "check_updates_per_row"]
__all__ += ["check_key_set_mask", "check_position_share"]

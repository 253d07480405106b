"""Self-check questions for chapter 4, learned position embeddings (the format: see the package docstring).

Every number a reader sees is computed here with posenc_lib when the notebook runs; every option marked
right is checked by a computation. The random tables are drawn in a forked random state, so placing the
questions leaves the notebook's own random numbers as they were.
"""

from __future__ import annotations

import torch

from ..learned import LearnedPositionalEmbedding, cosine_similarity_matrix, similarity_by_offset
from . import Choice, Numeric, Option, Question, Wrong

BERT_WIDTH, BERT_POSITIONS = 768, 512  # BERT base


def _last_position(max_len: int) -> int:
    """The largest position a table of ``max_len`` rows serves: the longest sequence it accepts, minus one."""
    table = LearnedPositionalEmbedding(4, max_len)

    def accepts(seq_len: int) -> bool:
        try:
            table(torch.zeros(1, seq_len, 4))
        except ValueError:
            return False
        return True

    longest = next(seq_len for seq_len in range(1, 2 * max_len + 2) if not accepts(seq_len + 1))
    return longest - 1  # positions 0 .. longest - 1


def _error_of_overflow(max_len: int) -> tuple[str, str]:
    try:
        LearnedPositionalEmbedding(4, max_len)(torch.zeros(1, max_len + 1, 4))
    except (ValueError, IndexError) as error:
        return type(error).__name__, str(error)
    return "", ""


def _untouched_rows_get_no_gradient() -> bool:
    """A loss on sequences of 6 positions, a table of 8 rows: rows 6 and 7 get an exactly zero gradient (so Adam,
    without weight decay, leaves them as they are), rows 0 .. 5 do not."""
    table = LearnedPositionalEmbedding(4, 8)
    table(torch.randn(2, 6, 4)).square().sum().backward()  # looks up rows 0 .. 5
    grad = table.weight.grad
    assert grad is not None
    return bool((grad[6:] == 0).all() and (grad[:6] != 0).any(-1).all())


def questions() -> list[Question]:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        bert = LearnedPositionalEmbedding(BERT_WIDTH, BERT_POSITIONS).weight.numel()
        last = _last_position(BERT_POSITIONS)
        error_type, message = _error_of_overflow(BERT_POSITIONS)
        unchanged = _untouched_rows_get_no_gradient()
        initial = LearnedPositionalEmbedding(32, 64).weight.detach()
        neighbours = similarity_by_offset(cosine_similarity_matrix(initial), 1)[1].item()
    return [
        Numeric(
            label="q-learned-params",
            prompt=f"BERT base learns one position vector of width d = {BERT_WIDTH} for each of "
            f"{BERT_POSITIONS} positions. How many parameters is that table?",
            answer=lambda: bert,
            relative=0.0,
            explanation=f"max_len × d = {BERT_POSITIONS} × {BERT_WIDTH} = {bert:,}; a sinusoidal table has none.",
            wrong=(
                Wrong(lambda: BERT_POSITIONS, "Each position has a whole vector of d numbers, not one number."),
                Wrong(lambda: BERT_WIDTH, "That is one row; the table has one row per position."),
            ),
        ),
        Numeric(
            label="q-learned-last",
            prompt=f"A learned table with max_len = {BERT_POSITIONS} (as in BERT): what is the largest position it has "
            "a vector for?",
            answer=lambda: last,
            relative=0.0,
            explanation=f"Positions count from 0, so the {BERT_POSITIONS} rows are positions 0 .. {last}; a sequence "
            f"of {last + 2} tokens needs a row that does not exist.",
            wrong=(
                Wrong(
                    lambda: BERT_POSITIONS,
                    f"Counting from 0, row {BERT_POSITIONS} is the {BERT_POSITIONS + 1}-th: there is none.",
                ),
            ),
        ),
        Choice(
            label="q-learned-too-long",
            prompt=f"pe.LearnedPositionalEmbedding(d, max_len={BERT_POSITIONS}) gets a sequence of "
            f"{BERT_POSITIONS + 1} token vectors. What happens?",
            options=(
                Option(
                    "A ValueError that names the position and max_len.",
                    f"It says: {message.split(';')[0]}.",
                ),
                Option(
                    "An IndexError from inside the lookup.",
                    "That is what a bare nn.Embedding raises, naming neither the position nor the table's size; the "
                    "library checks first.",
                ),
                Option(
                    "The last position reuses row 0.",
                    "Nothing wraps around in the library; plain tensor indexing does wrap negative positions, W[-1] "
                    "being the last row.",
                ),
            ),
            correct=0,
            verify=lambda: 0 if error_type == "ValueError" and str(BERT_POSITIONS) in message else 1,
            explanation="Past max_len there is no row at all: a learned table has a hard length limit.",
        ),
        Choice(
            label="q-learned-unseen",
            prompt="A learned table is trained with AdamW, no weight decay, on sequences that never reach its last "
            "rows. After training, those rows are:",
            options=(
                Option(
                    "their random initial values, bit for bit.",
                    "Rows never looked up get a zero gradient, and Adam moves nothing whose gradient was always zero.",
                ),
                Option(
                    "pulled towards the trained rows before them.",
                    "Each row is a separate parameter: nothing ties row p to row p - 1.",
                ),
                Option("zero.", "Only weight decay shrinks them, and even then by a factor, not to zero."),
            ),
            correct=0,
            verify=lambda: 0 if unchanged else 1,
            explanation="The model runs on such positions without an error, and reads noise: the quiet failure of "
            "learned tables.",
        ),
        Choice(
            label="q-learned-initial",
            prompt="Before any training, how alike are the vectors of neighbouring positions in a learned table "
            "(d = 32, 64 rows)?",
            options=(
                Option(
                    "About as alike as any two rows: their mean cosine similarity is near 0.",
                    f"Measured: {neighbours:.3f} for rows one apart.",
                ),
                Option(
                    "Nearly equal: neighbouring rows start close.",
                    "The rows are drawn independently at random; nothing in nn.Embedding knows about order.",
                ),
                Option("Opposite: cosine similarity near -1.", "Independent random vectors are nearly orthogonal."),
            ),
            correct=0,
            verify=lambda: 0 if abs(neighbours) < 0.2 else 1 if neighbours > 0.8 else 2,
            explanation="A learned table has no built-in notion of nearby: it learns one only where the task rewards "
            "it.",
        ),
    ]

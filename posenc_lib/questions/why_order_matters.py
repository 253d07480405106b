"""Self-check questions for chapter 1, why order matters (the format: see the package docstring).

Every number a reader sees is computed here with posenc_lib when the notebook runs, with the chapter's
toy head (``ToyAttentionHead.random(8, seed=0)``) and its two sentences; every option marked right is
checked by a computation.
"""

from __future__ import annotations

import torch

from ..sinusoidal import sinusoidal_encoding
from ..toy import ToyAttentionHead, embed_words
from . import Choice, Numeric, Option, Question, Wrong

D_MODEL = 8
SENTENCE = "the cat bites the dog".split()
SWAPPED = "the dog bites the cat".split()
BOUND = 1e-5  # float32 round-off of the head, as a bound


def questions() -> list[Question]:
    head = ToyAttentionHead.random(D_MODEL, seed=0)
    x, x_swapped = embed_words(SENTENCE, D_MODEL), embed_words(SWAPPED, D_MODEL)  # (5, d) each
    out, _ = head(x)
    out_swapped, _ = head(x_swapped)
    cat_gap = (out[1] - out_swapped[4]).abs().max().item()  # "cat" is token 1, then token 4
    table = sinusoidal_encoding(len(SENTENCE), D_MODEL)  # (5, d)
    with_positions, _ = head(x + table)
    with_positions_swapped, _ = head(x_swapped + table)
    positions_gap = (with_positions[1] - with_positions_swapped[4]).norm().item()
    perm = torch.tensor([4, 2, 0, 1, 3])
    out_permuted, _ = head(x[perm])
    equivariant = bool(torch.allclose(out_permuted, out[perm], atol=BOUND))
    invariant = bool(torch.allclose(out_permuted, out, atol=BOUND))
    _, causal_weights = head(x, causal=True)  # (5, 5)
    nonzero = int((causal_weights > 0).sum())
    words = ["the", "cat", "bites", "dog"]
    w = embed_words(words, D_MODEL)  # (4, d)
    scores = w @ head.w_q @ head.w_k.T @ w.T / D_MODEL**0.5  # (4, 4): x_i^T A x_j / sqrt(d_h)
    own = scores.diagonal()
    s = len(SENTENCE)
    return [
        Choice(
            label="q-why-order-matters-cat",
            prompt="One attention head, no positions, reads 'the cat bites the dog' and then 'the dog bites the cat'. "
            "How do the two output vectors of 'cat' compare?",
            options=(
                Option(
                    "They are the same, up to float32 rounding.",
                    f"Their largest difference is below {BOUND:g}: nothing in the input says where 'cat' stands.",
                ),
                Option(
                    "They differ: 'cat' is the subject in one sentence and the object in the other.",
                    "The head only sees the set of word vectors; the roles come from the order, which it never gets.",
                ),
                Option(
                    "They differ by how far 'cat' moved (three places).",
                    "No distance enters anywhere: scores, softmax and values are computed from the word vectors alone.",
                ),
            ),
            correct=0,
            verify=lambda: 0 if cat_gap < BOUND else 1,
            explanation="Without positions, attention is permutation-equivariant: reordering the tokens reorders "
            "the outputs and changes nothing else.",
        ),
        Choice(
            label="q-why-order-matters-symmetry",
            prompt="P reorders the rows (tokens) of X. Which holds for one attention head without positions or mask?",
            options=(
                Option(
                    "Attn(PX) = Attn(X): it is permutation-invariant.",
                    "The outputs come back reordered, so they are not the same matrix; only something that forgets "
                    "their order, such as their mean, is invariant.",
                ),
                Option("Attn(PX) = P Attn(X): it is permutation-equivariant.", "Each token keeps its own output."),
                Option(
                    "Neither: reordering changes the outputs.",
                    "Reordering re-indexes the scores, the softmax works row by row, and the values are reordered "
                    "the same way: the outputs are the old ones, reordered.",
                ),
            ),
            correct=1,
            verify=lambda: 0 if invariant else 1 if equivariant else 2,
            explanation="The scores become P (X W_q W_k^T X^T) P^T: re-indexed, not changed.",
        ),
        Numeric(
            label="q-why-order-matters-causal",
            prompt=f"A causal mask over a sentence of {s} tokens: how many (query, key) pairs get a nonzero attention "
            "weight?",
            answer=lambda: nonzero,
            relative=0.0,
            explanation=f"Query i sees the keys 0 .. i: 1 + 2 + ... + {s} = {nonzero} pairs. The first token sees only "
            "itself and the last sees everyone, which is how the mask leaks the order.",
            wrong=(
                Wrong(lambda: s * s, "That is every pair: the mask hides the keys after each query."),
                Wrong(lambda: nonzero - s, "A query also attends to its own key (j = i)."),
            ),
        ),
        Choice(
            label="q-why-order-matters-own-score",
            prompt="The score of query i and key j is x_i^T W_q W_k^T x_j / sqrt(d_h). Can a token give its own key a "
            "negative score, lower than the score it gives another token?",
            options=(
                Option(
                    "No: a vector is most similar to itself, so its own score is the highest.",
                    "That holds for the similarity x_i^T x_j, not for a learned bilinear form.",
                ),
                Option(
                    "Yes: W_q W_k^T need not be symmetric or positive semi-definite.",
                    f"In the chapter's head all of 'the', 'cat', 'bites', 'dog' do: the most negative own score is "
                    f"{own.min().item():.2f}.",
                ),
            ),
            correct=1,
            verify=lambda: 1 if bool((own < 0).all() and (scores.max(dim=1).values > own).all()) else 0,
            explanation="A score is a learned bilinear form, not a similarity: a head can prefer other tokens to the "
            "token itself, as a head linking a verb to its subject must.",
        ),
        Choice(
            label="q-why-order-matters-positions",
            prompt="The same head, with the sinusoidal position vectors PE(0) ... PE(4) added to the word vectors of "
            "both sentences. How do the two outputs of 'cat' compare now?",
            options=(
                Option(
                    "Still the same: the same words get the same outputs.",
                    "'cat' is now e(cat) + PE(1) in one sentence and e(cat) + PE(4) in the other: two inputs.",
                ),
                Option(
                    "They differ: the input of 'cat' depends on where it stands.",
                    f"The two outputs are {positions_gap:.2f} apart.",
                ),
            ),
            correct=1,
            verify=lambda: 1 if positions_gap > 100 * BOUND else 0,
            explanation="A distinct vector per position breaks the symmetry, so the layers above can tell the biter "
            "from the bitten.",
        ),
    ]

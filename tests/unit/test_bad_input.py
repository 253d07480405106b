"""Bad input to the encodings fails early, with an error naming the argument; odd but valid input works.

``BAD`` is a table of calls that must raise ``TypeError`` or ``ValueError`` with a message
containing the given text (which names the argument). ``GOOD`` is a table of calls that must
*succeed* and equal a plain call (NumPy integers, 0-d tensors, ...). Sizes whose tensor exceeds
the fixed budget ``MAX_TENSOR_BYTES`` (1 GiB, on every device) must be refused before anything is
allocated, naming the argument and the bytes. ``GRADIENTS`` is a table of gradchecks.
The model side (attention, model, learned table, ...) has its own table.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.analysis import (
    alibi_attention_span,
    alibi_weights_by_distance,
    convert_qk_weight,
    rope_angle_gap,
    rope_decay_bound,
)

THETA = pe.rope_frequencies(8)  # (4,)
X = torch.randn(4, 8)  # (s, d_h)
COS = SIN = torch.ones(4, 4)
ROTARY = pe.RotaryEmbedding(8, 16)
SINUSOIDAL = pe.SinusoidalPositionalEncoding(8, 16)
NAN, INF = float("nan"), float("inf")
MEMORY = "bytes"  # refusals of sizes that cannot fit say how many bytes they would take

# (id, call, exception type, text the message must contain)
BAD = [
    # sinusoidal_frequencies
    ("sf-zero", lambda: pe.sinusoidal_frequencies(0), ValueError, "d_model must be a positive integer"),
    ("sf-base0", lambda: pe.sinusoidal_frequencies(8, base=0), ValueError, "base must be a finite positive number"),
    ("sf-base-nan", lambda: pe.sinusoidal_frequencies(8, base=NAN), ValueError, "base"),
    ("sf-base-inf", lambda: pe.sinusoidal_frequencies(8, base=INF), ValueError, "base"),
    ("sf-base-str", lambda: pe.sinusoidal_frequencies(8, base="10000"), TypeError, "base"),
    ("sf-bool", lambda: pe.sinusoidal_frequencies(True), TypeError, "d_model"),
    ("sf-device-name", lambda: pe.sinusoidal_frequencies(8, device="gpu0"), ValueError, "device"),
    ("sf-device-type", lambda: pe.sinusoidal_frequencies(8, device=3.5), TypeError, "device"),
    ("sf-huge", lambda: pe.sinusoidal_frequencies(10**13), ValueError, "d_model=10000000000000"),
    # sinusoidal_encoding
    ("se-zero", lambda: pe.sinusoidal_encoding(0, 8), ValueError, "seq_len must be a positive integer"),
    ("se-negative", lambda: pe.sinusoidal_encoding(-3, 8), ValueError, "seq_len"),
    ("se-float", lambda: pe.sinusoidal_encoding(4.5, 8), TypeError, "seq_len must be a positive integer"),
    ("se-bool", lambda: pe.sinusoidal_encoding(True, 8), TypeError, "seq_len"),
    ("se-d0", lambda: pe.sinusoidal_encoding(4, 0), ValueError, "d_model must be a positive integer"),
    ("se-layout", lambda: pe.sinusoidal_encoding(4, 8, layout="sincos"), ValueError, "layout must be one of"),
    ("se-layout-none", lambda: pe.sinusoidal_encoding(4, 8, layout=None), ValueError, "layout"),
    ("se-base", lambda: pe.sinusoidal_encoding(4, 8, base=-1), ValueError, "base must be a finite positive number"),
    (
        "se-numpy-dtype",
        lambda: pe.sinusoidal_encoding(4, 8, dtype=np.float32),
        TypeError,
        "dtype must be a floating-point torch dtype",
    ),
    ("se-int-dtype", lambda: pe.sinusoidal_encoding(4, 8, dtype=torch.int32), TypeError, "dtype"),
    ("se-str-dtype", lambda: pe.sinusoidal_encoding(4, 8, dtype="float32"), TypeError, "dtype"),
    ("se-offset-negative", lambda: pe.sinusoidal_encoding(4, 8, offset=-1), ValueError, "offset must be >= 0"),
    ("se-offset-bool", lambda: pe.sinusoidal_encoding(4, 8, offset=True), TypeError, "offset"),
    ("se-offset-float", lambda: pe.sinusoidal_encoding(4, 8, offset=2.0), TypeError, "offset"),
    (
        "se-offset-inexact",
        lambda: pe.sinusoidal_encoding(4, 8, offset=2**53),
        ValueError,
        "offset + seq_len must be at most 2**53",
    ),
    ("se-huge", lambda: pe.sinusoidal_encoding(10**9, 1024), ValueError, "seq_len=1000000000 and d_model=1024"),
    ("se-numpy-float", lambda: pe.sinusoidal_encoding(np.float64(4), 8), TypeError, "seq_len"),
    ("se-0d-float-tensor", lambda: pe.sinusoidal_encoding(4, torch.tensor(8.0)), TypeError, "d_model"),
    ("se-1d-tensor", lambda: pe.sinusoidal_encoding(torch.tensor([4]), 8), TypeError, "seq_len"),
    ("se-too-large-int", lambda: pe.sinusoidal_encoding(2**63, 8), ValueError, "seq_len must be at most"),
    ("se-meta-0d", lambda: pe.sinusoidal_encoding(torch.tensor(4, device="meta"), 8), TypeError, "seq_len"),
    # shift_matrix
    ("sm-nan", lambda: pe.shift_matrix(NAN, 8), ValueError, "delta must be a finite number"),
    ("sm-inf", lambda: pe.shift_matrix(INF, 8), ValueError, "delta"),
    ("sm-str", lambda: pe.shift_matrix("1", 8), TypeError, "delta must be a real number"),
    ("sm-bool", lambda: pe.shift_matrix(True, 8), TypeError, "delta"),
    ("sm-tensor", lambda: pe.shift_matrix(torch.tensor([1.0]), 8), TypeError, "delta"),
    ("sm-odd", lambda: pe.shift_matrix(1, 5), ValueError, "d_model must be even"),
    ("sm-zero", lambda: pe.shift_matrix(1, 0), ValueError, "d_model"),
    ("sm-huge", lambda: pe.shift_matrix(1, 10**6), ValueError, "d_model=1000000"),
    ("sm-int-dtype", lambda: pe.shift_matrix(1, 8, dtype=torch.int64), TypeError, "dtype"),
    # SinusoidalPositionalEncoding
    ("spe-max-len", lambda: pe.SinusoidalPositionalEncoding(8, max_len=0), ValueError, "max_len"),
    ("spe-d", lambda: pe.SinusoidalPositionalEncoding(0), ValueError, "d_model"),
    ("spe-d-float", lambda: pe.SinusoidalPositionalEncoding(8.0), TypeError, "d_model"),
    ("spe-layout", lambda: pe.SinusoidalPositionalEncoding(8, 16, layout="x"), ValueError, "layout"),
    ("spe-huge", lambda: pe.SinusoidalPositionalEncoding(8, max_len=10**12), ValueError, "seq_len=1000000000000"),
    (
        "spe-int-x",
        lambda: SINUSOIDAL(torch.zeros(2, 3, 8, dtype=torch.int64)),
        TypeError,
        "x must have a floating-point dtype",
    ),
    ("spe-width", lambda: SINUSOIDAL(torch.zeros(2, 3, 5)), ValueError, "d_model=8"),
    ("spe-1d", lambda: SINUSOIDAL(torch.zeros(8)), ValueError, "x must have at least 2 dimensions"),
    ("spe-numpy", lambda: SINUSOIDAL(np.zeros((3, 8))), TypeError, "x must be a torch.Tensor"),
    ("spe-offset-negative", lambda: SINUSOIDAL(torch.zeros(3, 8), offset=-1), ValueError, "offset"),
    ("spe-offset-bool", lambda: SINUSOIDAL(torch.zeros(3, 8), offset=True), TypeError, "offset"),
    ("spe-offset-float", lambda: SINUSOIDAL(torch.zeros(3, 8), offset=1.5), TypeError, "offset"),
    ("spe-device", lambda: SINUSOIDAL(torch.zeros(3, 8, device="meta")), ValueError, "x is on meta"),
    # sinusoidal_encoding_loop, sinusoidal_dot_by_distance, interleaved_to_concatenated_permutation
    ("loop-zero", lambda: pe.sinusoidal_encoding_loop(0, 4), ValueError, "seq_len must be a positive integer"),
    ("loop-float", lambda: pe.sinusoidal_encoding_loop(3, 2.0), TypeError, "d_model must be a positive integer"),
    ("loop-base", lambda: pe.sinusoidal_encoding_loop(3, 4, base=-1), ValueError, "base"),
    ("loop-huge", lambda: pe.sinusoidal_encoding_loop(10**7, 10**4), ValueError, "seq_len=10000000 and d_model=10000"),
    ("dot-odd", lambda: pe.sinusoidal_dot_by_distance(1, 5), ValueError, "d_model must be even"),
    ("dot-str", lambda: pe.sinusoidal_dot_by_distance("far", 4), TypeError, "distance must be a real number"),
    (
        "dot-inf",
        lambda: pe.sinusoidal_dot_by_distance(torch.tensor([1.0, INF]), 4),
        ValueError,
        "distance must be finite",
    ),
    ("dot-nan", lambda: pe.sinusoidal_dot_by_distance(NAN, 4), ValueError, "distance"),
    ("dot-complex", lambda: pe.sinusoidal_dot_by_distance(torch.tensor([1j]), 4), TypeError, "distance"),
    ("dot-bool", lambda: pe.sinusoidal_dot_by_distance(torch.tensor([True]), 4), TypeError, "distance"),
    ("dot-list", lambda: pe.sinusoidal_dot_by_distance([1, 2], 4), TypeError, "distance"),
    ("perm-zero", lambda: pe.interleaved_to_concatenated_permutation(0), ValueError, "d_model"),
    ("perm-float", lambda: pe.interleaved_to_concatenated_permutation(2.5), TypeError, "d_model"),
    # rope_frequencies, rope_angles, wavelengths
    ("rf-odd", lambda: pe.rope_frequencies(7), ValueError, "head_dim must be even"),
    ("rf-zero", lambda: pe.rope_frequencies(0), ValueError, "head_dim must be a positive integer"),
    ("rf-float", lambda: pe.rope_frequencies(8.0), TypeError, "head_dim"),
    ("rf-bool", lambda: pe.rope_frequencies(True), TypeError, "head_dim"),
    ("rf-base", lambda: pe.rope_frequencies(8, base=0), ValueError, "base"),
    ("rf-base-nan", lambda: pe.rope_frequencies(8, base=NAN), ValueError, "base"),
    ("rf-device", lambda: pe.rope_frequencies(8, device="nope"), ValueError, "device"),
    ("ra-int", lambda: pe.rope_angles(5, THETA), TypeError, "use offset="),
    (
        "ra-bool",
        lambda: pe.rope_angles(torch.tensor([True, False]), THETA),
        TypeError,
        "positions must hold integer or real",
    ),
    ("ra-complex", lambda: pe.rope_angles(torch.tensor([1 + 1j]), THETA), TypeError, "positions"),
    ("ra-2d", lambda: pe.rope_angles(torch.zeros(2, 3), THETA), ValueError, r"positions must have shape (s,)"),
    ("ra-nan", lambda: pe.rope_angles(torch.tensor([NAN]), THETA), ValueError, "positions must be finite"),
    (
        "ra-inexact",
        lambda: pe.rope_angles(torch.tensor([2.0**60]), THETA),
        ValueError,
        "positions must be finite and at most 2**53",
    ),
    ("ra-list", lambda: pe.rope_angles([0, 1, 2], THETA), TypeError, "positions must be a 1-D torch.Tensor"),
    (
        "ra-freq-nan",
        lambda: pe.rope_angles(torch.arange(3), torch.tensor([NAN, 1.0])),
        ValueError,
        "frequencies must be finite",
    ),
    (
        "ra-freq-int",
        lambda: pe.rope_angles(torch.arange(3), torch.arange(4)),
        TypeError,
        "frequencies must have a floating-point dtype",
    ),
    (
        "ra-freq-2d",
        lambda: pe.rope_angles(torch.arange(3), torch.ones(2, 2)),
        ValueError,
        "frequencies must be a 1-D tensor",
    ),
    (
        "ra-freq-list",
        lambda: pe.rope_angles(torch.arange(3), [1.0, 2.0]),
        TypeError,
        "frequencies must be a torch.Tensor",
    ),
    (
        "ra-huge",
        lambda: pe.rope_angles(torch.arange(10**7), torch.ones(10**6)),
        ValueError,
        "positions of length 10000000",
    ),
    ("wl-zero", lambda: pe.wavelengths(torch.tensor([1.0, 0.0])), ValueError, "frequencies must be finite and > 0"),
    ("wl-negative", lambda: pe.wavelengths(torch.tensor([1.0, -1.0])), ValueError, "frequencies"),
    ("wl-int", lambda: pe.wavelengths(5), TypeError, "frequencies must be a torch.Tensor"),
    ("wl-2d", lambda: pe.wavelengths(torch.tensor([[1.0]])), ValueError, "frequencies must be a 1-D tensor"),
    # rotate_pairs
    (
        "rp-int",
        lambda: pe.rotate_pairs(torch.zeros(4, 8, dtype=torch.int64), COS, SIN),
        TypeError,
        "x must have a floating-point dtype",
    ),
    (
        "rp-odd",
        lambda: pe.rotate_pairs(torch.zeros(4, 7), torch.ones(4, 3), torch.ones(4, 3)),
        ValueError,
        r"head_dim (x.shape[-1]) must be even",
    ),
    ("rp-cos-shape", lambda: pe.rotate_pairs(X, torch.ones(4, 3), SIN), ValueError, "cos must broadcast to"),
    ("rp-cos-bigger", lambda: pe.rotate_pairs(X, torch.ones(2, 4, 4), SIN), ValueError, "cos must broadcast"),
    (
        "rp-cos-int",
        lambda: pe.rotate_pairs(X, torch.ones(4, 4, dtype=torch.int64), SIN),
        TypeError,
        "cos must have a floating-point dtype",
    ),
    ("rp-sin-list", lambda: pe.rotate_pairs(X, COS, [1.0]), TypeError, "sin must be a torch.Tensor"),
    (
        "rp-layout",
        lambda: pe.rotate_pairs(X, COS, SIN, layout="neox"),
        ValueError,
        "layout must be one of 'half', 'interleaved'",
    ),
    ("rp-numpy", lambda: pe.rotate_pairs(np.zeros((4, 8)), COS, SIN), TypeError, "x must be a torch.Tensor"),
    ("rp-0d", lambda: pe.rotate_pairs(torch.tensor(1.0), COS, SIN), ValueError, "x must have at least 1 dimensions"),
    # apply_rope
    ("ar-odd", lambda: pe.apply_rope(torch.zeros(2, 5, 7)), ValueError, r"head_dim (x.shape[-1]) must be even"),
    ("ar-1d", lambda: pe.apply_rope(torch.zeros(8)), ValueError, "x must have at least 2 dimensions"),
    ("ar-numpy", lambda: pe.apply_rope(np.zeros((4, 8))), TypeError, "x must be a torch.Tensor"),
    ("ar-int", lambda: pe.apply_rope(torch.zeros(4, 8, dtype=torch.int64)), TypeError, "floating-point"),
    (
        "ar-bool",
        lambda: pe.apply_rope(torch.zeros(4, 8, dtype=torch.bool)),
        TypeError,
        "x must have a floating-point dtype",
    ),
    (
        "ar-complex",
        lambda: pe.apply_rope(torch.zeros(4, 8, dtype=torch.complex64)),
        TypeError,
        "x must have a floating-point dtype",
    ),
    ("ar-layout", lambda: pe.apply_rope(X, layout="neox"), ValueError, "layout must be one of 'half', 'interleaved'"),
    (
        "ar-positions-shape",
        lambda: pe.apply_rope(X, torch.arange(3)),
        ValueError,
        r"positions must have shape (s,) = (4,)",
    ),
    ("ar-int-positions", lambda: pe.apply_rope(X, 3), TypeError, "use offset=3"),
    ("ar-negative-int-positions", lambda: pe.apply_rope(X, -1), TypeError, "positions must be a 1-D tensor"),
    ("ar-offset-negative", lambda: pe.apply_rope(X, offset=-1), ValueError, "offset must be >= 0"),
    ("ar-offset-bool", lambda: pe.apply_rope(X, offset=True), TypeError, "offset"),
    ("ar-offset-inexact", lambda: pe.apply_rope(X, offset=2**53), ValueError, "offset + seq_len"),
    ("ar-positions-list", lambda: pe.apply_rope(X, [0, 1, 2, 3]), TypeError, "positions must be a 1-D torch.Tensor"),
    ("ar-positions-bool", lambda: pe.apply_rope(X, torch.ones(4, dtype=torch.bool)), TypeError, "positions"),
    (
        "ar-positions-nan",
        lambda: pe.apply_rope(X, torch.tensor([0.0, 1.0, NAN, 3.0])),
        ValueError,
        "positions must be finite",
    ),
    ("ar-both", lambda: pe.apply_rope(X, torch.arange(4), offset=2), ValueError, "give positions or offset, not both"),
    ("ar-freq-shape", lambda: pe.apply_rope(X, frequencies=torch.ones(3)), ValueError, "frequencies must have shape"),
    (
        "ar-freq-nan",
        lambda: pe.apply_rope(X, frequencies=torch.tensor([1.0, NAN, 1.0, 1.0])),
        ValueError,
        "frequencies must be finite",
    ),
    ("ar-base", lambda: pe.apply_rope(X, base=0), ValueError, "base"),
    # RotaryEmbedding
    ("re-odd", lambda: pe.RotaryEmbedding(7), ValueError, "head_dim must be even"),
    ("re-layout", lambda: pe.RotaryEmbedding(8, layout="x"), ValueError, "layout"),
    ("re-max-len", lambda: pe.RotaryEmbedding(8, max_len=0), ValueError, "max_len must be a positive integer"),
    ("re-huge", lambda: pe.RotaryEmbedding(8, max_len=10**12), ValueError, "max_len=1000000000000"),
    ("re-factor-zero", lambda: pe.RotaryEmbedding(8, attention_factor=0), ValueError, "attention_factor"),
    ("re-factor-nan", lambda: pe.RotaryEmbedding(8, attention_factor=NAN), ValueError, "attention_factor"),
    (
        "re-freq-shape",
        lambda: pe.RotaryEmbedding(8, frequencies=torch.ones(3)),
        ValueError,
        "frequencies must have shape",
    ),
    (
        "re-freq-nan",
        lambda: pe.RotaryEmbedding(8, frequencies=torch.full((4,), NAN)),
        ValueError,
        "frequencies must be finite",
    ),
    ("re-old-name", lambda: pe.RotaryEmbedding(8, max_seq_len=16), TypeError, "max_seq_len"),
    ("re-width", lambda: ROTARY(torch.zeros(2, 6)), ValueError, "head_dim=8"),
    ("re-int-positions", lambda: ROTARY(X, 3), TypeError, "use offset=3"),
    ("re-offset-negative", lambda: ROTARY(X, offset=-2), ValueError, "offset must be >= 0"),
    ("re-int-x", lambda: ROTARY(torch.zeros(4, 8, dtype=torch.int32)), TypeError, "x must have a floating-point dtype"),
    ("re-device", lambda: ROTARY(torch.zeros(4, 8, device="meta")), ValueError, "x is on meta"),
    ("re-positions-nan", lambda: ROTARY(X, torch.tensor([0.0, NAN, 2.0, 3.0])), ValueError, "positions must be finite"),
    (
        "qk-length",
        lambda: ROTARY.rotate_qk(torch.zeros(1, 2, 3, 8), torch.zeros(1, 2, 4, 8)),
        ValueError,
        "same sequence length",
    ),
    (
        "qk-width",
        lambda: ROTARY.rotate_qk(torch.zeros(3, 8), torch.zeros(3, 6)),
        ValueError,
        "k must have last dimension head_dim=8",
    ),
    ("qk-numpy", lambda: ROTARY.rotate_qk(np.zeros((3, 8)), torch.zeros(3, 8)), TypeError, "q must be a torch.Tensor"),
    (
        "qk-int",
        lambda: ROTARY.rotate_qk(torch.zeros(3, 8), torch.zeros(3, 8, dtype=torch.int64)),
        TypeError,
        "k must have a floating-point dtype",
    ),
    (
        "qk-offset",
        lambda: ROTARY.rotate_qk(torch.zeros(3, 8), torch.zeros(3, 8), offset=-2),
        ValueError,
        "offset must be >= 0",
    ),
    ("qk-int-positions", lambda: ROTARY.rotate_qk(torch.zeros(3, 8), torch.zeros(3, 8), 2), TypeError, "use offset="),
    ("cs-zero", lambda: ROTARY.cos_sin(0), ValueError, "seq_len must be a positive integer"),
    # permutations, checkpoint conversion, analysis helpers
    ("perm-half-odd", lambda: pe.interleaved_to_half_permutation(5), ValueError, "head_dim must be even"),
    ("perm-inter-zero", lambda: pe.half_to_interleaved_permutation(0), ValueError, "head_dim"),
    # apply_partial_rope, apply_rope_2d
    ("partial-odd", lambda: pe.apply_partial_rope(X, 3), ValueError, "rotary_dim must be even"),
    ("partial-wide", lambda: pe.apply_partial_rope(X, 10), ValueError, "rotary_dim must be <= head_dim"),
    ("partial-bool", lambda: pe.apply_partial_rope(X, True), TypeError, "rotary_dim"),
    (
        "partial-int-x",
        lambda: pe.apply_partial_rope(torch.zeros(4, 8, dtype=torch.int64), 4),
        TypeError,
        "x must have a floating-point dtype",
    ),
    (
        "rope2d-width",
        lambda: pe.apply_rope_2d(torch.zeros(4, 6), torch.arange(4), torch.arange(4)),
        ValueError,
        "multiple of 4",
    ),
    (
        "rope2d-rows-shape",
        lambda: pe.apply_rope_2d(X, torch.arange(3), torch.arange(4)),
        ValueError,
        "rows must have shape",
    ),
    ("rope2d-cols-int", lambda: pe.apply_rope_2d(X, torch.arange(4), 2), TypeError, "cols"),
    ("convert-rows", lambda: convert_qk_weight(torch.zeros(10, 4), 3), ValueError, "multiple of n_heads=3"),
    ("convert-to", lambda: convert_qk_weight(torch.zeros(8, 4), 2, to="neox"), ValueError, "to must be one of"),
    ("convert-list", lambda: convert_qk_weight([[1.0]], 1), TypeError, "weight must be a torch.Tensor"),
    ("decay-int", lambda: rope_decay_bound(5, 8), TypeError, "distances must be a 1-D tensor"),
    ("decay-2d", lambda: rope_decay_bound(torch.zeros(2, 2), 8), ValueError, "distances must have shape"),
    ("decay-odd", lambda: rope_decay_bound(torch.arange(4), 7), ValueError, "head_dim must be even"),
    ("gap-int", lambda: rope_angle_gap(4, 10, 8), TypeError, "positions must be a 1-D tensor"),
    (
        "gap-train-len",
        lambda: rope_angle_gap(torch.arange(4), 0, 8),
        ValueError,
        "train_len must be a positive integer",
    ),
    (
        "gap-freq",
        lambda: rope_angle_gap(torch.arange(4), 10, 8, frequencies=torch.ones(3)),
        ValueError,
        "frequencies must have shape",
    ),
    ("gap-huge", lambda: rope_angle_gap(torch.arange(4), 10**12, 8), ValueError, "train_len=1000000000000"),
    # context extension
    ("pi-factor", lambda: pe.linear_scaling_frequencies(THETA, 0.5), ValueError, "factor must be >= 1"),
    ("pi-factor-nan", lambda: pe.linear_scaling_frequencies(THETA, NAN), ValueError, "factor"),
    ("pi-factor-bool", lambda: pe.linear_scaling_frequencies(THETA, True), TypeError, "factor"),
    (
        "ntk-one-pair",
        lambda: pe.ntk_aware_frequencies(torch.ones(1), 2.0),
        ValueError,
        "frequencies must hold at least 2 pairs",
    ),
    ("ntk-base-dim", lambda: pe.ntk_aware_base(10000.0, 3, 2.0), ValueError, "head_dim must be even and >= 4"),
    ("yarn-length", lambda: pe.yarn_frequencies(THETA, 4.0, 0), ValueError, "original_max_len"),
    (
        "yarn-betas",
        lambda: pe.yarn_frequencies(THETA, 4.0, 64, beta_fast=1, beta_slow=2),
        ValueError,
        "beta_fast must be greater",
    ),
    ("yarn-truncate", lambda: pe.yarn_frequencies(THETA, 4.0, 64, truncate="yes"), TypeError, "truncate"),
    (
        "yarn-not-geometric",
        lambda: pe.yarn_frequencies(torch.tensor([1.0, 0.5, 0.1]), 4.0, 64),
        ValueError,
        "frequencies must be the standard",
    ),
    ("yarn-mscale-alone", lambda: pe.yarn_attention_factor(4.0, mscale=1.0), ValueError, "mscale and mscale_all_dim"),
    ("yarn-factor", lambda: pe.yarn_attention_factor(-1), ValueError, "factor"),
    (
        "llama3-order",
        lambda: pe.llama3_frequencies(THETA, 8.0, 64, low_freq_factor=4, high_freq_factor=1),
        ValueError,
        "high_freq_factor must be greater",
    ),
    ("rotations-length", lambda: pe.rotations(THETA, 0), ValueError, "length must be a positive integer"),
    (
        "arc-shape",
        lambda: pe.unseen_arc(THETA, 10, pe.rope_frequencies(6), 5),
        ValueError,
        "trained_frequencies must have the shape",
    ),
    (
        "dynamic-seq-len",
        lambda: pe.dynamic_ntk_frequencies(THETA, 0, 10),
        ValueError,
        "seq_len must be a positive integer",
    ),
    # ALiBi
    ("slopes-zero", lambda: pe.alibi_slopes(0), ValueError, "n_heads must be a positive integer"),
    ("slopes-float", lambda: pe.alibi_slopes(2.5), TypeError, "n_heads must be a positive integer"),
    ("slopes-bool", lambda: pe.alibi_slopes(True), TypeError, "n_heads"),
    ("slopes-negative", lambda: pe.alibi_slopes(-4), ValueError, "n_heads"),
    ("slopes-huge", lambda: pe.alibi_slopes(10**13), ValueError, "n_heads=10000000000000"),
    ("bias-q-len", lambda: pe.alibi_bias(4, 0), ValueError, "q_len"),
    ("bias-causal-lengths", lambda: pe.alibi_bias(4, 5, 3), ValueError, "k_len >= q_len"),
    ("bias-dtype", lambda: pe.alibi_bias(4, 5, dtype=torch.int32), TypeError, "dtype"),
    ("bias-causal-str", lambda: pe.alibi_bias(4, 5, causal="False"), TypeError, "causal must be True or False"),
    ("bias-causal-int", lambda: pe.alibi_bias(4, 5, causal=1), TypeError, "causal"),
    ("bias-huge", lambda: pe.alibi_bias(32, 10**6), ValueError, "n_heads=32, q_len=1000000 and k_len=1000000"),
    ("bias-device", lambda: pe.alibi_bias(4, 5, device="gpu"), ValueError, "device"),
    ("bias-k-len-float", lambda: pe.alibi_bias(4, 5, 6.0), TypeError, "k_len"),
    ("compact-heads", lambda: pe.alibi_bias_compact(0, 4), ValueError, "n_heads must be a positive integer"),
    ("compact-k-len", lambda: pe.alibi_bias_compact(4, 2.5), TypeError, "k_len must be a positive integer"),
    ("compact-numpy-dtype", lambda: pe.alibi_bias_compact(4, 8, dtype=np.float32), TypeError, "dtype"),
    ("compact-huge", lambda: pe.alibi_bias_compact(4, 10**13), ValueError, "k_len=10000000000000"),
    ("weights-seq-len", lambda: alibi_weights_by_distance(4, 0), ValueError, "seq_len must be a positive integer"),
    ("span-mass-nan", lambda: alibi_attention_span(8, 100, mass=NAN), ValueError, "mass"),
    ("span-mass-str", lambda: alibi_attention_span(8, 100, mass="0.9"), TypeError, "mass must be a number"),
    # relative positions, T5, Shaw
    ("rel-q-len", lambda: pe.relative_positions(0), ValueError, "q_len"),
    ("rel-k-len", lambda: pe.relative_positions(3, 0), ValueError, "k_len"),
    ("rel-huge", lambda: pe.relative_positions(10**7, 10**7), ValueError, "q_len=10000000 and k_len=10000000"),
    ("shaw-clip", lambda: pe.shaw_relative_index(3, max_relative_position=0), ValueError, "max_relative_position"),
    (
        "t5-float",
        lambda: pe.t5_relative_position_bucket(torch.zeros(3)),
        TypeError,
        "relative_position must be an integer tensor",
    ),
    ("t5-buckets", lambda: pe.t5_relative_position_bucket(torch.arange(3), num_buckets=2), ValueError, "num_buckets"),
    (
        "t5-direction",
        lambda: pe.t5_relative_position_bucket(torch.arange(3), bidirectional="yes"),
        TypeError,
        "bidirectional",
    ),
    ("t5-heads", lambda: pe.T5RelativeBias(0), ValueError, "n_heads"),
    ("t5-q-len", lambda: pe.T5RelativeBias(4)(0), ValueError, "q_len"),
    ("t5-huge", lambda: pe.T5RelativeBias(4)(10**6, 10**6), ValueError, "q_len=1000000 and k_len=1000000"),
    # issue 22, sizes never checked: an expanded (stride-0) input takes no memory, its buckets would
    (
        "t5-expanded-huge",
        lambda: pe.t5_relative_position_bucket(torch.zeros(1, dtype=torch.long).expand(10**6, 10**6)),
        ValueError,
        "relative_position of shape (1000000, 1000000)",
    ),
    (
        "t5-expanded-3d-huge",
        lambda: pe.t5_relative_position_bucket(torch.arange(-8, 8).expand(10**4, 10**4, 16)),
        ValueError,
        "relative_position of shape (10000, 10000, 16)",
    ),
    ("t5-heads-huge", lambda: pe.T5RelativeBias(10**12), ValueError, "num_buckets=32 and n_heads=1000000000000"),
    ("t5-buckets-huge", lambda: pe.T5RelativeBias(8, 10**12, 10**13), ValueError, "num_buckets=1000000000000"),
    # issue 22, crashes from inside torch: integer dtypes are accepted and converted; non-dtypes are refused
    ("re-cos-sin-dtype-str", lambda: ROTARY.cos_sin(4, dtype="float64"), TypeError, "dtype must be a floating-point"),
    ("re-cos-sin-dtype-int", lambda: ROTARY.cos_sin(4, dtype=torch.int64), TypeError, "dtype"),
    ("re-cos-sin-dtype-none", lambda: ROTARY.cos_sin(4, dtype=None), TypeError, "dtype"),
    ("re-freq-meta-reset", lambda: _reset_with_meta_frequencies(), ValueError, "frequencies on the meta device"),
]


def _reset_with_meta_frequencies():
    module = pe.RotaryEmbedding(8, 16, frequencies=torch.ones(4, device="meta"), device="meta")
    module.to_empty(device="cpu")
    module.reset_parameters()  # there are no values to rebuild the frequencies from


if not torch.cuda.is_available():
    BAD.append(("se-no-cuda", lambda: pe.sinusoidal_encoding(4, 8, device="cuda"), ValueError, "asks for CUDA"))
if not torch.backends.mps.is_available():
    BAD.append(("se-no-mps", lambda: pe.alibi_bias(4, 8, device="mps"), ValueError, "device='mps' is not usable here"))


@pytest.mark.parametrize("name,call,exc,text", BAD, ids=[case[0] for case in BAD])
def test_bad_input_raises_a_clear_error(name, call, exc, text):
    with pytest.raises((TypeError, ValueError)) as caught:
        call()
    assert caught.type is exc, f"{caught.type.__name__}: {caught.value}"
    assert text in str(caught.value), str(caught.value)
    if name.endswith("-huge"):  # refused before allocating, with the size it would take
        assert MEMORY in str(caught.value), str(caught.value)


def test_memory_refusals_say_how_many_bytes():
    with pytest.raises(ValueError) as caught:
        pe.sinusoidal_encoding(10**9, 1024)
    message = str(caught.value)
    assert "4,096,000,000,000 bytes (3.7 TiB)" in message and "seq_len=1000000000" in message


# --- issue 22: the size limit is a fixed, stated budget, the same on every device and machine -------------


def test_the_size_limit_is_a_fixed_budget_not_this_machines_memory(monkeypatch):
    from posenc_lib import _checks

    assert _checks.MAX_TENSOR_BYTES == 2**30  # what posenc_lib's docstrings state
    rows = _checks.MAX_TENSOR_BYTES // (4 * 1024)  # a float32 (rows, 1024) table of exactly the budget
    on_meta = pe.sinusoidal_encoding(rows, 1024, device="meta")  # the meta device allocates nothing ...
    assert on_meta.shape == (rows, 1024)
    with pytest.raises(ValueError, match=r"more than posenc_lib's limit of 1,073,741,824 bytes \(1.0 GiB\)"):
        pe.sinusoidal_encoding(rows + 1, 1024, device="meta")  # ... but the budget holds there too
    # the verdict does not depend on the machine: a 1-TiB "machine" refuses the same call
    monkeypatch.setattr("os.sysconf", lambda name: 2**40 if name == "SC_PHYS_PAGES" else 1)
    with pytest.raises(ValueError, match="seq_len=262145 and d_model=1024"):
        pe.sinusoidal_encoding(rows + 1, 1024, device="meta")


# --- issue 22, silent wrong results: gradients flow to every tensor argument that can require grad -------------
#
# gradcheck compares autograd's gradient with finite differences in float64. A detached argument gives a
# gradient of zero (or an output that does not require grad at all): both fail here.


def _f64(*shape, low=-1.0, high=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (low + (high - low) * torch.rand(*shape, generator=g, dtype=torch.float64)).requires_grad_()


def _theta(head_dim=8):
    return pe.rope_frequencies(head_dim).clone().requires_grad_()


def _real_positions(s=4):
    return (torch.arange(s, dtype=torch.float64) * 1.3 + 0.25).requires_grad_()


GRADIENTS = [  # (id, function of the tensors, the tensors that must get a gradient)
    ("apply-rope-frequencies-half", lambda t: pe.apply_rope(_f64(2, 4, 8).detach(), frequencies=t), [_theta()]),
    (
        "apply-rope-frequencies-interleaved",
        lambda t: pe.apply_rope(_f64(2, 4, 8).detach(), layout="interleaved", frequencies=t),
        [_theta()],
    ),
    (
        "apply-rope-frequencies-and-positions",
        lambda t, p: pe.apply_rope(_f64(4, 8).detach(), p, frequencies=t),
        [_theta(), _real_positions()],
    ),
    ("apply-rope-x", lambda x: pe.apply_rope(x, offset=3), [_f64(2, 4, 8)]),
    ("apply-rope-real-positions", lambda p: pe.apply_rope(_f64(2, 4, 8).detach(), p), [_real_positions()]),
    ("rope-angles", lambda p, t: pe.rope_angles(p, t), [_real_positions(), _theta()]),
    ("wavelengths", pe.wavelengths, [_theta()]),
    ("rotate-pairs", lambda x, c, s: pe.rotate_pairs(x, c, s), [_f64(4, 8), _f64(4, 4, seed=1), _f64(4, 4, seed=2)]),
    (
        "apply-rope-2d-rows-cols",
        lambda r, c: pe.apply_rope_2d(_f64(4, 8).detach(), r, c),
        [_real_positions(), _real_positions().detach().flip(0).requires_grad_()],
    ),
    ("apply-partial-rope-positions", lambda p: pe.apply_partial_rope(_f64(4, 8).detach(), 4, p), [_real_positions()]),
    ("rotary-module-real-positions", lambda p: pe.RotaryEmbedding(8, 16)(_f64(4, 8).detach(), p), [_real_positions()]),
    ("rotary-module-x", lambda x: pe.RotaryEmbedding(8, 16)(x, offset=2), [_f64(2, 4, 8)]),
    ("linear-scaling", lambda t: pe.linear_scaling_frequencies(t, 4.0), [_theta()]),
    ("ntk-aware", lambda t: pe.ntk_aware_frequencies(t, 4.0), [_theta()]),
    ("dynamic-ntk", lambda t: pe.dynamic_ntk_frequencies(t, 40, 10), [_theta()]),
    (  # YaRN needs a geometric sequence: vary its base, which keeps it one
        "yarn-via-base",
        lambda b: pe.yarn_frequencies(b ** (-2 * torch.arange(8, dtype=torch.float64) / 16), 4.0, 64),
        [torch.tensor(10000.0, dtype=torch.float64, requires_grad=True)],
    ),
    ("llama3", lambda t: pe.llama3_frequencies(t, 8.0, 64), [_theta(16)]),
    ("rotations", lambda t: pe.rotations(t, 10), [_theta()]),
    ("unseen-arc", lambda t, u: pe.unseen_arc(t, 64, u, 8), [_theta(), _theta()]),
    ("sinusoidal-dot-distance", lambda d: pe.sinusoidal_dot_by_distance(d, 8), [_real_positions()]),
]


@pytest.mark.parametrize("function,inputs", [case[1:] for case in GRADIENTS], ids=[case[0] for case in GRADIENTS])
def test_gradients_flow_to_every_tensor_argument(function, inputs):
    assert torch.autograd.gradcheck(function, inputs)


def test_the_gradient_with_respect_to_frequencies_is_not_zero():
    theta = _theta()
    pe.apply_rope(_f64(2, 4, 8).detach(), frequencies=theta).sum().backward()
    assert theta.grad is not None and bool(theta.grad.abs().gt(0).all())


def test_a_module_does_not_keep_the_callers_graph():
    theta = _theta()
    module = pe.RotaryEmbedding(8, 16, frequencies=theta * 2)  # a table, not a weight
    assert not module.frequencies.requires_grad and not module.cos_cached.requires_grad
    assert module.given_frequencies == (theta * 2).tolist()


def test_the_table_has_enough_cases():
    assert len(BAD) >= 110 and len({case[0] for case in BAD}) == len(BAD)


# (id, call, the plain call it must equal)
GOOD = [
    ("se-numpy-ints", lambda: pe.sinusoidal_encoding(np.int64(4), np.int32(6)), lambda: pe.sinusoidal_encoding(4, 6)),
    ("se-0d-tensor", lambda: pe.sinusoidal_encoding(torch.tensor(4), 6), lambda: pe.sinusoidal_encoding(4, 6)),
    (
        "se-numpy-offset",
        lambda: pe.sinusoidal_encoding(4, 6, offset=np.int64(3)),
        lambda: pe.sinusoidal_encoding(7, 6)[3:],
    ),
    (
        "se-numpy-base",
        lambda: pe.sinusoidal_encoding(4, 6, base=np.float32(100.0)),
        lambda: pe.sinusoidal_encoding(4, 6, base=100.0),
    ),
    (
        "se-0d-base",
        lambda: pe.sinusoidal_encoding(4, 6, base=torch.tensor(100.0)),
        lambda: pe.sinusoidal_encoding(4, 6, base=100.0),
    ),
    ("se-odd-width", lambda: pe.sinusoidal_encoding(3, 1), lambda: torch.sin(torch.arange(3.0))[:, None]),
    ("sm-numpy-delta", lambda: pe.shift_matrix(np.float64(2.5), 8), lambda: pe.shift_matrix(2.5, 8)),
    ("sm-0d-delta", lambda: pe.shift_matrix(torch.tensor(2.5), 8), lambda: pe.shift_matrix(2.5, 8)),
    ("sm-int-delta", lambda: pe.shift_matrix(np.int64(-3), 8), lambda: pe.shift_matrix(-3.0, 8)),
    (
        "spe-numpy-offset",
        lambda: SINUSOIDAL(torch.zeros(3, 8), offset=np.int64(2)),
        lambda: pe.sinusoidal_encoding(5, 8)[2:],
    ),
    (
        "spe-0d-offset",
        lambda: SINUSOIDAL(torch.zeros(3, 8), offset=torch.tensor(2)),
        lambda: pe.sinusoidal_encoding(5, 8)[2:],
    ),
    (
        "spe-numpy-sizes",
        lambda: pe.SinusoidalPositionalEncoding(np.int64(8), np.int32(16)).pe,
        lambda: pe.sinusoidal_encoding(16, 8),
    ),
    ("ar-numpy-offset", lambda: pe.apply_rope(X, offset=np.int64(3)), lambda: pe.apply_rope(X, torch.arange(3, 7))),
    ("ar-0d-offset", lambda: pe.apply_rope(X, offset=torch.tensor(3)), lambda: pe.apply_rope(X, torch.arange(3, 7))),
    ("ar-int32-positions", lambda: pe.apply_rope(X, torch.arange(4, dtype=torch.int32)), lambda: pe.apply_rope(X)),
    ("ar-float-positions", lambda: pe.apply_rope(X, torch.arange(4.0)), lambda: pe.apply_rope(X)),
    ("ar-numpy-base", lambda: pe.apply_rope(X, base=np.float64(500.0)), lambda: pe.apply_rope(X, base=500.0)),
    (
        "ar-negative-positions",
        lambda: pe.apply_rope(X, torch.tensor([-2, -1, 0, 1])),
        lambda: pe.apply_rope(X, torch.tensor([-2.0, -1.0, 0.0, 1.0])),
    ),
    ("re-numpy-sizes", lambda: pe.RotaryEmbedding(np.int64(8), np.int64(16))(X), lambda: pe.apply_rope(X)),
    ("re-numpy-offset", lambda: ROTARY(X, offset=np.int32(5)), lambda: pe.apply_rope(X, offset=5)),
    ("qk-0d-offset", lambda: ROTARY.rotate_qk(X, X, offset=torch.tensor(5))[1], lambda: pe.apply_rope(X, offset=5)),
    ("rf-numpy", lambda: pe.rope_frequencies(np.int64(8), np.float64(100.0)), lambda: pe.rope_frequencies(8, 100.0)),
    (
        "yarn-numpy",
        lambda: pe.yarn_frequencies(THETA, np.float64(4.0), np.int64(64)),
        lambda: pe.yarn_frequencies(THETA, 4.0, 64),
    ),
    ("slopes-numpy", lambda: pe.alibi_slopes(np.int64(12)), lambda: pe.alibi_slopes(12)),
    ("bias-numpy", lambda: pe.alibi_bias(np.int64(4), np.int64(3), np.int64(5)), lambda: pe.alibi_bias(4, 3, 5)),
    ("compact-numpy", lambda: pe.alibi_bias_compact(np.int16(4), 9), lambda: pe.alibi_bias_compact(4, 9)),
    (
        "span-numpy-mass",
        lambda: alibi_attention_span(8, 100, mass=np.float64(0.9)),
        lambda: alibi_attention_span(8, 100),
    ),
    ("rel-numpy", lambda: pe.relative_positions(np.int64(2), 5), lambda: pe.relative_positions(2, 5)),
    (
        "t5-int32",
        lambda: pe.t5_relative_position_bucket(torch.arange(-5, 5, dtype=torch.int32)),
        lambda: pe.t5_relative_position_bucket(torch.arange(-5, 5)),
    ),
    (
        "dot-numpy",
        lambda: pe.sinusoidal_dot_by_distance(np.float64(3.0), 8),
        lambda: pe.sinusoidal_dot_by_distance(3, 8),
    ),
]


@pytest.mark.parametrize("call,plain", [case[1:] for case in GOOD], ids=[case[0] for case in GOOD])
def test_odd_but_valid_input_gives_the_right_result(call, plain):
    torch.testing.assert_close(call(), plain())

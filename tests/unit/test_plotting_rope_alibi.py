"""The plot helpers added for the RoPE and ALiBi chapters."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from posenc_lib.plotting import arrows_on_circle, heatmap_grid


def test_arrows_on_circle_draws_one_arrow_and_label_per_vector():
    vectors = torch.tensor([[1.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
    ax = arrows_on_circle(vectors, labels=["a", "b", "c"], title="t")
    arrows = [t for t in ax.texts if isinstance(t, matplotlib.text.Annotation)]
    labels = [t.get_text() for t in ax.texts if not isinstance(t, matplotlib.text.Annotation)]
    assert len(arrows) == 3 and labels == ["a", "b", "c"]
    assert ax.get_title() == "t" and ax.get_xlabel() and ax.get_ylabel()
    assert ax.get_xlim()[1] == pytest.approx(1.3 * 2.0)  # room for the longest arrow
    plt.close("all")


def test_arrows_on_circle_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"vectors must have shape \(n, 2\)"):
        arrows_on_circle(np.zeros((3, 3)), labels=["a", "b", "c"], title="t")
    with pytest.raises(ValueError, match="labels must have one entry per vector"):
        arrows_on_circle(np.zeros((3, 2)), labels=["a"], title="t")


def test_heatmap_grid_blanks_non_finite_entries_and_shares_the_scale():
    stack = torch.tensor(
        [[[0.0, -float("inf")], [-1.0, 0.0]], [[0.0, -float("inf")], [-4.0, 0.0]], [[0.0, 0.0], [-2.0, 0.0]]]
    )
    fig = heatmap_grid(stack, titles=["h1", "h2", "h3"], suptitle="s", xlabel="key", ylabel="query", ncols=2)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 3
    for ax in panels:
        assert ax.images[0].get_clim() == (-4.0, 0.0)
    assert np.ma.is_masked(panels[0].images[0].get_array()[0, 1])  # NaN is drawn blank
    assert [ax.get_title() for ax in panels] == ["h1", "h2", "h3"]
    assert len(fig.axes) == 5  # 4 grid cells (one switched off) + the colour bar
    plt.close("all")


def test_heatmap_grid_rejects_bad_input():
    with pytest.raises(ValueError, match="matrices must be 3-D"):
        heatmap_grid(np.zeros((2, 2)), titles=["a"], suptitle="s", xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="titles must have one entry per matrix"):
        heatmap_grid(np.zeros((2, 2, 2)), titles=["a"], suptitle="s", xlabel="x", ylabel="y")

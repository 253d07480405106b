"""Plot helpers added for chapters 2-4."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from posenc_lib.plotting import bar_plot, trajectory_plot


def test_trajectory_plot_draws_one_line_per_path_and_labels_points():
    ax = trajectory_plot({"cat": torch.zeros(5, 2), "dog": np.ones((3, 2))}, title="t", xlabel="x", ylabel="y")
    assert [line.get_label() for line in ax.get_lines()] == ["cat", "dog"]
    assert len(ax.texts) == 8
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("t", "x", "y")
    plt.close("all")


def test_trajectory_plot_custom_point_labels():
    ax = trajectory_plot({"cat": np.zeros((3, 2))}, title="t", xlabel="x", ylabel="y", point_labels=["0", "50", "100"])
    assert [t.get_text() for t in ax.texts] == ["0", "50", "100"]
    with pytest.raises(ValueError, match="point_labels must have one entry per point"):
        trajectory_plot({"cat": np.zeros((3, 2))}, title="t", xlabel="x", ylabel="y", point_labels=["0"])
    plt.close("all")


def test_trajectory_plot_leaves_points_with_an_empty_label_unlabelled():
    ax = trajectory_plot({"cat": np.eye(3, 2)}, title="t", xlabel="x", ylabel="y", point_labels=["0", "", "100"])
    assert [t.get_text() for t in ax.texts] == ["0", "100"]
    plt.close(ax.figure)


def test_trajectory_plot_rejects_bad_paths():
    with pytest.raises(ValueError, match=r"path 'cat' must have shape \(n, 2\)"):
        trajectory_plot({"cat": np.zeros((4, 3))}, title="t", xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="at least one"):
        trajectory_plot({}, title="t", xlabel="x", ylabel="y")
    plt.close("all")


def test_bar_plot_labels_and_values():
    ax = bar_plot(["a", "b", "c"], [1.0, 2.5, 0.25], title="t", xlabel="x", ylabel="y", logy=True)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.texts] == ["1.00", "2.50", "0.25"]
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="one entry per label"):
        bar_plot(["a"], [1.0, 2.0], title="t", xlabel="x", ylabel="y")
    plt.close("all")

"""The stored results of `make experiments` (book/data/experiments.json) are complete, current and reproducible.

Chapter 11 reads that file instead of training (training all 45 runs takes minutes).
These tests make sure the file is what the current script produces:

- its settings are the script's current settings, and every run is there once;
- its provenance says how, when and where it was made;
- facts that follow from theory hold exactly (blind encoders at 50.0%);
- re-running one stored configuration reproduces it (see the tolerances below).
"""

import importlib.util
import json
import pathlib
import re

import pytest
import torch

import posenc_lib as pe

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "book" / "data" / "experiments.json"
NOTEBOOK = ROOT / "book" / "11_experiments.ipynb"


def load_script():
    spec = importlib.util.spec_from_file_location("run_experiments", ROOT / "experiments" / "run_experiments.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = load_script()


@pytest.fixture(scope="module")
def results() -> dict:
    assert RESULTS.exists(), "no stored results: run `make experiments`"
    return json.loads(RESULTS.read_text())


def find_run(results: dict, experiment: str, scheme: str, seed: int) -> dict:
    [run] = [r for r in results["runs"] if (r["experiment"], r["scheme"], r["seed"]) == (experiment, scheme, seed)]
    return run


def test_results_were_made_with_the_current_settings(results):
    assert results["settings"] == json.loads(json.dumps(script.settings())), "settings changed: run `make experiments`"


def test_every_run_is_stored_once(results):
    key = lambda r: (r["experiment"], r["scheme"], r["seed"])  # noqa: E731
    assert sorted(map(key, results["runs"])) == sorted(map(key, script.all_specs()))


def test_provenance_is_recorded(results):
    p = results["provenance"]
    assert "experiments/run_experiments.py" in p["command"]
    assert p["started_utc"] < p["finished_utc"]
    assert p["wall_seconds"] > 0 and p["workers"] >= 1 and p["torch_threads_per_run"] == 1
    assert {"cpu", "logical_cpus", "platform", "python", "torch"} <= set(p["machine"])
    assert all(r["cpu_seconds"] > 0 and r["wall_seconds"] > 0 for r in results["runs"])


def test_models_are_small(results):
    assert all(r["n_params"] < 300_000 for r in results["runs"])


def test_blind_encoders_are_at_chance_up_to_ties_broken_by_rounding(results):
    """`none` (pooled, permutation-invariant) and symmetric `alibi` (reversal-invariant) give the same logits to
    rows with opposite labels in every group of four, so they score exactly 1/2 in exact arithmetic. In float32 the
    "same" logits agree to about 1e-7, so a group can deviate only if its prediction is a near-tie."""
    n_eval = 4 * results["settings"]["order"]["eval_groups"]
    for run in results["runs"]:
        if run["experiment"] == "order" and run["scheme"] in ("none", "alibi"):
            change = run["eval_max_change_same_tokens" if run["scheme"] == "none" else "eval_max_change_reversal"]
            assert change < 1e-5
            off = run["eval_groups_not_two_right"]
            assert off <= 2
            assert abs(run["eval_accuracy"] * n_eval - n_eval / 2) <= 2 * off
            assert off == 0 or run["eval_margin_max_in_those_groups"] < 1e-5


def test_order_aware_encoders_learn_the_task(results):
    for run in results["runs"]:
        if run["experiment"] == "order" and run["scheme"] in ("sinusoidal", "learned", "rope"):
            assert run["eval_accuracy"] > 0.95
            assert run["eval_max_change_reversal"] > 1e-3  # they do tell a sequence from its reversal


def test_learned_positions_fail_past_the_table_with_posenc_libs_error(results):
    train_len = results["settings"]["decoder"]["train_len"]
    module = pe.LearnedPositionalEmbedding(4, train_len)
    for run in results["runs"]:
        if run["experiment"] != "order" and run["scheme"] == "learned":
            assert "error" not in run["by_length"]["1"]
            for factor in ("2", "4"):
                entry = run["by_length"][factor]
                with pytest.raises(ValueError) as error:
                    module(torch.zeros(1, entry["seq_len"], 4))
                assert entry["error"] == str(error.value)
                assert 0.0 <= entry["clamped"]["accuracy"] <= 1.0


def test_per_position_curves_cover_the_longest_evaluation(results):
    longest = results["settings"]["decoder"]["train_len"] * max(results["settings"]["length_factors"])
    for run in results["runs"]:
        if run["experiment"] != "order":
            assert len(run["accuracy_by_position"]) == len(run["loss_by_position"]) == longest


def test_a_stored_run_is_reproduced(results):
    """Re-train one configuration (about 6 s of CPU) and compare with the stored numbers.

    On the machine that made the file the run is bit-identical (seeded weights and batches,
    one torch thread); only the file's rounding to 5 significant digits differs. On another
    CPU, float32 kernels may sum in another order; such 1e-7 differences need many steps to
    grow, so the first 20 losses must agree to 1e-4 while the final evaluation may move by
    at most 1% accuracy (about 20 of 2048 sequences) and 0.02 nats.
    """
    spec = {"experiment": "order", "scheme": "sinusoidal", "seed": 0}
    stored = find_run(results, **spec)
    rerun = script.run_spec(spec)
    assert rerun["n_params"] == stored["n_params"]
    assert len(rerun["train_loss"]) == len(stored["train_loss"])
    assert rerun["train_loss"][:20] == pytest.approx(stored["train_loss"][:20], abs=1e-4)
    assert rerun["eval_accuracy"] == pytest.approx(stored["eval_accuracy"], abs=0.01)
    assert rerun["eval_loss"] == pytest.approx(stored["eval_loss"], abs=0.02)


def test_the_chapter_reads_the_stored_results():
    source = "".join("".join(cell["source"]) for cell in json.loads(NOTEBOOK.read_text())["cells"])
    assert "data/experiments.json" in source
    assert re.search(r"json\.load", source)

"""The stored results of `make experiments` (book/data/experiments.json) are complete, current and reproducible.

Chapter 12 reads that file instead of training (all runs take minutes).
These tests make sure the file is what the current script produces:

- its settings are the script's current settings, and every run is there once;
- its provenance says how, when and where it was made;
- facts that follow from theory or from the construction hold (blind encoders at 50.0%;
  the extension methods that leave short sequences alone do);
- re-running one stored run of each experiment reproduces it (see the tolerances below),
  and the stored model file is the model of the stored numbers.
"""

import ast
import inspect
import json
import pathlib

import pytest
import torch

import posenc_lib as pe
import run_experiments as script
from _helpers import printed_text
from book_files import ROOT
from posenc_lib import training
from posenc_lib.model import TinyTransformer, TransformerConfig, build_model, count_parameters

RESULTS = ROOT / "book" / "data" / "experiments.json"
NOTEBOOK = ROOT / "book" / "12_experiments.ipynb"

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: one thread is faster


@pytest.fixture(scope="module")
def results() -> dict:
    assert RESULTS.exists(), "no stored results: run `make experiments`"
    return json.loads(RESULTS.read_text())


def find_run(results: dict, **spec) -> dict:
    [run] = [r for r in results["runs"] if script.spec_key(r) == script.spec_key(spec)]
    return run


def runs_of(results: dict, experiment: str, scheme: str | None = None) -> list[dict]:
    return [r for r in results["runs"] if r["experiment"] == experiment and scheme in (None, r["scheme"])]


def test_results_were_made_with_the_current_settings(results):
    assert results["settings"] == json.loads(json.dumps(script.settings())), "settings changed: run `make experiments`"


def test_every_run_is_stored_once(results):
    assert sorted(map(script.spec_key, results["runs"]), key=str) == sorted(
        map(script.spec_key, script.all_specs()), key=str
    )


def test_every_setting_has_at_least_five_seeds():
    counts: dict = {}
    for spec in script.all_specs():
        key = script.spec_key(spec)[:2] + script.spec_key(spec)[3:]  # everything but the seed
        counts[key] = counts.get(key, 0) + 1
    assert min(counts.values()) >= 5


def test_provenance_is_recorded(results):
    p = results["provenance"]
    assert "experiments/run_experiments.py" in p["command"]
    assert p["started_utc"] < p["finished_utc"]
    assert p["wall_seconds"] > 0 and p["workers"] >= 1 and p["torch_threads_per_run"] == 1
    assert p["cpu_seconds"] == pytest.approx(sum(r["cpu_seconds"] for r in results["runs"]), abs=1.0)
    assert {"cpu", "logical_cpus", "platform", "python", "torch", "load_average_at_start"} <= set(p["machine"])
    assert all(r["cpu_seconds"] > 0 and r["wall_seconds"] > 0 for r in results["runs"])


TINY = 100_000  # chapter 12's "tiny Transformers": every model has fewer parameters than this


def model_of(settings: dict, run: dict) -> TinyTransformer:
    """The (untrained) model of a stored run, as the stored settings describe it."""
    if run["experiment"] in ("order", "learned_init"):
        order = settings["order"]
        config = TransformerConfig(
            vocab_size=order["vocab_size"],
            scheme=run["scheme"],
            causal=False,
            n_outputs=2,
            max_len=order["seq_len"],
            **settings["model"],
        )
    else:
        task = settings["decoder_tasks"]["copy" if run["experiment"].startswith("alibi") else run["experiment"]]
        config = TransformerConfig(
            vocab_size=task["vocab_size"] + 1,
            n_outputs=task["vocab_size"],
            scheme=run["scheme"],
            causal=True,
            max_len=settings["decoder"]["train_len"],
            **settings["model"],
        )
    return build_model(config, seed=0)


def test_models_are_tiny_and_are_the_models_the_settings_describe(results):
    counts: dict = {}
    for run in results["runs"]:
        kind = (run["experiment"], run["scheme"])
        if kind not in counts:
            counts[kind] = count_parameters(model_of(results["settings"], run))
        assert run["n_params"] == counts[kind], f"{kind}: the library's model changed; run `make experiments`"
        assert run["n_params"] < TINY, kind


def test_blind_encoders_are_at_chance_up_to_ties_broken_by_rounding(results):
    """`none` (pooled, permutation-invariant) and symmetric `alibi` (reversal-invariant) give the same logits to
    rows with opposite labels in every group of four, so they score exactly 1/2 in exact arithmetic. In float32 the
    "same" logits agree to about 1e-7, so a group can deviate only if its prediction is a near-tie."""
    n_eval = 4 * results["settings"]["order"]["eval_groups"]
    for run in runs_of(results, "order"):
        if run["scheme"] in ("none", "alibi"):
            change = run["eval_max_change_same_tokens" if run["scheme"] == "none" else "eval_max_change_reversal"]
            assert change < 1e-5
            off = run["eval_groups_not_two_right"]
            assert off <= 2
            assert abs(run["eval_accuracy"] * n_eval - n_eval / 2) <= 2 * off
            assert off == 0 or run["eval_margin_max_in_those_groups"] < 1e-5


def test_order_aware_encoders_learn_the_task(results):
    for run in runs_of(results, "order") + runs_of(results, "learned_init"):
        if run["scheme"] in ("sinusoidal", "learned", "rope"):
            assert run["eval_accuracy"] > 0.95
            assert run["eval_max_change_reversal"] > 1e-3  # they do tell a sequence from its reversal


def test_learned_positions_fail_past_the_table_with_posenc_libs_error(results):
    train_len = results["settings"]["decoder"]["train_len"]
    d_model = results["settings"]["model"]["d_model"]
    module = pe.LearnedPositionalEmbedding(max_len=train_len, d_model=d_model)
    with pytest.raises(ValueError) as error:
        module(torch.zeros(1, 2 * train_len, d_model))
    for task in results["settings"]["decoder_tasks"]:
        for run in runs_of(results, task, "learned"):
            assert run["error_past_table"] == str(error.value)


def test_per_position_curves_cover_the_longest_evaluation(results):
    d = results["settings"]["decoder"]
    buckets = d["eval_factor"] * d["train_len"] // d["bucket"]
    for run in results["runs"]:
        if "eval" in run:
            assert len(run["eval"]["accuracy_by_position"]) == len(run["eval"]["loss_by_position"]) == buckets
            assert len(run.get("window", run["eval"])["accuracy_by_position"]) == buckets


def test_extension_methods_that_keep_short_sequences_do(results):
    """`plain` is the trained model; dynamic NTK changes nothing up to L. Both are facts of the construction."""
    for task in results["settings"]["decoder_tasks"]:
        for run in runs_of(results, task, "rope"):
            no_ft = run["extension"]["no_fine_tune"]
            assert no_ft["plain"]["4"]["regions"] == run["eval"]["regions"]
            assert no_ft["dynamic_ntk"]["4"]["regions"]["inside"] == pytest.approx(
                run["eval"]["regions"]["inside"], abs=2e-3
            )  # float summation order only
            fine_tuned = run["extension"]["fine_tune"][str(results["settings"]["extension"]["fine_tune"]["factor"])]
            assert sorted(fine_tuned) == sorted(results["settings"]["extension"]["fine_tuned"])


# --- re-running stored runs ---------------------------------------------------------------------
# On the machine that made the file a run is bit-identical (seeded weights and batches, one torch
# thread); only the file's rounding differs. On another CPU, float32 kernels may sum in another
# order; such 1e-7 differences need many steps to grow, so the first losses must agree to 1e-4
# while the final evaluations may move by at most 0.01 accuracy (0.02 after a fine-tune).
# The whole runs re-trained (marker `retrain`, about a minute of CPU) run in `make test-retrain`, which CI runs
# after `make test`; `make test` keeps the first steps of runs and the code digest below, which fails as soon
# as the code the results were trained with changes.


def _close_regions(got: dict, stored: dict, tolerance: float) -> None:
    assert got.keys() == stored.keys()
    for name, value in stored.items():
        assert got[name] == pytest.approx(value, abs=tolerance), name


@pytest.mark.retrain
def test_a_learned_init_run_is_reproduced(results):
    """The learned-table ablation (and with it the order experiment's code): about 5 s of CPU."""
    spec = {"experiment": "learned_init", "scheme": "learned", "seed": 0}
    stored, rerun = find_run(results, **spec), script.run_spec(spec)
    assert rerun["n_params"] == stored["n_params"]
    assert rerun["train_loss"][:20] == pytest.approx(stored["train_loss"][:20], abs=1e-4)
    assert rerun["eval_accuracy"] == pytest.approx(stored["eval_accuracy"], abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(
    "spec",
    [
        {"experiment": "order", "scheme": "sinusoidal", "seed": 1},
        {"experiment": "alibi_long", "scheme": "alibi", "seed": 0},
        {"experiment": "alibi_slopes", "scheme": "alibi", "seed": 0, "slope_scale": 0.25},
    ],
)
def test_the_first_steps_of_a_run_are_reproduced(results, spec):
    """The first 15 steps of the schedule (all in its warm-up, so exactly those of the full run): under a second."""
    stored, rerun = find_run(results, **spec), script.run_spec(spec, first_steps=15)
    key = "train_loss" if spec["experiment"] == "order" else "train_loss_first"
    assert rerun[key] == pytest.approx(stored[key][:15], abs=1e-4)


@pytest.fixture(scope="module")
def rope_rerun() -> dict:
    """The stored model's run again, with one fine-tuned method (YaRN) of five: about 20 s of CPU."""
    spec = {key: script.STORED_MODEL[key] for key in ("experiment", "scheme", "seed")}
    return script.run_spec(spec, fine_tuned=("yarn",), keep_model=True)


@pytest.mark.retrain
def test_a_rope_decoder_run_with_its_extensions_is_reproduced(results, rope_rerun):
    stored = find_run(results, **{key: script.STORED_MODEL[key] for key in ("experiment", "scheme", "seed")})
    assert rope_rerun["train_loss_first"] == pytest.approx(stored["train_loss_first"], abs=1e-4)
    _close_regions(rope_rerun["eval"]["regions"], stored["eval"]["regions"], 0.01)
    _close_regions(rope_rerun["window"]["regions"], stored["window"]["regions"], 0.01)
    rerun_weights = torch.tensor(rope_rerun["attention"]["by_offset"])  # (layers, n_h, offsets)
    torch.testing.assert_close(rerun_weights, torch.tensor(stored["attention"]["by_offset"]), atol=0.01, rtol=0)
    for method, by_factor in stored["extension"]["no_fine_tune"].items():
        for factor, entry in by_factor.items():
            _close_regions(rope_rerun["extension"]["no_fine_tune"][method][factor]["regions"], entry["regions"], 0.01)
    [(factor, tuned)] = rope_rerun["extension"]["fine_tune"].items()
    _close_regions(tuned["yarn"]["regions"], stored["extension"]["fine_tune"][factor]["yarn"]["regions"], 0.02)


@pytest.mark.slow
def test_the_stored_model_file_gives_the_stored_numbers(results):
    """book/data holds the weights of that run: loaded, they give its stored evaluation and extensions."""
    settings = results["settings"]
    model = model_of(settings, settings["stored_model"])
    state_dict = torch.load(RESULTS.parent / settings["stored_model"]["file"], weights_only=True)
    model.load_state_dict(state_dict)
    tokens, targets = script.decoder_eval_set(settings["stored_model"]["experiment"])
    hits = training.correct(training.predict(model, tokens), targets)
    stored = find_run(results, **{k: settings["stored_model"][k] for k in ("experiment", "scheme", "seed")})
    _close_regions(script.summarize(hits)["regions"], stored["eval"]["regions"], 1e-4)
    # the extension methods on these fixed weights: only near-ties can differ between CPUs,
    # so the tolerance is tight enough to see e.g. YaRN without its attention factor (0.005)
    train_len = settings["decoder"]["train_len"]
    for method, by_factor in stored["extension"]["no_fine_tune"].items():
        for factor, entry in by_factor.items():
            seq_len = int(factor) * train_len
            if method == "dynamic_ntk":
                got = script.extension.dynamic_correct_by_position(
                    model, tokens[:, :seq_len], targets[:, :seq_len], train_len, settings["extension"]["dynamic_bucket"]
                )
            else:
                extended = script.extension.with_method(model, method, int(factor), train_len, seq_len)
                got = script.extension.correct_by_position(extended, tokens[:, :seq_len], targets[:, :seq_len])
            _close_regions(script.summarize(got)["regions"], entry["regions"], 1e-3)


@pytest.mark.retrain
def test_the_stored_model_file_holds_the_weights_the_run_trains(results, rope_rerun):
    """Re-trained from its seed, the run ends near the stored weights (the file is that run's model)."""
    state_dict = torch.load(RESULTS.parent / results["settings"]["stored_model"]["file"], weights_only=True)
    assert rope_rerun["model"].keys() == state_dict.keys()
    for name, tensor in rope_rerun["model"].items():
        assert torch.allclose(tensor, state_dict[name], atol=1e-2), name


def test_the_chapter_shows_the_stored_results(results):
    """The chapter's printed output (which nbval shows to be what a fresh run prints) carries this file's
    provenance: the chapter reads the file, and was re-executed after the file was last written."""
    printed = printed_text(NOTEBOOK)
    provenance = results["provenance"]
    for stamp in (provenance["started_utc"], provenance["finished_utc"]):
        assert stamp in printed, f"{NOTEBOOK.name} does not show the results file made at {stamp}: re-execute it"
    assert f"{len(results['runs'])} in {provenance['workers']} processes" in printed


# --- the code the results were computed with ----------------------------------------------------------------------

# what code_digest covered before the results recorded their code_files: the results in book/data were trained at
# commit 9c657a3 with these files (code_digest 2f7177e28d8ad1dc)
LEGACY_CODE_FILES = [
    *("model.py", "training.py", "tasks.py", "attention.py", "alibi.py", "rope.py", "rope_scaling.py"),
    *("learned.py", "sinusoidal.py", "run_experiments.py", "context_extension.py"),
]


def digest_of(names: list[str]) -> str:
    """code_digest of the named files: posenc_lib modules, or the two scripts in experiments/."""
    by_name = {path.name: path for path in script.code_files()}
    library = pathlib.Path(pe.__file__).parent
    return script._file_digest([by_name.get(name, library / name) for name in names])


def test_library_files_are_every_module_the_runs_compute_with():
    """LIBRARY_FILES is the import closure of the two scripts in posenc_lib (formula, fast paths, checks, tables)."""
    library = pathlib.Path(pe.__file__).parent
    todo = []
    for path in script.code_files()[-2:]:  # run_experiments.py, context_extension.py
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "posenc_lib":  # a name from the package: its module
                found = [getattr(pe, alias.name) for alias in node.names]
                todo += [x.__name__ if inspect.ismodule(x) else x.__module__ for x in found]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("posenc_lib."):
                todo.append(node.module)
            elif isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names if alias.name.startswith("posenc_lib.")]
    seen: set[str] = set()
    while todo:
        name = todo.pop().removeprefix("posenc_lib.")
        if name in seen:
            continue
        seen.add(name)
        for node in ast.walk(ast.parse((library / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:  # from .x import ... / from . import x
                todo += [node.module] if node.module else [alias.name for alias in node.names]
    assert sorted(f"{name}.py" for name in seen) == sorted(script.LIBRARY_FILES)


def test_the_results_were_computed_by_the_current_code(results):
    """code_digest recomputed over the files the results list (LEGACY_CODE_FILES before they listed them)."""
    recorded = results["provenance"]
    names = recorded.get("code_files", LEGACY_CODE_FILES)
    assert digest_of(names) == recorded["code_digest"], "the code changed since the results: run `make experiments`"
    assert names == [path.name for path in script.code_files()], "the digest does not cover LIBRARY_FILES"

"""The real-text experiments (experiments/real_text.py, book/data/real_text.json, chapter 13).

- the corpus is the file its source note describes (SHA-256), split the same way every time;
- the evaluation helpers compute what they say (the masked forward pass is the model's own
  forward pass when nothing is masked; a key set holds the stated number of keys);
- the stored file holds every run of the current settings, computed by the current code;
- re-training the stored short reference run (every measurement of a RoPE run) reproduces it.
"""

import hashlib
import json
import math

import pytest
import torch

import real_text as script
from _helpers import printed_text
from book_files import ROOT
from posenc_lib.model import SCHEMES, build_model

RESULTS = ROOT / "book" / "data" / "real_text.json"
NOTEBOOK = ROOT / "book" / "13_real_text.ipynb"

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def results() -> dict:
    assert RESULTS.exists(), "no stored results: run `make experiments`"
    return json.loads(RESULTS.read_text())


def test_corpus_is_the_file_its_source_note_describes():
    data = script.CORPUS.read_bytes()
    assert hashlib.sha256(data).hexdigest() == script.CORPUS_SHA256
    note = (script.CORPUS.parent / "SOURCE.txt").read_text()
    assert script.CORPUS_SHA256 in note and f"{len(data)} bytes" in note
    assert "Python Software Foundation" in (script.CORPUS.parent / "LICENSE-PSF.txt").read_text()


def test_split_is_fixed_and_disjoint():
    train, val = script.split()
    data = script.corpus_bytes()
    assert len(train) + len(val) == len(data) and len(train) == int(len(data) * script.TRAIN_FRACTION)
    assert bytes(train[-5:].tolist()) + bytes(val[:5].tolist()) == data[len(train) - 5 : len(train) + 5]
    tokens, targets = script.validation_set()
    assert torch.equal(tokens[:, 1:], targets[:, :-1])  # targets are the next bytes
    assert torch.equal(script.at_length(tokens, 64)[1], tokens[0, 64:128])


def test_a_changed_corpus_is_refused(monkeypatch):
    monkeypatch.setattr(script, "CORPUS_SHA256", "0" * 64)
    script.corpus_bytes.cache_clear()
    try:
        with pytest.raises(ValueError, match="SHA-256"):
            script.corpus_bytes()
    finally:
        script.corpus_bytes.cache_clear()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_masked_forward_is_the_model_forward_without_a_mask(scheme):
    model = build_model(script.config_for(scheme), seed=3)
    if model.relative_bias is not None:  # a T5 table that is not zero, so leaving it out would show
        torch.nn.init.normal_(model.relative_bias.table.weight, std=1.0, generator=torch.Generator().manual_seed(0))
    tokens = torch.randint(0, 256, (2, 40), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(tokens)
    got = script.logits_with_mask(model, tokens, torch.zeros(40, 40))
    assert torch.allclose(got, expected, atol=1e-5)


def test_the_nearest_keys_are_the_sliding_window():
    model = build_model(script.config_for("alibi"), seed=0)
    tokens = torch.randint(0, 256, (2, 48), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = model(tokens, window=16)
    assert torch.allclose(script.logits_with_mask(model, tokens, script.key_set_mask(48, 16, 1)), expected, atol=1e-5)


@pytest.mark.parametrize(("n_keys", "stride"), [(16, 1), (16, 2), (8, 4)])
def test_a_key_set_holds_n_keys_at_multiples_of_the_stride(n_keys, stride):
    mask = script.key_set_mask(128, n_keys, stride)
    allowed = mask == 0
    assert (allowed.sum(1)[stride * n_keys :] == n_keys).all()  # every late query: exactly n_keys keys
    i, j = allowed.nonzero().T
    assert ((i - j) % stride == 0).all() and ((i - j) >= 0).all() and (i - j).max() == stride * (n_keys - 1)


def test_results_were_made_with_the_current_settings(results):
    assert results["settings"] == json.loads(json.dumps(script.settings())), "settings changed: run `make experiments`"


def test_every_run_is_stored_once_with_five_seeds(results):
    def key(run: dict) -> tuple:
        return run["scheme"], run["seed"], run.get("reference", False)

    assert sorted(map(key, results["runs"])) == sorted(map(key, script.all_specs()))
    assert len(script.SEEDS) >= 5


def test_provenance_and_code_digest(results):
    p = results["provenance"]
    assert "experiments/real_text.py" in p["command"] and p["started_utc"] < p["finished_utc"]
    assert p["cpu_seconds"] == pytest.approx(sum(r["cpu_seconds"] for r in results["runs"]), abs=1.0)
    assert p["code_files"] == [path.name for path in script.code_files()]
    assert "real_text.py" in p["code_files"] and "model.py" in p["code_files"]
    digest = script.synthetic._file_digest(script.code_files())
    assert digest == p["code_digest"], "the code changed since the results: run `make experiments`"


def test_the_learned_model_is_evaluated_only_within_its_table(results):
    for run in results["runs"]:
        factors = set(run["lengths"])
        assert factors == ({"1"} if run["scheme"] == "learned" else {"1", "2", "4", "8"})


def test_every_extension_result_is_finite(results):
    """Every method at 2L and 4L, with and without the fine-tune, gave a finite perplexity."""
    for run in results["runs"]:
        if "extension" in run:
            zero = run["extension"]["zero_shot"]
            assert all(v is not None and math.isfinite(v) for f in zero.values() for v in f.values())


@pytest.mark.slow
def test_the_reference_run_is_reproduced(results):
    [stored] = [r for r in results["runs"] if r.get("reference")]
    rerun = script.run_spec({"scheme": stored["scheme"], "seed": stored["seed"], "reference": True})
    assert rerun["train_loss"] == pytest.approx(stored["train_loss"], abs=1e-3)
    for factor, summary in stored["lengths"].items():
        assert rerun["lengths"][factor]["ppl"] == pytest.approx(summary["ppl"], rel=2e-4), factor
    assert rerun["window"]["ppl"] == pytest.approx(stored["window"]["ppl"], rel=2e-4)
    assert rerun["key_sets"] == pytest.approx(stored["key_sets"], rel=2e-4)
    for kind in ("zero_shot", "fine_tuned"):
        for factor, methods in stored["extension"][kind].items():
            assert rerun["extension"][kind][factor] == pytest.approx(methods, rel=2e-4), (kind, factor)
    assert rerun["extension"]["entropy"] == pytest.approx(stored["extension"]["entropy"], rel=2e-4)


def test_the_chapter_shows_the_stored_results(results):
    printed = printed_text(NOTEBOOK)
    for stamp in (results["provenance"]["started_utc"], results["provenance"]["finished_utc"]):
        assert stamp in printed, f"{NOTEBOOK.name} does not show the results file made at {stamp}: re-execute it"

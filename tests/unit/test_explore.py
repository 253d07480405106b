"""Explorable figures (posenc_lib.explore) without a browser: the HTML a notebook stores, the script it
carries, the arguments it refuses, and the reference numbers the browser tests compare with.

What the JavaScript draws is compared with the library in a browser by tests/site/test_explorables.py.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import tomllib

import numpy as np
import pytest
import torch

import posenc_lib as pe
from book_files import ROOT
from posenc_lib import explore
from posenc_lib.explore.reference import reference, rope_vector

RESULTS = json.loads((ROOT / "book" / "data" / "experiments.json").read_text())
BUDGET_GZIP_BYTES = 30 * 1024  # what a page with explorables may add (issue 25)


def every_kind() -> list[explore.Explorable]:
    return [
        explore.sinusoidal(),
        explore.rope(),
        explore.alibi(12),
        explore.rope_scaling(),
        explore.t5_buckets(),
        explore.experiment_curves(RESULTS),
        pe.questions.show("alibi"),
    ]


def parts(html: str) -> dict[str, str]:
    """The inline style sheet, the container and the inline script of an explorable's HTML."""
    match = re.fullmatch(
        r'<style data-pe-inline>\n(?P<css>.*?)</style>\n(?P<container><div class="pe-explore.*?</div>)\n'
        r"<script data-pe-inline>\n(?P<js>.*)</script>",
        html,
        re.DOTALL,
    )
    assert match, html[:300]
    return match.groupdict()


@pytest.mark.parametrize("item", every_kind(), ids=lambda item: item.kind)
def test_the_stored_html_is_the_same_every_time_and_carries_its_parameters(item):
    html = item._repr_html_()
    again = [other for other in every_kind() if other.kind == item.kind][0]._repr_html_()
    assert html == again  # nbval compares the stored HTML: no random ids, no timestamps
    found = parts(html)
    params = re.search(r'<script type="application/json" class="pe-params">(.*?)</script>', found["container"])
    assert params and json.loads(params.group(1)) == item.params
    assert f'data-pe-kind="{item.kind}"' in found["container"]
    assert found["js"] == explore.script([item.kind])
    assert found["css"] == explore.stylesheet()
    assert explore.NO_SCRIPT in found["container"]  # what an untrusted notebook shows


def test_a_notebook_output_carries_only_its_own_kind():
    rope_only = explore.script(["rope"])
    assert "KINDS.rope =" in rope_only and "KINDS.alibi =" not in rope_only
    body = rope_only.split("\n", 2)[2]  # after the function's first two lines
    assert body.startswith((explore.STATIC / "core.js").read_text())
    assert body.endswith((explore.STATIC / "boot.js").read_text() + "})();\n")
    everything = explore.script()
    assert all(f"KINDS.{kind} =" in everything for kind in explore.KIND_FILES)


# a number as Python and JavaScript write one (tests/book/test_portable_outputs.py's rule)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@pytest.mark.parametrize("item", every_kind(), ids=lambda item: item.kind)
def test_the_stored_html_is_portable_and_requests_nothing(item):
    html = item._repr_html_()
    tiny = [n for n in NUMBER.findall(html) if 0 < abs(float(n)) < 1e-6]
    assert not tiny, f"numbers below 1e-6 in a stored output fail tests/book/test_portable_outputs.py: {tiny[:5]}"
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"'`)]*", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # the SVG namespace, never fetched
    found = parts(html)
    assert "</script" not in found["js"] and "</style" not in found["css"]
    assert "import " not in found["js"] and "fetch(" not in found["js"]  # one self-contained script
    assert found["js"].startswith('(() => {\n"use strict";') and found["js"].endswith("})();\n")  # its own scope


def test_the_website_bundle_fits_the_budget():
    size = len(gzip.compress(explore.script().encode(), compresslevel=9))
    assert size <= BUDGET_GZIP_BYTES, f"{size} bytes gzipped"


def test_every_style_rule_names_classes_the_scripts_or_html_write():
    # the site cuts each page's style sheet to the class names that occur in its pages and scripts
    # (PurgeCSS): a class built from parts (`pe-s${i}`) would lose its rule on the website only
    written = explore.script() + "".join(item.container() for item in every_kind())
    written += explore.fallback_caption("the static figure")._repr_html_()  # in the page, below that figure
    classes = set(re.findall(r"\.(pe-[\w-]+)", explore.stylesheet()))
    assert classes, "no pe- classes in the style sheet"
    missing = sorted(name for name in classes if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", written))
    assert not missing, missing


def test_the_static_files_are_package_data():
    # Colab installs posenc_lib from the repository (not editable): the script must come with it
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "posenc_lib.explore" in config["packages"] and "posenc_lib.questions" in config["packages"]
    patterns = config["package-data"]["posenc_lib.explore"]
    files = {p.relative_to(explore.STATIC.parent).as_posix() for p in explore.STATIC.iterdir()}
    covered = {
        p.relative_to(explore.STATIC.parent).as_posix()
        for pattern in patterns
        for p in explore.STATIC.parent.glob(pattern)
    }
    assert files and files <= covered, files - covered


BAD = [
    (explore.sinusoidal, {"d_model": 63}, ValueError, "d_model must be even"),
    (explore.sinusoidal, {"d_model": 2048}, ValueError, "d_model must be between"),
    (explore.sinusoidal, {"base": -1.0}, ValueError, "base"),
    (explore.sinusoidal, {"layout": "sideways"}, ValueError, "layout"),
    (explore.rope, {"head_dim": 64, "pair": 32}, ValueError, "pair must be an integer in 0 .. head_dim/2 - 1 = 31"),
    (explore.rope, {"position": 128}, ValueError, "position"),
    (explore.rope, {"vector": "random"}, ValueError, "vector"),
    (explore.alibi, {"n_heads": 0}, ValueError, "n_heads"),
    (explore.alibi, {"n_heads": 65}, ValueError, "n_heads must be between 1 and 64"),
    (explore.alibi, {"mass": 1.0}, ValueError, "mass"),
    (explore.alibi, {"n_heads": 8.0}, TypeError, "n_heads"),
    (explore.rope_scaling, {"factor": 0.5}, ValueError, "factor must be >= 1"),
    (explore.rope_scaling, {"methods": ["pi"]}, ValueError, "methods"),
    (explore.rope_scaling, {"beta_fast": 1.0, "beta_slow": 2.0}, ValueError, "beta_fast must be greater"),
    (explore.rope_scaling, {"head_dim": 2}, ValueError, "head_dim"),
    (explore.t5_buckets, {"num_buckets": 2}, ValueError, "num_buckets must be >= 4"),
    (explore.t5_buckets, {"num_buckets": 32, "max_distance": 8}, ValueError, "max_distance must exceed"),
    (explore.t5_buckets, {"probe": 1000}, ValueError, "probe"),
]


@pytest.mark.parametrize(("call", "arguments", "error", "message"), BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_arguments_get_an_error_that_names_them(call, arguments, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call(**arguments)


def test_bad_experiment_choices_are_refused():
    with pytest.raises(ValueError, match="tasks"):
        explore.experiment_curves(RESULTS, tasks=("order",))
    with pytest.raises(ValueError, match="seeds"):
        explore.experiment_curves(RESULTS, seeds=[7])
    with pytest.raises(ValueError, match="view"):
        explore.experiment_curves(RESULTS, view="extension_4", views=("schemes",))


# ------------------------------------------------------------------ the reference numbers


def state(item: explore.Explorable) -> dict:
    return {"kind": item.kind, "params": item.params}


def test_the_rope_score_reference_is_the_closed_form():
    # q = k, q at position 0 and k at r: pair ℓ contributes |z_ℓ|² cos(r θ_ℓ); in the half layout every pair of
    # the split vector is (1, 0.3), interleaved the first quarter of the pairs is (1, 1) and the rest (0.3, 0.3)
    f64 = torch.float64
    for layout, weights in [
        ("half", lambda h: torch.full((h,), 1.09, dtype=f64)),
        (
            "interleaved",
            lambda h: torch.cat((torch.full((h // 2,), 2.0, dtype=f64), torch.full((h - h // 2,), 0.18, dtype=f64))),
        ),
    ]:
        item = explore.rope(base=500.0, head_dim=16, layout=layout, vector="split", max_distance=300)
        got = torch.tensor(reference(state(item))["score"], dtype=torch.float64)
        theta = pe.rope_frequencies(16, 500.0)
        r = torch.arange(301, dtype=torch.float64)
        expected = (weights(8) * torch.cos(r[:, None] * theta)).sum(-1)
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    assert rope_vector("split", 4).tolist() == [1.0, 1.0, 0.3, 0.3]


def test_the_rope_pair_reference_turns_by_p_theta():
    item = explore.rope(base=10000.0, head_dim=8, pair=1, position=20, layout="interleaved", vector="split")
    found = reference(state(item))
    theta = 10000.0 ** (-2 / 8)
    x, y = found["pair_path"][20]  # pair 1 interleaved: coordinates 2 and 3 of (1, 1, 1, 1, 0.3, ...) = (1, 1)
    assert math.isclose(found["angle"], 20 * theta, rel_tol=1e-15)
    assert math.isclose(x, math.cos(20 * theta) - math.sin(20 * theta), abs_tol=1e-15)
    assert math.isclose(y, math.cos(20 * theta) + math.sin(20 * theta), abs_tol=1e-15)


def test_the_alibi_reference_for_12_heads():
    found = reference(state(explore.alibi(12, mass=0.9, seq_len=4096)))
    assert found["slopes"] == [2.0**-h for h in range(1, 9)] + [2.0 ** -(h + 0.5) for h in range(4)]
    assert found["naive"] == pytest.approx([2 ** (-8 * h / 12) for h in range(1, 13)], rel=1e-15)
    # ln(10) / m for the long sequence, within one position
    assert all(abs(span - math.log(10) / m) < 1.5 for span, m in zip(found["spans"], found["slopes"]) if m > 0.01)


def test_the_t5_reference_buckets_and_the_float32_rule_the_page_follows():
    """The page evaluates T5's logarithm as float32 numbers (Math.fround): correctly rounded float32 log, then
    float32 division and product, truncated. That rule gives the library's buckets for every setting the page
    offers and beyond; float64 would not."""

    def rule(r: np.ndarray, n: int, max_distance: int, bidirectional: bool, dtype) -> np.ndarray:
        bucket = np.zeros_like(r)
        if bidirectional:
            n //= 2
            bucket = bucket + (r > 0) * n
            distance = np.abs(r)
        else:
            distance = np.clip(-r, 0, None)
        exact = n // 2
        scaled = (np.maximum(distance, exact).astype(dtype) / dtype(exact)).astype(dtype)
        log = np.log(scaled.astype(np.float64)).astype(dtype)
        spread = ((log / dtype(math.log(max_distance / exact))).astype(dtype) * dtype(n - exact)).astype(dtype)
        return bucket + np.where(
            distance < exact, distance, np.minimum(exact + np.trunc(spread).astype(np.int64), n - 1)
        )

    float64_differs = 0
    for bidirectional in (True, False):
        for n in (4, 6, 8, 12, 16, 18, 20, 24, 32, 48, 64, 96, 128, 7, 33):  # float64 errs at 18 and 20
            for max_distance in (8, 16, 32, 64, 100, 128, 160, 256, 512, 1000, 1024, 2048, 4096):
                per = n // 2 if bidirectional else n
                if max_distance <= per // 2:
                    continue
                r = torch.arange(-2 * max_distance, 2 * max_distance + 1)
                item = explore.t5_buckets(n, max_distance, bidirectional=bidirectional, probe=0)
                library = np.array(reference(state(item))["bucket"])
                assert np.array_equal(rule(r.numpy(), n, max_distance, bidirectional, np.float32), library)
                float64_differs += not np.array_equal(
                    rule(r.numpy(), n, max_distance, bidirectional, np.float64), library
                )
    assert float64_differs > 0


def test_the_rope_scaling_reference_is_the_library_rules():
    item = explore.rope_scaling(factor=8.0, original_max_len=8192, head_dim=128, base=500000.0, seq_multiple=2.0)
    found = reference(state(item))
    theta = pe.rope_frequencies(128, 500000.0)
    assert found["frequency"] == theta.tolist()
    assert found["methods"]["llama3"]["frequency"] == pe.llama3_frequencies(theta, 8.0, 8192).tolist()
    assert found["methods"]["yarn"]["frequency"] == pe.yarn_frequencies(theta, 8.0, 8192).tolist()
    # dynamic NTK at s = 2L: effective factor 8 * 2 - 7 = 9, the slowest pair divided by exactly 9
    slowest = found["methods"]["dynamic_ntk"]["frequency"][-1] / theta[-1].item()
    assert math.isclose(1 / slowest, 9.0, rel_tol=1e-12)
    assert set(found["methods"]) == set(explore.SCALING_METHODS)


def test_the_curves_embed_the_stored_values_and_only_the_slice_asked_for():
    item = explore.experiment_curves(RESULTS, tasks=("copy",), views=("schemes",), task="copy")
    assert list(item.data["tasks"]) == ["copy"] and list(item.data["tasks"]["copy"]["views"]) == ["schemes"]
    stored = {
        (r["scheme"], str(r["seed"])): r["eval"]["accuracy_by_position"]
        for r in RESULTS["runs"]
        if r["experiment"] == "copy"
    }
    embedded = item.data["tasks"]["copy"]["views"]["schemes"]["series"]
    assert {(s, seed): v for s, e in embedded.items() for seed, v in e["runs"].items()} == stored
    whole = explore.experiment_curves(RESULTS)
    assert len(explore.to_json(whole.data)) < 0.5 * len(json.dumps(RESULTS))  # the slice, not the file
    means = reference({"kind": "experiment_curves", "params": {**item.params, "seeds": [0, 1]}}, RESULTS)["series"]
    first = [(a + b) / 2 if a is not None else None for a, b in zip(stored[("rope", "0")], stored[("rope", "1")])]
    assert means["rope"] == first and means["rope"][0] is None  # the copy task scores nothing at position 0


def test_reference_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        reference({"kind": "spiral", "params": {}})

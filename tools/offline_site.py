"""Make the website work with no network: mermaid and MathJax served from the site itself.

Two roles in one module, so the list of files lives in one place:

* a command, ``python tools/offline_site.py install``: runs ``npm ci`` when
  ``node_modules`` does not hold the versions pinned in ``package-lock.json``
  (``make book``, ``make test`` and the test build call it);
* a Sphinx extension (``_config.yml`` loads it through ``sphinx: local_extensions``):
  copies the needed files from ``node_modules`` into ``_build/html/_static/offline``
  and points the pages at them.

Why the page-level rewrite of the mermaid script: sphinxcontrib-mermaid loads mermaid
with an ES-module ``import``. Browsers refuse module imports from ``file://`` pages,
so a reader who opens ``_build/html/index.html`` from disk would see diagram source
text. We load mermaid's self-contained classic build instead (a plain ``<script>``
works from disk) and hand it to the extension's own module script, which keeps its
theme switching and full-screen button.

Why the thebe fix: sphinx-thebe 0.3.1 registers an inline script while Sphinx reads
documents; Sphinx 7 then adds it to every page twice (once as filename ``None``, once
as ``''``), and the second copy logs ``Identifier 'THEBE_JS_URL' has already been
declared``. We drop the early copy; the registry adds the script back exactly once.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
VENDOR = "offline"  # under _static/ (the theme already uses _static/vendor/)

# (package, path inside the package, destination under _static/offline/)
ASSETS: list[tuple[str, str, str]] = [
    ("mermaid", "dist/mermaid.min.js", "mermaid/mermaid.min.js"),
    ("mathjax", "es5/tex-mml-chtml.js", "mathjax/tex-mml-chtml.js"),
    # loaded on demand by tex-mml-chtml.js: TeX extensions, fonts, the menu, accessibility
    ("mathjax", "es5/input", "mathjax/input"),
    ("mathjax", "es5/output/chtml", "mathjax/output/chtml"),
    ("mathjax", "es5/ui", "mathjax/ui"),
    ("mathjax", "es5/a11y", "mathjax/a11y"),
    ("mathjax", "es5/sre", "mathjax/sre"),
]
MERMAID_SCRIPT = f"{VENDOR}/mermaid/mermaid.min.js"
MATHJAX_SCRIPT = f"{VENDOR}/mathjax/tex-mml-chtml.js"
# the line sphinxcontrib-mermaid 2.x starts its module script with
MERMAID_IMPORT = re.compile(r"^import mermaid from [^;\n]+;", re.MULTILINE)


# --------------------------------------------------------------------------- npm


def pinned_versions(root: pathlib.Path = ROOT) -> dict[str, str]:
    """Versions of the npm packages we use, as locked in package-lock.json."""
    lock = json.loads((root / "package-lock.json").read_text())
    return {name: lock["packages"][f"node_modules/{name}"]["version"] for name in sorted({a[0] for a in ASSETS})}


def installed_version(name: str, root: pathlib.Path = ROOT) -> str | None:
    manifest = root / "node_modules" / name / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.exists() else None


def missing_packages(root: pathlib.Path = ROOT) -> list[str]:
    """Pinned packages that node_modules lacks or holds in another version."""
    return [f"{name}@{version}" for name, version in pinned_versions(root).items() if installed_version(name, root) != version]


def ensure_installed(root: pathlib.Path = ROOT) -> None:
    """Run ``npm ci`` (exact versions from package-lock.json, no install scripts) if needed."""
    if not missing_packages(root):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install mermaid and MathJax for the website (apt-get install -y npm)")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=root, check=True)
    if still := missing_packages(root):
        raise RuntimeError(f"npm ci did not install {still}")


# ------------------------------------------------------------------ Sphinx side


def _copy_assets(app: Any) -> None:
    if app.builder.format != "html":
        return
    target = pathlib.Path(app.outdir) / "_static" / VENDOR
    for package, source, destination in ASSETS:
        src = ROOT / "node_modules" / package / source
        dst = target / destination
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def _check_installed(app: Any) -> None:
    from sphinx.errors import ExtensionError

    if missing := missing_packages():
        raise ExtensionError(
            f"offline_site: node_modules lacks {', '.join(missing)}; run `python tools/offline_site.py install` "
            "(make book and make test do this)"
        )


def _drop_early_inline_scripts(app: Any, env: Any, docnames: list[str]) -> None:
    # Inline scripts added after the builder started sit in the builder's list as filename None
    # *and* in the registry, which Sphinx re-adds (as filename '') before writing: keep only that copy.
    builder = app.builder
    if hasattr(builder, "_js_files"):
        builder._js_files[:] = [js for js in builder._js_files if js.filename is not None]


def _load_mermaid_classic(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    from sphinx.builders.html._assets import _JavaScript
    from sphinx.errors import ExtensionError

    for index, script in enumerate(scripts):
        body = script.attributes.get("body", "")
        if script.attributes.get("type") == "module" and "mermaid.initialize" in body:
            patched, count = MERMAID_IMPORT.subn("const mermaid = window.mermaid;", body, count=1)
            if count != 1:
                raise ExtensionError(f"offline_site: the mermaid script on {pagename} has no `import mermaid from` line to replace")
            scripts[index] = _JavaScript(script.filename, priority=script.priority, **{**script.attributes, "body": patched})
            # a classic script runs while the page is parsed, before any module script
            scripts.insert(index, _JavaScript(f"_static/{MERMAID_SCRIPT}", priority=script.priority))
            return


def _point_at_vendor(app: Any, config: Any) -> None:
    # relative paths are served from _static; set here so the layout above is the only place they live
    config.mathjax_path = MATHJAX_SCRIPT
    config.mermaid_use_local = MERMAID_SCRIPT  # replaced per page below; never a CDN address


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _point_at_vendor)
    app.connect("builder-inited", _check_installed)
    app.connect("builder-inited", _copy_assets)  # before pages are written, so asset checksums work
    app.connect("env-before-read-docs", _drop_early_inline_scripts, priority=900)  # after sphinx-thebe (500)
    app.connect("html-page-context", _load_mermaid_classic, priority=900)  # after sphinxcontrib-mermaid (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str]) -> int:
    if argv != ["install"]:
        print(__doc__.split("\n\n")[0] + "\n\nUsage: python tools/offline_site.py install", file=sys.stderr)
        return 2
    ensure_installed()
    print("node_modules:", ", ".join(f"{name}@{version}" for name, version in pinned_versions().items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

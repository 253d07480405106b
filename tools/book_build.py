"""Build the website strictly (`make test-book`), each chapter rendered from nbval's run of it where there is one.

    python tools/book_build.py   # into $POSENC_BOOK_OUTPUT/_build/html (default: the repository's _build/html)

nbval's runs (tests/nbval_record.py) go into a jupyter-cache, Jupyter Book's own mechanism, which matches them to
the chapters by their code: a chapter edited since, or not run, is executed by the build. Beside the html go
jupyter-book.log and build-info.json (what the build did, which tests/book and tests/site read).
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import yaml

import offline_site
from book_files import ROOT, book_config, book_notebooks

JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
EXECUTED = Path(os.environ.get("POSENC_EXECUTED", ROOT / "test-artifacts" / "executed"))  # nbval's runs
INFO = "build-info.json"


def build(source: Path, output: Path, *, cache: Path | None = None) -> subprocess.CompletedProcess:
    """`make book`'s strict build of the book in ``source``; the notebooks in the jupyter-cache ``cache`` are not run."""
    offline_site.ensure_installed()  # the website's build tools from npm
    command = [str(JUPYTER_BOOK), "build", "--all", "-W", "-n", "--keep-going", str(source)]
    command += ["--path-output", str(output)]
    if cache is not None:
        config = book_config(source / "_config.yml")
        config["execute"] = dict(config.get("execute", {}), execute_notebooks="cache", cache=str(cache))
        local = config["sphinx"].get("local_extensions", {})  # found relative to the configuration file
        config["sphinx"]["local_extensions"] = {name: str(source / path) for name, path in local.items()}
        path = Path(tempfile.mkdtemp(prefix="posenc-config-")) / "_config.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        command += ["--config", str(path)]
    env = dict(os.environ, PATH=f"{JUPYTER_BOOK.parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)


def build_site(output: Path, executed: Path = EXECUTED) -> dict:
    """Build the course into ``output``/_build/html from the runs in ``executed``; returns what build-info.json holds."""
    from jupyter_cache import get_cache  # here: its import takes seconds, and every test session imports this module
    from jupyter_cache.base import CacheBundleIn

    cache_path = Path(tempfile.mkdtemp(prefix="posenc-jupyter-cache-"))
    cache, chapters = get_cache(str(cache_path)), {path.name: path.resolve() for path in book_notebooks()}
    runs = [run for run in sorted(executed.glob("*.ipynb")) if run.name in chapters]
    for run in runs:
        bundle = CacheBundleIn(nbformat.read(run, as_version=4), str(chapters[run.name]))
        cache.cache_notebook_bundle(bundle, check_validity=False)
    result = build(ROOT, output, cache=cache_path)
    (output / "_build").mkdir(parents=True, exist_ok=True)
    log = result.stdout + result.stderr
    (output / "_build" / "jupyter-book.log").write_text(log, encoding="utf-8")
    info = {
        "returncode": result.returncode,
        "html": str(output / "_build" / "html"),
        "from_nbval": [run.name for run in runs],  # the notebooks rendered from nbval's run
        "executed": log.count("Executing notebook using"),  # the notebooks the build executed itself
    }
    (output / "_build" / INFO).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


if __name__ == "__main__":
    output = Path(os.environ.get("POSENC_BOOK_OUTPUT", ROOT)).resolve()
    info = build_site(output)
    print(f"{info['html']}: {len(info['from_nbval'])} notebooks from nbval's run, {info['executed']} executed")
    if info["returncode"]:
        print((output / "_build" / "jupyter-book.log").read_text(encoding="utf-8")[-5000:], file=sys.stderr)
    sys.exit(info["returncode"])

"""Build the website strictly, from the outputs of nbval's run where there is one (`make test-book`).

    python tools/book_build.py [--executed test-artifacts/executed] [--output .]

The settings are `make book`'s (warnings are errors, a notebook that raises fails the build), into
``OUTPUT/_build/html``. Each notebook that nbval ran through in ``--executed`` (written there by
tests/nbval_record.py) is put into a Jupyter Book execution cache (jupyter-cache, Jupyter Book's own
mechanism) and rendered with those outputs; jupyter-cache matches a notebook by its code, so a notebook
edited since nbval ran, or one nbval did not run, is executed by the build. ``OUTPUT/_build/build-info.json``
records what the build did (tests/site and tests/book read it); ``OUTPUT/_build/jupyter-book.log`` its log.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import nbformat
import yaml

import offline_site
from book_files import ROOT, book_config, book_notebooks

JUPYTER_BOOK = pathlib.Path(sys.executable).parent / "jupyter-book"
EXECUTED = ROOT / "test-artifacts" / "executed"  # where tests/nbval_record.py writes nbval's runs
INFO = "build-info.json"


def build_command(source: pathlib.Path, output: pathlib.Path, *, cache: pathlib.Path | None = None) -> list[str]:
    """The strict build of the book in `source` into `output`/_build/html; with ``cache`` (a jupyter-cache
    folder) the notebooks found there are rendered with its outputs and only the others executed."""
    offline_site.ensure_installed()  # the website's build tools from npm, pinned by package-lock.json
    command = [str(JUPYTER_BOOK), "build", "--all", "-W", "-n", "--keep-going", str(source)]
    command += ["--path-output", str(output)]
    if cache is not None:
        config = copy.deepcopy(book_config(source))
        config["execute"] = dict(config.get("execute", {}), execute_notebooks="cache", cache=str(cache))
        # a configuration file elsewhere: local extensions are found relative to it
        local = config["sphinx"].get("local_extensions", {})
        config["sphinx"]["local_extensions"] = {name: str(source / path) for name, path in local.items()}
        path = pathlib.Path(tempfile.mkdtemp(prefix="posenc-config-")) / "_config.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        command += ["--config", str(path)]
    return command


def build(
    source: pathlib.Path, output: pathlib.Path, *, cache: pathlib.Path | None = None
) -> subprocess.CompletedProcess:
    """Run :func:`build_command` and wait for it (the jupyter-book next to this Python first on PATH)."""
    env = dict(os.environ, PATH=f"{JUPYTER_BOOK.parent}{os.pathsep}{os.environ['PATH']}")
    command = build_command(source, output, cache=cache)
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)


def build_site(output: pathlib.Path, executed: pathlib.Path = EXECUTED) -> dict:
    """Build the course into `output`/_build/html from the runs in `executed`; returns (and writes) build-info."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache_path = pathlib.Path(tempfile.mkdtemp(prefix="posenc-jupyter-cache-"))
    cache = get_cache(str(cache_path))
    chapters = {path.name: path.resolve() for path in book_notebooks()}
    cached = []
    for run in sorted(executed.glob("*.ipynb")) if executed.is_dir() else []:
        if run.name in chapters:
            notebook = nbformat.read(run, as_version=4)
            cache.cache_notebook_bundle(CacheBundleIn(notebook, str(chapters[run.name])), check_validity=False)
            cached.append(run.name)
    result = build(ROOT, output, cache=cache_path)
    log = result.stdout + result.stderr
    (output / "_build").mkdir(parents=True, exist_ok=True)
    (output / "_build" / "jupyter-book.log").write_text(log, encoding="utf-8")
    info = {
        "returncode": result.returncode,
        "html": str(output / "_build" / "html"),
        "from_nbval": cached,  # notebooks whose nbval run the build was handed
        "executed": len(re.findall(r"Executing notebook using", log)),  # notebooks the build executed itself
    }
    (output / "_build" / INFO).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executed", type=pathlib.Path, default=EXECUTED, help="nbval's runs (default: %(default)s)")
    parser.add_argument("--output", type=pathlib.Path, default=ROOT, help="build into OUTPUT/_build/html")
    args = parser.parse_args(argv)
    info = build_site(args.output.resolve(), args.executed)
    print(
        f"website in {info['html']}: {len(info['from_nbval'])} notebooks rendered from nbval's run, "
        f"{info['executed']} executed by the build"
    )
    if info["returncode"]:
        log = (args.output / "_build" / "jupyter-book.log").read_text(encoding="utf-8")
        print(log[-5000:], file=sys.stderr)
    return info["returncode"]


if __name__ == "__main__":
    sys.exit(main())

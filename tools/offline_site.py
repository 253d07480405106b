"""Render diagrams and formulas at build time, so pages need no network and almost no JavaScript.

Two roles in one module, so the list of npm packages lives in one place (package.json):

* a command, ``python tools/offline_site.py install``: runs ``npm ci`` when
  ``node_modules`` does not hold the versions pinned in ``package-lock.json``
  (``make book``, ``make test`` and the test build call it);
* a Sphinx extension (``_config.yml`` loads it through ``sphinx: local_extensions``):

  - mermaid diagrams become SVG files at build time: sphinxcontrib-mermaid's
    ``mermaid_output_format = "svg"`` runs mermaid-cli (``mmdc``), which draws with
    Debian's chromium (no browser download). We replace the extension's HTML
    (an ``<object>`` sized by CSS) with an ``<img>`` carrying the diagram's natural
    width and height and its ``:alt:`` text, so a diagram is shown at its own size,
    never wider than the column, and a page loads no mermaid (2.6 MB);
  - formulas are typeset at build time by sphinxcontrib-katex (``katex_prerender``),
    with the KaTeX of package.json; a page then needs only KaTeX's CSS and fonts,
    copied here into ``_static/offline/katex``. A formula KaTeX cannot parse is a
    build warning (so ``-W`` fails the build) naming the formula. The KaTeX server is
    started safely on a busy machine and stopped when the build ends.
"""

from __future__ import annotations

import html
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "node_modules"
VENDOR = "offline"  # under _static/ (the theme already uses _static/vendor/)

# (package, path inside the package, destination under _static/offline/)
ASSETS: list[tuple[str, str, str]] = [
    ("katex", "dist/katex.min.css", "katex/katex.min.css"),
    ("katex", "dist/fonts", "katex/fonts"),
]
KATEX_CSS = f"{VENDOR}/katex/katex.min.css"
KATEX_JS = NODE_MODULES / "katex" / "dist" / "katex.min.js"  # run by node at build time, never shipped
MMDC = NODE_MODULES / ".bin" / "mmdc"
SVG_SIZE = re.compile(r'<svg\b[^>]*?\bviewBox="\s*[-\d.]+\s+[-\d.]+\s+([\d.]+)\s+([\d.]+)\s*"')


# --------------------------------------------------------------------------- npm


def pinned_versions(root: pathlib.Path = ROOT) -> dict[str, str]:
    """The npm packages of package.json, at the versions locked in package-lock.json."""
    wanted = json.loads((root / "package.json").read_text())["devDependencies"]
    lock = json.loads((root / "package-lock.json").read_text())
    return {name: lock["packages"][f"node_modules/{name}"]["version"] for name in sorted(wanted)}


def installed_version(name: str, root: pathlib.Path = ROOT) -> str | None:
    manifest = root / "node_modules" / name / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.exists() else None


def missing_packages(root: pathlib.Path = ROOT) -> list[str]:
    """Pinned packages that node_modules lacks or holds in another version."""
    return [
        f"{name}@{version}"
        for name, version in pinned_versions(root).items()
        if installed_version(name, root) != version
    ]


def ensure_installed(root: pathlib.Path = ROOT) -> None:
    """Run ``npm ci`` (exact versions from package-lock.json, no install scripts) if needed.

    No install script runs, so puppeteer downloads no browser: mermaid-cli and Lighthouse
    use Debian's chromium.
    """
    if not missing_packages(root):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the website's build tools (apt-get install -y npm)")
    env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD="1")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=root, check=True, env=env)
    if still := missing_packages(root):
        raise RuntimeError(f"npm ci did not install {still}")


def chromium() -> str:
    """Debian's chromium, which mermaid-cli drives to lay out diagrams."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("chromium is needed to draw the diagrams at build time (apt-get install -y chromium)")
    return path


# ------------------------------------------------------------------ Sphinx side


def _configure(app: Any, config: Any) -> None:
    # mermaid-cli with Debian's chromium; its puppeteer settings go in a file next to the build
    settings = pathlib.Path(app.doctreedir) / "mermaid-puppeteer.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"executablePath": chromium(), "args": ["--no-sandbox", "--disable-gpu"]}))
    config.mermaid_output_format = "svg"
    config.mermaid_cmd = shlex.quote(str(MMDC))  # a string: sphinxcontrib-mermaid splits it with shlex
    config.mermaid_params = ["--puppeteerConfigFile", str(settings), "--backgroundColor", "white"]
    # KaTeX from package.json, rendered by node while the pages are written
    config.katex_prerender = True
    config.katex_css_path = KATEX_CSS
    config.katex_js_path = str(KATEX_JS)


def _check_installed(app: Any) -> None:
    from sphinx.errors import ExtensionError

    if missing := missing_packages():
        raise ExtensionError(
            f"offline_site: node_modules lacks {', '.join(missing)}; run `python tools/offline_site.py install` "
            "(make book and make test do this)"
        )


def _copy_assets(app: Any) -> None:
    if app.builder.format != "html":
        return
    target = pathlib.Path(app.outdir) / "_static" / VENDOR
    for package, source, destination in ASSETS:
        src = NODE_MODULES / package / source
        dst = target / destination
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def natural_size(svg_file: pathlib.Path) -> tuple[float, float]:
    """Width and height, in CSS pixels, of a diagram drawn by mermaid-cli (its viewBox).

    mermaid-cli writes ``width="100%"``, which leaves an image with no size of its own (a
    browser then takes 300 x 150): the file is given its viewBox's width and height instead.
    """
    text = svg_file.read_text(encoding="utf-8")
    match = SVG_SIZE.search(text)
    if match is None:
        raise ValueError(f"{svg_file} has no viewBox on its <svg> element")
    width, height = float(match.group(1)), float(match.group(2))
    root = match.group(0)
    sized = re.sub(r'\swidth="100%"', f' width="{width:g}" height="{height:g}"', root, count=1)
    sized = re.sub(r"max-width:\s*[\d.]+px;?\s*", "", sized, count=1)
    if sized != root:
        svg_file.write_text(text.replace(root, sized, 1), encoding="utf-8")
    return width, height


def _visit_mermaid(self: Any, node: Any) -> None:
    """HTML for a diagram: the SVG mermaid-cli drew, as an image at its natural size."""
    from docutils import nodes
    from sphinx.util import logging
    from sphinxcontrib.mermaid import MermaidError, render_mm

    try:
        relfn, outfn = render_mm(self, node["code"], node["options"], "svg")
    except MermaidError as error:
        logging.getLogger(__name__).warning(f"diagram could not be drawn: {error}", location=node)
        raise nodes.SkipNode from None
    if relfn is None:  # mmdc could not be started (render_mm warned)
        raise nodes.SkipNode
    width, height = natural_size(pathlib.Path(outfn))
    alt = node.get("alt") or diagram_text(node["code"])
    align = f" align-{node['align']}" if "align" in node else ""
    self.body.append(
        f'<img class="diagram{align}" src="{relfn}" width="{round(width)}" height="{round(height)}" '
        f'alt="{html.escape(alt)}" decoding="async"/>\n'
    )
    raise nodes.SkipNode


LABEL = re.compile(r'\[\s*"([^"]*)"\s*\]|\(\(\s*"?([^")]*)"?\s*\)\)|\(\s*"([^"]*)"\s*\)|\{\s*"([^"]*)"\s*\}')


def diagram_text(code: str) -> str:
    """A fallback text for a diagram without ``:alt:``: its node labels in the order written."""
    body = code.split("\n---\n", 1)[-1] if code.startswith("---") else code
    labels: list[str] = []
    for match in LABEL.finditer(body):
        label = next(group for group in match.groups() if group is not None)
        label = re.sub(r"<br\s*/?>", " ", label).strip()
        if label and label not in labels:
            labels.append(label)
    return "Diagram: " + "; ".join(labels) if labels else "Diagram"


def _warn_on_katex_errors(app: Any) -> None:
    # sphinxcontrib-katex renders with throwOnError=false: KaTeX then returns the source in red and
    # nothing fails. Make that a warning that names the formula, so a strict build stops on it.
    import sphinxcontrib.katex as katex

    if getattr(katex.render_latex, "_checked", False):
        return
    render = katex.render_latex

    def render_checked(latex: str, options: dict | None = None) -> str:
        html_text = render(latex, options)
        if 'class="katex-error"' in html_text:
            from sphinx.util import logging

            message = re.search(r'title="([^"]*)"', html_text)
            logging.getLogger(__name__).warning(
                f"KaTeX cannot typeset {latex!r}: {html.unescape(message.group(1)) if message else 'parse error'}"
            )
        return html_text

    render_checked._checked = True  # type: ignore[attr-defined]  # a marker attribute on a function
    katex.render_latex = render_checked


def _start_katex_server(cls: Any, rundir: pathlib.Path, timeout: float) -> tuple[Any, Any]:
    """sphinxcontrib-katex 0.9.11's server start, made safe on a busy machine.

    The original connects once the socket file exists, which node creates (bind) before it
    listens: on a loaded machine the connection is refused and the build fails. Here the
    connection is retried until the server listens, and a server that cannot start is stopped
    rather than left running (an orphan server keeps the build's output pipes open).
    """
    import socket
    import time

    from sphinxcontrib.katex import KaTeXError

    socket_path = rundir / "katex.sock"
    process = subprocess.Popen(
        cls.build_command(socket=socket_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=rundir
    )
    deadline = time.monotonic() + timeout
    while True:
        if socket_path.is_socket():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(socket_path))
                return process, sock
            except ConnectionRefusedError:
                sock.close()
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise KaTeXError(f"the KaTeX server did not start within {timeout} s (exit code {process.poll()})")
        time.sleep(0.01)


def _stop_katex_server(app: Any, exception: Exception | None) -> None:
    from sphinxcontrib.katex import KaTeXServer

    if KaTeXServer.katex_server is not None:
        import atexit

        atexit.unregister(KaTeXServer.terminate)  # sphinxcontrib-katex's own clean-up, done here
        KaTeXServer.katex_server.terminate()
        KaTeXServer.katex_server = None


def setup(app: Any) -> dict[str, Any]:
    import sphinxcontrib.katex as katex
    from sphinxcontrib.mermaid import mermaid

    katex.KaTeXServer.start_server_process = classmethod(_start_katex_server)
    katex.STARTUP_TIMEOUT = 60.0  # node starting on a busy machine (the default is 5 s)
    katex.RENDER_TIMEOUT = 60.0  # per formula

    app.setup_extension("sphinxcontrib.mermaid")
    app.setup_extension("sphinxcontrib.katex")
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _check_installed)
    app.connect("builder-inited", _copy_assets)  # before pages are written, so asset checksums work
    app.connect("builder-inited", _warn_on_katex_errors)
    app.connect("build-finished", _stop_katex_server)
    app.add_node(mermaid, override=True, html=(_visit_mermaid, None))
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

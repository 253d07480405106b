"""Diagrams and formulas rendered at build time, so pages need no network and almost no JavaScript.

``python tools/offline_site.py install`` runs ``npm ci`` when node_modules lacks the versions of
package-lock.json. As a Sphinx extension (``_config.yml``): mermaid diagrams become SVG images at their
natural size (mermaid-cli, with Debian's chromium; no page loads mermaid's 2.6 MB), and formulas are
typeset by sphinxcontrib-katex in node (a page needs only KaTeX's CSS and fonts, copied to
``_static/offline/katex``). A diagram that cannot be drawn is a build warning (a formula: course_site).
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
KATEX = NODE_MODULES / "katex" / "dist"  # katex.min.js is run by node at build time, never shipped
MMDC = NODE_MODULES / ".bin" / "mmdc"
# the root tag of mermaid-cli's SVG, edited as text: a parser would re-serialise the whole file (HTML labels)
SVG_ROOT = re.compile(r'<svg\b[^>]*?\bviewBox="\s*[-\d.]+\s+[-\d.]+\s+([\d.]+)\s+([\d.]+)\s*"[^>]*>')

# --------------------------------------------------------------------------- npm


def pinned_versions(root: pathlib.Path = ROOT) -> dict[str, str]:
    """The npm packages of package.json, at the versions locked in package-lock.json."""
    wanted = json.loads((root / "package.json").read_text())["devDependencies"]
    lock = json.loads((root / "package-lock.json").read_text())["packages"]
    return {name: lock[f"node_modules/{name}"]["version"] for name in sorted(wanted)}


def missing_packages(root: pathlib.Path = ROOT) -> list[str]:
    """Pinned packages that node_modules lacks or holds in another version."""
    missing = []
    for name, version in pinned_versions(root).items():
        manifest = root / "node_modules" / name / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
            missing.append(f"{name}@{version}")
    return missing


def ensure_installed(root: pathlib.Path = ROOT) -> None:
    """``npm ci`` (the versions of package-lock.json) if needed, without install scripts, so puppeteer
    downloads no browser: mermaid-cli and Lighthouse use Debian's chromium."""
    if not missing_packages(root):
        return
    if (npm := shutil.which("npm")) is None:
        raise RuntimeError("npm is needed to install the website's build tools (apt-get install -y npm)")
    env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD="1")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=root, check=True, env=env)
    if still := missing_packages(root):
        raise RuntimeError(f"npm ci did not install {still}")


# ------------------------------------------------------------------ Sphinx side


def _configure(app: Any, config: Any) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("chromium is needed to draw the diagrams at build time (apt-get install -y chromium)")
    settings = pathlib.Path(app.doctreedir) / "mermaid-puppeteer.json"  # mermaid-cli's browser settings
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"executablePath": chromium, "args": ["--no-sandbox", "--disable-gpu"]}))
    config.mermaid_output_format = "svg"
    config.mermaid_cmd = shlex.quote(str(MMDC))  # a string: sphinxcontrib-mermaid splits it with shlex
    config.mermaid_params = ["--puppeteerConfigFile", str(settings), "--backgroundColor", "white"]
    config.katex_prerender = True
    config.katex_css_path = "offline/katex/katex.min.css"
    config.katex_js_path = str(KATEX / "katex.min.js")


def _builder_inited(app: Any) -> None:
    from sphinx.errors import ExtensionError

    if missing := missing_packages():
        raise ExtensionError(
            f"offline_site: node_modules lacks {', '.join(missing)}; run `python tools/offline_site.py install`"
        )
    if app.builder.format == "html":  # before pages are written, so Sphinx stamps the checksums
        target = pathlib.Path(app.outdir) / "_static" / "offline" / "katex"
        shutil.copytree(KATEX / "fonts", target / "fonts", dirs_exist_ok=True)
        shutil.copy2(KATEX / "katex.min.css", target)


def natural_size(svg_file: pathlib.Path) -> tuple[float, float]:
    """Width and height of a diagram mermaid-cli drew (its viewBox), also written on its root, where
    mermaid-cli writes ``width="100%"`` and a max-width (an image with no size of its own is 300 x 150)."""
    text = svg_file.read_text(encoding="utf-8")
    if (match := SVG_ROOT.search(text)) is None:
        raise ValueError(f"{svg_file} has no viewBox on its <svg> element")
    width, height = float(match[1]), float(match[2])
    root = re.sub(r'\swidth="100%"', f' width="{width:g}" height="{height:g}"', match[0], count=1)
    root = re.sub(r"max-width:\s*[\d.]+px;?\s*", "", root, count=1)
    svg_file.write_text(text.replace(match[0], root, 1), encoding="utf-8")
    return width, height


def _visit_mermaid(self: Any, node: Any) -> None:
    """A diagram as the SVG mermaid-cli drew, an image at its natural size with its ``:alt:`` text."""
    from docutils import nodes
    from sphinx.util import logging
    from sphinxcontrib.mermaid import MermaidError, render_mm

    logger = logging.getLogger(__name__)
    try:
        relfn, outfn = render_mm(self, node["code"], node["options"], "svg")
    except MermaidError as error:
        logger.warning(f"diagram could not be drawn: {error}", location=node)
        raise nodes.SkipNode from None
    if relfn is None:  # mmdc could not be started (render_mm warned)
        raise nodes.SkipNode
    if not node.get("alt"):
        logger.warning("a diagram without :alt: text (CONTRIBUTING.md)", location=node)
    width, height = natural_size(pathlib.Path(outfn))
    align = f" align-{node['align']}" if "align" in node else ""
    self.body.append(
        f'<img class="diagram{align}" src="{relfn}" width="{round(width)}" height="{round(height)}" '
        f'alt="{html.escape(node.get("alt") or "Diagram")}" decoding="async"/>\n'
    )
    raise nodes.SkipNode


def _start_katex_server(cls: Any, rundir: pathlib.Path, timeout: float) -> tuple[Any, Any]:
    """sphinxcontrib-katex 0.9.11's server start, made safe on a busy machine: it connected as soon as
    the socket file existed, before node listened; here it retries, and a server that cannot start is
    killed (an orphan server keeps the build's output pipes open)."""
    import socket
    import time

    from sphinxcontrib.katex import KaTeXError

    path = rundir / "katex.sock"
    command = cls.build_command(socket=path)
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=rundir)
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if path.is_socket():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(path))
                return process, sock
            except ConnectionRefusedError:
                sock.close()
        time.sleep(0.01)
    process.kill()
    raise KaTeXError(f"the KaTeX server did not start within {timeout} s (exit code {process.poll()})")


def _stop_katex_server(app: Any, exception: Exception | None) -> None:
    import atexit

    from sphinxcontrib.katex import KaTeXServer

    if KaTeXServer.katex_server is not None:
        atexit.unregister(KaTeXServer.terminate)  # sphinxcontrib-katex's own clean-up, done here
        KaTeXServer.katex_server.terminate()
        KaTeXServer.katex_server = None


def setup(app: Any) -> dict[str, Any]:
    import sphinxcontrib.katex as katex
    from sphinxcontrib.mermaid import mermaid

    katex.KaTeXServer.start_server_process = classmethod(_start_katex_server)
    katex.STARTUP_TIMEOUT = katex.RENDER_TIMEOUT = 60.0  # node on a busy machine (the defaults are 5 s)
    app.setup_extension("sphinxcontrib.mermaid")
    app.setup_extension("sphinxcontrib.katex")
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _stop_katex_server)
    app.add_node(mermaid, override=True, html=(_visit_mermaid, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python tools/offline_site.py install")
    ensure_installed()
    print("node_modules:", ", ".join(f"{name}@{version}" for name, version in pinned_versions().items()))

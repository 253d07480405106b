"""Merge a cell's stream outputs exactly as they were printed.

The kernel sends what a cell prints in chunks whose boundaries depend on timing:
one ``print`` can end up split across two chunks. MyST-NB's ``nb_merge_streams``
strips every chunk and appends a newline before joining them, so on a busy
machine the website can show a line broken in two. Joining the chunks verbatim
first (this module) leaves MyST-NB only the end of each stream to tidy.

Two uses:

* a Sphinx extension (``_config.yml`` loads it through ``sphinx: local_extensions``)
  that wraps MyST-NB's merge step;
* :func:`concatenate_stream_chunks`, which ``tools/execute_notebooks.py`` applies
  before storing outputs, so stored notebooks do not change with chunking either.
"""

from __future__ import annotations

import copy
from typing import Any


def concatenate_stream_chunks(outputs: list[Any]) -> list[Any]:
    """Join consecutive-or-not chunks of the same stream (stdout, stderr) verbatim, in order.

    Each stream keeps the position of its first chunk; other outputs keep theirs.
    """
    merged: list[Any] = []
    first_chunk: dict[str, Any] = {}
    for output in outputs:
        if output.get("output_type") == "stream":
            name = output["name"]
            if name in first_chunk:
                first_chunk[name]["text"] += output["text"]
                continue
            output = copy.deepcopy(output)
            first_chunk[name] = output
        merged.append(output)
    return merged


def setup(app: Any) -> dict[str, Any]:
    from myst_nb.core import render

    original = render.coalesce_streams
    if getattr(original, "_joins_chunks_first", False):
        return {"parallel_read_safe": True, "parallel_write_safe": True}

    def coalesce_streams(outputs: list[Any]) -> list[Any]:
        return original(concatenate_stream_chunks(outputs))

    coalesce_streams._joins_chunks_first = True  # type: ignore[attr-defined]  # a marker attribute on a function
    render.coalesce_streams = coalesce_streams
    return {"parallel_read_safe": True, "parallel_write_safe": True}

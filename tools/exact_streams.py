"""A cell's stream outputs joined exactly as printed on the website (a Sphinx extension): the kernel sends
printed text in chunks split by timing, and MyST-NB's ``nb_merge_streams`` strips each chunk and adds a
newline, so a line could show broken in two (stored notebooks are merged by nbclient's coalesce_streams)."""

from __future__ import annotations

import copy
from typing import Any


def concatenate_stream_chunks(outputs: list[Any]) -> list[Any]:
    """The chunks of each stream (stdout, stderr) joined verbatim, in order, where its first chunk was."""
    merged: list[Any] = []
    first: dict[str, Any] = {}
    for output in outputs:
        if output.get("output_type") != "stream":
            merged.append(output)
        elif output["name"] in first:
            first[output["name"]]["text"] += output["text"]
        else:
            first[output["name"]] = copy.deepcopy(output)
            merged.append(first[output["name"]])
    return merged


def setup(app: Any) -> dict[str, Any]:
    from myst_nb.core import render

    if not getattr(render.coalesce_streams, "joins_chunks", False):
        original = render.coalesce_streams
        render.coalesce_streams = lambda outputs: original(concatenate_stream_chunks(outputs))
        render.coalesce_streams.joins_chunks = True  # a marker on the function
    return {"parallel_read_safe": True, "parallel_write_safe": True}

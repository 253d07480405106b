"""Results as tables: rows of already-formatted cells shown as an HTML table in a notebook.

A chapter that reports numbers builds a :class:`Table` from its stored results and lets the
notebook display it: the course website then shows a real table (which a phone can lay out or
scroll), and a plain-text front end (a terminal, nbval's comparison) still gets aligned columns.
The cells are strings the chapter formats itself (``"0.817 ± 0.006"``): the table formats nothing.
"""

from __future__ import annotations

import html
from collections.abc import Sequence


class Table:
    """A table of text cells with a header row and an optional caption.

    ``header``: the column names (at least one); ``rows``: one sequence of cells per row, each as
    long as ``header``, cells converted with ``str``. The first column names the rows and is
    left-aligned; the others are right-aligned (numbers).
    """

    def __init__(self, header: Sequence[object], rows: Sequence[Sequence[object]], *, caption: str | None = None):
        if isinstance(header, str) or not isinstance(header, Sequence) or len(header) == 0:
            raise ValueError(f"header must be a non-empty sequence of column names, got {header!r}")
        if isinstance(rows, str) or not isinstance(rows, Sequence):
            raise TypeError(f"rows must be a sequence of rows (sequences of cells), got {type(rows).__name__}")
        for index, row in enumerate(rows):
            if isinstance(row, str) or not isinstance(row, Sequence) or len(row) != len(header):
                raise ValueError(
                    f"rows[{index}] must be a sequence of {len(header)} cells (one per header column), got {row!r}"
                )
        if caption is not None and not isinstance(caption, str):
            raise TypeError(f"caption must be a str or None, got {type(caption).__name__}")
        self.header = [str(name) for name in header]
        self.rows = [[str(cell) for cell in row] for row in rows]
        self.caption = caption

    def __repr__(self) -> str:
        """The table as aligned text (what a plain-text front end shows)."""
        widths = [max(len(line[i]) for line in [self.header, *self.rows]) for i in range(len(self.header))]

        def line(cells: list[str]) -> str:
            first = cells[0].ljust(widths[0])
            return "  ".join([first] + [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)])

        lines = ([self.caption] if self.caption else []) + [line(self.header)] + [line(row) for row in self.rows]
        return "\n".join(text.rstrip() for text in lines)

    def _repr_html_(self) -> str:
        """The table as HTML (what Jupyter and the course website show)."""
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        head = "".join(f'<th scope="col">{html.escape(name)}</th>' for name in self.header)
        body = "".join(
            f'<tr><th scope="row">{html.escape(row[0])}</th>'
            + "".join(f"<td>{html.escape(c)}</td>" for c in row[1:])
            + "</tr>"
            for row in self.rows
        )
        return f'<table class="posenc-table">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

"""posenc_lib.tables: results as a table, in HTML and as aligned text."""

from __future__ import annotations

import pytest

from posenc_lib import tables


def test_a_table_is_html_and_aligned_text():
    table = tables.Table(["scheme", "p < L"], [["rope", "0.817 ± 0.000"], ["alibi <&>", 0.5]], caption="copy")
    html = table._repr_html_()
    assert html.startswith('<table class="posenc-table"><caption>copy</caption><thead><tr><th scope="col">scheme')
    assert '<th scope="col">p &lt; L</th>' in html and '<th scope="row">alibi &lt;&amp;&gt;</th><td>0.5</td>' in html
    assert html.count("<tr>") == 3
    assert repr(table).splitlines() == [
        "copy",
        "scheme             p < L",
        "rope       0.817 ± 0.000",
        "alibi <&>            0.5",
    ]


def test_bad_tables_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="header"):
        tables.Table([], [])
    with pytest.raises(ValueError, match=r"rows\[1\] must be a sequence of 2 cells"):
        tables.Table(["a", "b"], [["x", "1"], ["y"]])
    with pytest.raises(TypeError, match="rows"):
        tables.Table(["a"], None)
    with pytest.raises(TypeError, match="caption"):
        tables.Table(["a"], [["x"]], caption=3)

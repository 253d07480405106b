"""Stored outputs that any machine reproduces: no printed rounding noise.

nbval compares a fresh run of each chapter with its stored outputs. A number at the size of rounding
(float64's 1e-16, float32's 1e-7) prints other digits on another CPU, so a cell that prints one fails
nbval on machines unlike the one that stored it. Such a cell prints the bound it asserts instead
(``assert gap < 1e-12`` and ``print("... < 1e-12")``).

The rule checked here, on the stored notebooks (no kernel): every number below 1e-6 in a code cell's
text output either is a bound (a literal in the cell's own source such as ``1e-12``, or a power of ten
printed after ``<`` or ``≤``), or the cell says in its metadata why its tiny numbers are exact and stable to their printed digits
(``"posenc": {"small_numbers": "<reason>"}``; for example a float64 ``exp(-m d)`` printed to two digits).
``make test-portability`` then runs every chapter under nbval on the other numeric code paths.
"""

from __future__ import annotations

import math
import re

import nbformat
import pytest

from book_files import book_notebooks

# a number as Python prints it: 1.2e-07, 3e-16, 0.00000012, -4.4e-223
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
SMALL = 1e-6
# a printed bound: "< 1e-12", "≤ 1e-9", "<= 1e-7"
BOUND = re.compile(r"(?:<|≤|<=)\s*$")
POWER_OF_TEN = re.compile(r"1(?:\.0*)?[eE]-\d+")


def small_numbers(text: str, *, bounds: bool = True) -> list[tuple[str, float]]:
    """The numbers in ``text`` whose size is below 1e-6 (0 excluded), as (as printed, value); with
    ``bounds=False``, not those printed as a bound (a power of ten after ``<`` or ``≤``)."""
    found = []
    for match in NUMBER.finditer(text):
        value = float(match.group())
        if not 0 < abs(value) < SMALL:
            continue
        if not bounds and POWER_OF_TEN.fullmatch(match.group()) and BOUND.search(text[: match.start()]):
            continue
        found.append((match.group(), abs(value)))
    return found


def text_outputs(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            data = output.get("data", {})
            parts += [data[kind] for kind in ("text/plain", "text/html", "text/markdown", "text/latex") if kind in data]
    return "\n".join(parts)


def unexplained_small_numbers(notebook: nbformat.NotebookNode) -> list[str]:
    """A message for each printed number below 1e-6 that is neither a bound in its cell's source nor explained."""
    problems = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or cell.metadata.get("posenc", {}).get("small_numbers"):
            continue
        literals = [value for _, value in small_numbers(cell.source)]
        for line in text_outputs(cell).splitlines():
            for printed, value in small_numbers(line, bounds=False):
                if any(math.isclose(value, literal, rel_tol=1e-9) for literal in literals):
                    continue  # a bound the cell asserts and prints
                problems.append(
                    f"cell {index} (id {cell.get('id')}) prints {printed} in {line.strip()!r}: if it is rounding noise, "
                    "another CPU prints other digits; print the bound the cell asserts instead "
                    f"(assert x < 1e-12; print('... < 1e-12')), or, if it is exact and stable to its printed "
                    "digits, say why in the cell's metadata: {'posenc': {'small_numbers': '<reason>'}}"
                )
    return problems


@pytest.mark.parametrize("path", book_notebooks(), ids=lambda p: p.name)
def test_stored_outputs_print_no_rounding_noise(path):
    problems = unexplained_small_numbers(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_the_check_flags_noise_and_accepts_bounds_and_explained_cells():
    def notebook(source: str, printed: str, **metadata) -> nbformat.NotebookNode:
        cell = nbformat.v4.new_code_cell(source, metadata=metadata)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
        return nbformat.v4.new_notebook(cells=[cell])

    noise = notebook('print(f"gap = {gap:.1e}")', "gap = 1.1e-16\n")
    assert len(unexplained_small_numbers(noise)) == 1
    assert "1.1e-16" in unexplained_small_numbers(noise)[0]
    assert unexplained_small_numbers(notebook("assert gap < 1e-12\nprint('gap < 1e-12')", "gap < 1e-12\n")) == []
    assert unexplained_small_numbers(notebook("print(f'gap {below(gap)}')", "gap < 1e-12, ≤ 1e-9\n")) == []
    # ... but not a computed number that happens to follow a "<"
    assert unexplained_small_numbers(notebook("print(f'gap < {gap:.1e}')", "gap < 2.2e-16\n"))
    # a bound printed that the source does not hold (a computed power of ten) is flagged
    assert unexplained_small_numbers(notebook('print(f"to {gap:.0e}")', "to 1e-15\n"))
    explained = notebook('print(f"{w:.1e}")', "3.3e-09\n", posenc={"small_numbers": "float64 exp(-m d)"})
    assert unexplained_small_numbers(explained) == []
    assert unexplained_small_numbers(notebook('print(f"{w:.1e}")', "3.3e-09\n", posenc={"small_numbers": ""}))
    # numbers of ordinary size and zero are not rounding noise
    assert unexplained_small_numbers(notebook("print(x)", "6.5e-03 0.0e+00 12 0.5010 1e-3\n")) == []
    assert small_numbers("4.4e-223, 0.00000012 and -2e-7") == [
        ("4.4e-223", 4.4e-223),
        ("0.00000012", 1.2e-7),
        ("-2e-7", 2e-7),
    ]

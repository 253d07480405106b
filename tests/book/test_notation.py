"""The notation table of book/intro.md is true: every symbol it lists is used, first in the chapter it names,
and every symbol the chapters' formulas use is in it.

The chapters' symbols are read from the math of their markdown cells ($...$ and $$...$$) and from the tensor
shapes written in inline code, such as `(b, n_h, s, d_h)`. A formula is cut into symbols: a letter or Greek
letter with its accent (\\hat, \\tilde, \\bar), primes, a one-letter superscript (a^K) and its subscript, or a
name set upright (\\mathrm{PE}). Each row of the table is given below as a pattern over those symbols, so
adding a row to the table means saying here what it matches.
"""

import json
import re
from functools import cache

from conftest import ROOT

BOOK = ROOT / "book"

GREEK = set(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho sigma "
    "tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega ell".split()
)
ACCENTS = ("hat", "tilde", "bar", "overline", "mathcal", "mathbb")
UPRIGHT = ("mathrm", "text", "operatorname", "texttt", "textit", "textbf", "mathit")

# one pattern per row of the table, keyed by the row's symbol cell exactly as written there
SUB = r"_\{.+\}"  # any subscript
TABLE_PATTERNS = {
    "$s$": r"s",
    "$b$": r"b",
    "$s_q$, $s_k$": r"s_\{[qk]\}",
    "$d$": r"d",
    "$d_h$": r"d_\{h\}",
    "$d_p$": r"d_\{p\}",
    "$n_h$": r"n_\{h\}",
    "$\\hat n$": r"\\hat\{n\}",
    "$p$, $p'$": r"p'?",
    "$i$, $j$": r"[ij]'?",
    "$r$": r"r",
    "$\\Delta$": r"\\Delta",
    "$M_\\Delta$": r"M" + SUB,
    "$c$": r"c",
    "$\\hat e_c$": r"\\hat\{e\}" + SUB,
    "$\\ell$, $\\ell'$": r"\\ell'?",
    "$B$, $B'$": r"B'?",
    "$\\theta$, $\\theta_\\ell$": r"\\theta(" + SUB + ")?",
    "$\\lambda$, $\\lambda_\\ell$": r"\\lambda(" + SUB + ")?",
    "$\\varphi$, $\\psi$": r"\\varphi|\\psi",
    "$\\mathrm{code}(p)$": r"\\mathrm\{code\}",
    "$\\mathrm{PE}(p)$": r"\\mathrm\{PE\}(" + SUB + ")?",
    "$e$, $e'$, $e_i$": r"e'?(_\{[ij]\})?",
    "$x$, $x_i$, $x_p$": r"x(_\{[ijp]\})?",
    "$X$": r"X",
    "$y$": r"y",
    "$P$": r"P",
    "$T$": r"T",
    "$F$, $f$": r"[Ff]",
    "$q_i$, $k_j$, $v_j$": r"[qkv](_\{[ij]\})?",
    "$Q$, $K$, $V$": r"[QKV]",
    "$W_q$, $W_k$, $W_v$": r"W_\{[qkv]\}",
    "$A$": r"A",
    "$I$": r"I",
    "$\\mathrm{score}(i, j)$": r"\\mathrm\{score\}(_\{h\})?",
    "$\\mathrm{Attn}$": r"\\mathrm\{Attn\}",
    "$w_{ij}$, $Z$": r"w_\{i[ij]\}|Z",
    "$u$, $w$": r"[uw]'?(_\{[12]\})?|\\overline\{w\}",
    "$q^{(\\ell)}$, $k^{(\\ell)}$": r"[qk]\^\{\(\\ell\)\}",
    "$\\mathrm{i}$": r"\\mathrm\{i\}",
    "$\\mathrm{rot}(\\varphi)$": r"\\mathrm\{rot\}",
    "$R_p$": r"R" + SUB,
    "$R'_p$": r"R'" + SUB + "|R" + SUB + "'",
    "$\\tilde q_i$, $\\tilde k_j$": r"\\tilde\{[qk]\}(_\{[ij]\})?",
    "$\\eta_\\ell$": r"\\eta" + SUB,
    "$S_n(r)$, $n$": r"S_\{n\}|n",
    "$h$, $m_h$": r"h|m" + SUB,
    "$r_{\\max}$": r"r_\{\\max\}",
    "$a^K_r$, $a^V_r$": r"a\^[KV](" + SUB + ")?",
    "$g_c$, $g_p$, $W_R$": r"g_\{[cp]\}|W_\{R\}",
    "$q^r$, $k^r$, $\\delta(i, j)$": r"[qk]\^r(" + SUB + r")?|\\delta",
    "$n_{\\text{b}}$, $n_{\\text{e}}$, $D$, $\\kappa$": r"n_\{\\text\{[be]\}\}|D|\\kappa",
    "$W$": r"W",
    "$W_e$, $W_p$": r"W_\{[ep]\}",
    "$W_{\\text{pos}}$": r"W_\{\\text\{pos\}\}",
    "$W_{\\text{out}}$, $b_{\\text{out}}$": r"[Wb]_\{\\text\{out\}\}",
    "$z_i$, $z(X)$": r"z(_\{i\})?",
    "$\\sigma$": r"\\sigma",
    "$\\gamma$": r"\\gamma",
    "$L$": r"L",
    "$\\alpha$": r"\\alpha",
    "$\\theta'_\\ell$": r"\\theta'" + SUB,
    "$\\tau_\\ell$": r"\\tau(" + SUB + ")?",
    "$\\beta_{\\text{fast}}$, $\\beta_{\\text{slow}}$": r"\\beta_\{\\text\{(fast|slow)\}\}",
    "$t$": r"t",
    "$q_{\\text{rot}}$, $q_{\\text{pass}}$": r"[qk]_\{\\text\{(rot|pass|row|col)\}\}",
    "$n_{\\text{sink}}$, $n_{\\text{cache}}$": r"n_\{\\text\{(sink|cache)\}\}",
    "$n_{\\text{col}}$": r"n_\{\\text\{col\}\}",
    "$n_{\\text{keys}}$": r"n_\{?\\text\{keys\}\}?",
    "$n_{\\text{seeds}}$, $\\bar y$, $\\hat\\sigma$": r"n_\{\\text\{seeds\}\}|\\bar\{y\}|\\hat\{\\sigma\}",
    "$t_{0.975,\\,n_{\\text{seeds}}-1}$": r"t_\{0\.975.*\}",
}

# symbols a reader knows without the table: constants, standard functions and sets, and quantities the text
# writes out as a word (\mathrm{logits}, \text{row}), besides Euler's e (e^{...}) and \mathcal N
STANDARD = re.compile(r"\\pi|\\Gamma|\\mathbb\{R\}(\^.)?|\\mathcal\{N\}|e\^|\\mathrm\{[A-Za-z]{2,}\}(_\{.*\})?")


def math_spans(markdown: str) -> list[str]:
    """The formulas of a markdown cell, and its inline-code tensor shapes such as `(b, s, d)`."""
    # code blocks and diagrams go; directives (exercises, solutions, admonitions) keep their text
    fenced = re.sub(
        r"(`{3,})(?:[A-Za-z][\w-]*|\{(?:mermaid|code|code-block|code-cell)\})[^\n]*\n.*?\1", "", markdown, flags=re.S
    )
    shapes = [
        code
        for code in re.findall(r"`([^`\n]*)`", fenced)
        if re.fullmatch(r"\((\s*(\d+|[a-z](_[a-z]{1,2})?)\s*,)+\s*(\d+|[a-z](_[a-z]{1,2})?)\s*\)", code)
    ]
    text = re.sub(r"`[^`\n]*`", "", fenced)
    display = re.findall(r"\$\$(.+?)\$\$", text, flags=re.S)
    text = re.sub(r"\$\$(.+?)\$\$", "", text, flags=re.S)
    inline = [span for span in re.findall(r"(?<![\\$])\$([^$]+?)\$", text) if "\n\n" not in span]
    return display + inline + [re.sub(r"\b([a-z])_(\w+)", r"\1_{\2}", shape) for shape in shapes]


_TOKEN = re.compile(
    r"\\(?:" + "|".join(UPRIGHT) + r")\s*\{([^{}]*)\}"  # an upright name
    r"|\\(" + "|".join(ACCENTS) + r")\s*(\{\\?[A-Za-z]+\}|\\[A-Za-z]+|[A-Za-z])"  # an accented letter
    r"|\\([A-Za-z]+)|([A-Za-z])"  # a command (Greek letters are kept), a letter
)
_PRIME = re.compile(r"\s*('+|\^\{?\\prime\}?)")
_SUPER = re.compile(r"\s*\^\s*(\{\(\\ell\)\}|[A-Za-z](?![A-Za-z]))")
_BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"  # up to three levels deep
_SUBSCRIPT = re.compile(r"\s*_\s*(" + _BRACED + r"|\\text\{[^{}]*\}|\\[A-Za-z]+|[A-Za-z0-9])")


def symbols(formula: str) -> list[str]:
    """The symbols of one formula, each as a normalised string such as `x_{i}`, `\\theta'_{\\ell}`, `a^K_{r}`."""
    formula = re.sub(r"\\(begin|end)\{[^{}]*\}", "", formula)
    found, at = [], 0
    while match := _TOKEN.search(formula, at):
        at = match.end()
        upright, accent, accented, command, letter = match.groups()
        if upright is not None:
            if not re.fullmatch(r"[A-Za-z]+", upright.strip()):
                continue
            symbol = "\\mathrm{" + upright.strip() + "}"
        elif accent:
            symbol = f"\\{accent}{{{accented.strip('{}')}}}"
        elif command:
            if command not in GREEK:
                continue
            symbol = "\\" + command
        else:
            symbol = letter
        if symbol == "e" and re.match(r"\s*\^\s*\{", formula[at:]):
            found.append("e^")  # Euler's number
            continue
        for pattern, form in ((_PRIME, "'"), (_SUPER, "^"), (_SUBSCRIPT, "_"), (_PRIME, "'")):
            if part := pattern.match(formula, at):
                if form == "'":
                    symbol += "'" if "'" not in symbol else ""
                elif form == "^":
                    symbol += "^" + part.group(1)
                else:
                    symbol += "_{" + part.group(1).removeprefix("{").removesuffix("}").strip() + "}"
                at = part.end()
        found.append(symbol)
    return found


@cache
def chapters() -> list[tuple[int, list[str]]]:
    """(chapter number, its symbols in order) for every chapter notebook."""
    result = []
    for path in sorted(BOOK.glob("[0-9][0-9]_*.ipynb")):
        notebook = json.loads(path.read_text())
        markdown = "\n\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown")
        result.append((int(path.name[:2]), [s for span in math_spans(markdown) for s in symbols(span)]))
    return result


@cache
def table() -> dict[str, int]:
    """The notation table: symbol cell -> the chapter its "first used" column names."""
    text = (BOOK / "intro.md").read_text().split("## Notation", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in text.splitlines():
        if line.startswith("| $"):
            symbol, _meaning, first = (cell.strip() for cell in line.strip("|").split(" | "))
            chapter = re.fullmatch(r"\{doc\}`ch\. (\d+) <\d\d_\w+>`", first)
            assert chapter, f"the first-used cell of {symbol} is not a chapter link: {first}"
            rows[symbol] = int(chapter.group(1))
    return rows


def first_use(pattern: str) -> int | None:
    for number, found in chapters():
        if any(re.fullmatch(pattern, symbol) for symbol in found):
            return number
    return None


def test_every_row_of_the_table_has_a_pattern_here():
    assert set(table()) == set(TABLE_PATTERNS), "rows without a pattern, patterns without a row: " + str(
        set(table()) ^ set(TABLE_PATTERNS)
    )


def test_every_listed_symbol_is_used_first_where_the_table_says():
    wrong = {}
    for symbol, stated in table().items():
        found = first_use(TABLE_PATTERNS[symbol])
        if found != stated:
            wrong[symbol] = f"table says ch. {stated}, first used in ch. {found}" if found else "never used"
    assert not wrong, wrong


def test_every_symbol_of_the_chapters_is_in_the_table():
    missing = {}
    for number, found in chapters():
        for symbol in found:
            if not STANDARD.fullmatch(symbol) and not any(re.fullmatch(p, symbol) for p in TABLE_PATTERNS.values()):
                missing.setdefault(symbol, number)
    assert not missing, f"symbols used (first chapter) but not in the notation table: {missing}"


def test_the_symbol_reader_sees_what_a_reader_sees():
    """The reader behind these tests, on formulas whose symbols are known."""
    assert symbols(r"\tilde q_i \cdot \tilde k_j = q^\top R_{j-i}\, k") == [
        "\\tilde{q}_{i}",
        "\\tilde{k}_{j}",
        "q",
        "R_{j-i}",
        "k",
    ]
    assert symbols(r"\theta'_\ell = B'^{-2\ell/d_h}") == ["\\theta'_{\\ell}", "B'", "\\ell", "d_{h}"]
    assert symbols(r"a^K_{r} + e^{\mathrm{i}\varphi} + \mathrm{PE}(p)") == [
        "a^K_{r}",
        "e^",
        "\\mathrm{i}",
        "\\varphi",
        "\\mathrm{PE}",
        "p",
    ]
    assert symbols(r"\begin{aligned} x_p &= e + \sin(p\,\theta_\ell) \end{aligned}") == [
        "x_{p}",
        "e",
        "p",
        "\\theta_{\\ell}",
    ]
    assert math_spans("shape `(b, n_h, s, d_h)` and $s$, not `pe.f(x)`") == ["s", "(b, n_{h}, s, d_{h})"]

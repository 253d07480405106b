// The search page (loaded there only; tools/course_site.py).
//
// 1. Ranking: Sphinx scores a word in any section title like a word in a page's title, and
//    breaks ties by page name, so "ALiBi" listed chapter 6 ("ALiBi: attention with linear
//    biases") third, after pages with an ALiBi section. A page whose own title holds a word of
//    the query as a word ("rope" in "Rotary position embeddings (RoPE)") now comes first.
// 2. Snippets from the article only. Sphinx takes a snippet from the page's role="main"
//    element, which in this theme also holds the toolbar ("Binder", ".md", ".pdf") and the
//    print-only title, so snippets showed toolbar text.
// 3. Formulas in snippets as their plain text: KaTeX writes each formula three times (MathML,
//    its TeX annotation, the drawn HTML), which a snippet showed run together
//    ("−mh |i−j|-m_h\,|i-j|−mh|i−j|"); the MathML's text alone is kept.
const TITLE_BOOST = 30; // more than a word in a section title (15) plus in the text (5)

const queryWords = () =>
  (new URLSearchParams(location.search).get("q") || "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((word) => word.length > 1);

const titleHolds = (title, words) => {
  const own = String(title || "").split(" > ")[0].toLowerCase();
  const titleWords = new Set(own.split(/[^\p{L}\p{N}_]+/u));
  return words.some((word) => titleWords.has(word));
};

if (typeof Scorer !== "undefined") {
  const words = queryWords();
  const previous = Scorer.score;
  Scorer.score = (result) => {
    const score = previous ? previous(result) : result[4];
    return titleHolds(result[1], words) ? score + TITLE_BOOST : score;
  };
}

const plainFormulas = (root) => {
  root.querySelectorAll(".katex").forEach((formula) => {
    const mathml = formula.querySelector(".katex-mathml math");
    if (!mathml) return;
    mathml.querySelectorAll("annotation").forEach((a) => a.remove());
    formula.replaceWith(mathml.textContent.replace(/\s+/g, ""));
  });
};

document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  const htmlToText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const article = page.querySelector("article.bd-article");
    if (!article) return htmlToText(htmlString, anchor);
    plainFormulas(article);
    return htmlToText(`<div role="main">${article.innerHTML}</div>`, anchor);
  };
});

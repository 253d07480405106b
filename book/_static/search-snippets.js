// Search result snippets from the article only. Sphinx's search takes a snippet from the page's
// role="main" element, which in this theme also holds the toolbar ("Binder", ".md", ".pdf") and
// the print-only title, so snippets showed toolbar text. Loaded on the search page only.
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  const htmlToText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const article = page.querySelector("article.bd-article");
    if (!article) return htmlToText(htmlString, anchor);
    return htmlToText(`<div role="main">${article.innerHTML}</div>`, anchor);
  };
});

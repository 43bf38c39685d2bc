// Render $...$ and $$...$$ with the locally served KaTeX, on load and after htmx swaps.
(function () {
  function render(root) {
    if (!window.renderMathInElement) return;
    window.renderMathInElement(root || document.body, {
      delimiters: [
        { left: "$$", right: "$$", display: true },
        { left: "\\[", right: "\\]", display: true },
        { left: "$", right: "$", display: false },
        { left: "\\(", right: "\\)", display: false },
      ],
      ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
      throwOnError: false,
    });
  }
  window.renderMath = render;
  document.addEventListener("DOMContentLoaded", function () { render(document.body); });
  document.addEventListener("htmx:afterSwap", function (e) { render(e.target); });
})();

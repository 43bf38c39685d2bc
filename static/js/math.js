// Render $...$ and $$...$$ with the locally served KaTeX, on load and after htmx swaps.
// KaTeX itself (its CSS, fonts and about 270 kB of script) is fetched only once the page shows
// some math: a question page whose formulas arrive with the revealed answer pays for it then,
// not on arrival. The addresses come from this script's data- attributes (math_assets.html),
// so they keep their hashed production names.
(function () {
  var me = document.currentScript;
  var NO_MATH = "no-math";
  var OPTIONS = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false },
    ],
    ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
    // Text a student or candidate wrote (code, output, exception messages, answers) sits in
    // an element of this class and is never typeset: "$\\text{all checks passed}$" in an
    // exception message must read as typed, not draw a fake verdict on an instructor's page.
    ignoredClasses: [NO_MATH],
    throwOnError: false,
  };
  var IGNORED = { SCRIPT: 1, NOSCRIPT: 1, STYLE: 1, TEXTAREA: 1, PRE: 1, CODE: 1, OPTION: 1 };
  var DELIMITER = /\$|\\\(|\\\[/;
  var state = "idle"; // idle, loading, ready or failed
  var pending = [];

  function hasMath(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        for (var el = node.parentElement; el && el !== root.parentElement; el = el.parentElement) {
          if (IGNORED[el.tagName] || el.classList.contains(NO_MATH)) return NodeFilter.FILTER_REJECT;
        }
        return DELIMITER.test(node.nodeValue) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
      },
    });
    return walker.nextNode() !== null;
  }

  function addScript(src) {
    var s = document.createElement("script");
    s.src = src;
    s.async = false; // KaTeX before its auto-render extension
    document.head.appendChild(s);
    return s;
  }

  function load() {
    state = "loading";
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = me.getAttribute("data-katex-css");
    document.head.appendChild(css);
    var katex = addScript(me.getAttribute("data-katex-js"));
    var autoRender = addScript(me.getAttribute("data-auto-render-js"));
    katex.onerror = autoRender.onerror = function () { state = "failed"; };
    autoRender.onload = function () {
      if (!window.renderMathInElement) { state = "failed"; return; }
      state = "ready";
      pending.splice(0).forEach(function (root) {
        if (root.isConnected) window.renderMathInElement(root, OPTIONS);
      });
      typeset();
    };
  }

  // Formulas change the page's widths: site.js marks the boxes that now scroll.
  function typeset() {
    document.dispatchEvent(new CustomEvent("math:typeset"));
  }

  function render(root) {
    root = root || document.body;
    // Auto-render skips ignored classes below the root only: a swap into student text is
    // skipped here.
    if (root.closest && root.closest("." + NO_MATH)) return;
    if (state === "ready") { window.renderMathInElement(root, OPTIONS); typeset(); return; }
    if (state === "failed" || !hasMath(root)) return;
    pending.push(root);
    if (state === "idle") load();
  }

  window.renderMath = render;
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { render(document.body); });
  } else {
    render(document.body);
  }
  document.addEventListener("htmx:afterSwap", function (e) { render(e.target); });
})();

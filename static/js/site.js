// Every page: on a narrow screen, close the <details data-narrow-closed> sections (a long
// exercise statement), so what the visitor came to do (the editor) is one scroll away.
(function () {
  var NARROW = "(max-width: 40rem)";
  document.addEventListener("DOMContentLoaded", function () {
    if (!window.matchMedia || !window.matchMedia(NARROW).matches) return;
    document.querySelectorAll("details[data-narrow-closed][open]").forEach(function (d) {
      d.open = false;
    });
  });
})();

// Every page: a box that scrolls sideways (a wide table, code, a displayed formula on a
// phone) is reachable with the keyboard, so its hidden part can be scrolled to without a
// mouse. Only while it actually scrolls: the same box on a wide screen is no extra Tab stop.
(function () {
  var BOXES = "main pre, main table, main .table-wrap, main .katex-display, main [data-scrolls]";
  var MARK = "data-scroll-focus";
  function scrolls(el) {
    var style = window.getComputedStyle(el);
    var x = (style.overflowX === "auto" || style.overflowX === "scroll") &&
      el.scrollWidth > el.clientWidth + 1;
    var y = (style.overflowY === "auto" || style.overflowY === "scroll") &&
      el.scrollHeight > el.clientHeight + 1;
    return x || y;
  }
  function mark() {
    document.querySelectorAll(BOXES).forEach(function (el) {
      if (scrolls(el)) {
        if (!el.hasAttribute("tabindex")) {
          el.setAttribute("tabindex", "0");
          el.setAttribute(MARK, "");
        }
      } else if (el.hasAttribute(MARK)) {
        el.removeAttribute("tabindex");
        el.removeAttribute(MARK);
      }
    });
  }
  var pending = null;
  function later() {
    if (pending) window.clearTimeout(pending);
    pending = window.setTimeout(mark, 150);
  }
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("load", mark);  // after the fonts and the typeset formulas
  window.addEventListener("resize", later);
  document.addEventListener("htmx:afterSettle", later);
  document.addEventListener("math:typeset", mark);
})();

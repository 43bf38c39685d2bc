// Progressive enhancement for the question page; everything works without it.
(function () {
  // A link to /questions/<slug>/#wrong-<slug> (from a grader diagnosis) opens that rebuttal.
  function openFromHash() {
    if (!location.hash) return;
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!target) return;
    if (target.tagName === "DETAILS") target.open = true;
    if (target.hasAttribute("tabindex") || target.tagName === "DETAILS") target.focus({ preventScroll: false });
  }
  // Guard against double submits while the server assesses the answer.
  document.addEventListener("submit", function (e) {
    var button = e.target.querySelector("button[type=submit]");
    if (button) { setTimeout(function () { button.disabled = true; }, 0); }
  });
  window.addEventListener("hashchange", openFromHash);
  document.addEventListener("DOMContentLoaded", openFromHash);
})();

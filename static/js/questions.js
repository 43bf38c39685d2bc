// Progressive enhancement for the question page; everything works without it.
(function () {
  // A link to /questions/<slug>/#wrong-<slug> (from a grader diagnosis) opens that rebuttal.
  function openFromHash() {
    if (!location.hash) return;
    var id = decodeURIComponent(location.hash.slice(1));
    var target = document.getElementById(id);
    if (!target) {
      // Rebuttals are only on the page after an answer: say so instead of doing nothing.
      var hint = document.getElementById("rebuttal-hint");
      if (hint && id.indexOf("wrong-") === 0) hint.hidden = false;
      return;
    }
    if (target.tagName === "DETAILS") {
      target.open = true;
      var summary = target.querySelector("summary");
      if (summary) summary.focus();
    } else if (target.hasAttribute("tabindex")) {
      target.focus();
    }
  }
  // Guard against double submits while the server assesses the answer.
  document.addEventListener("submit", function (e) {
    var button = e.target.querySelector("button[type=submit]");
    if (button) { setTimeout(function () { button.disabled = true; }, 0); }
  });
  window.addEventListener("hashchange", openFromHash);
  document.addEventListener("DOMContentLoaded", openFromHash);
})();

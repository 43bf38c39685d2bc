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
  // A character counter under every capped answer box (textarea[data-max-chars]). The
  // server refuses an answer over the cap with the same message (data-cap-message); nothing
  // is ever cut, so the counter warns before the candidate submits.
  function length(box) {
    // As the server counts: trimmed, code points, a line break is one character.
    return Array.from(box.value.replace(/\r\n/g, "\n").trim()).length;
  }
  function counterFor(box) {
    var id = box.id + "-counter";
    var counter = document.getElementById(id);
    if (!counter) {
      counter = document.createElement("p");
      counter.id = id;
      counter.className = "char-counter";
      counter.setAttribute("aria-live", "polite");
      box.insertAdjacentElement("afterend", counter);
      var described = box.getAttribute("aria-describedby");
      box.setAttribute("aria-describedby", described ? described + " " + id : id);
    }
    return counter;
  }
  function updateCounter(box) {
    var max = parseInt(box.dataset.maxChars, 10);
    var n = length(box);
    var counter = counterFor(box);
    var over = n > max;
    counter.textContent = over
      ? n + " / " + max + " characters, " + (n - max) + " over. " + box.dataset.capMessage
      : n === max
        ? n + " / " + max + " characters: you have reached the cap."
        : n + " / " + max + " characters";
    counter.classList.toggle("over", over);
    counter.classList.toggle("at-cap", n === max);
    if (over) { box.setAttribute("aria-invalid", "true"); }
    else if (!box.closest(".has-error")) { box.removeAttribute("aria-invalid"); }
    return !over;
  }
  function initCounters() {
    document.querySelectorAll("textarea[data-max-chars]").forEach(function (box) {
      updateCounter(box);
      box.addEventListener("input", function () { updateCounter(box); });
    });
  }
  // Guard against double submits while the server assesses the answer; an answer over the
  // cap is not sent at all (the counter says why, and the text stays as typed).
  document.addEventListener("submit", function (e) {
    var box = e.target.querySelector("textarea[data-max-chars]");
    if (box && !updateCounter(box)) {
      e.preventDefault();
      box.focus();
      return;
    }
    var button = e.target.querySelector("button[type=submit]");
    if (button) { setTimeout(function () { button.disabled = true; }, 0); }
  });
  document.addEventListener("DOMContentLoaded", initCounters);
  window.addEventListener("hashchange", openFromHash);
  document.addEventListener("DOMContentLoaded", openFromHash);
})();

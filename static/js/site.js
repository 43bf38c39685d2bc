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

// The question admin: the slug typed from the title keeps the symbols slugify would drop, as
// the server does (questions.admin.question_slug): "Why divide by √d_k" -> "why-divide-by-sqrt-d_k".
// The admin's prepopulate.js calls the global URLify (urlify.js) on each key; it is wrapped once
// both scripts have run, whatever order the admin's media lists them in.
(function () {
  "use strict";
  var WORDS = { "\u221a": " sqrt ", "\u2248": " about ", "\u00d7": " x ", "\u2192": " to " };
  function wrap() {
    var original = window.URLify;
    if (typeof original !== "function" || original.keepsSymbols) return;
    var wrapped = function (text, numChars, allowUnicode) {
      var kept = String(text).replace(/[\u221a\u2248\u00d7\u2192]/g, function (c) { return WORDS[c]; });
      return original(kept, numChars, allowUnicode);
    };
    wrapped.keepsSymbols = true;
    window.URLify = wrapped;
  }
  wrap();
  document.addEventListener("DOMContentLoaded", wrap);
})();

// The question admin: the slug typed from the title keeps the symbols slugify would drop, as
// the server does (questions.admin.question_slug): "Why divide by √d_k" -> "why-divide-by-sqrt-d_k".
// Loaded after the admin's urlify.js, whose URLify the prepopulated slug calls on each key.
(function () {
  "use strict";
  var WORDS = { "\u221a": " sqrt ", "\u2248": " about ", "\u00d7": " x ", "\u2192": " to " };
  var original = window.URLify;
  if (typeof original !== "function") return;
  window.URLify = function (text, numChars, allowUnicode) {
    var kept = String(text).replace(/[\u221a\u2248\u00d7\u2192]/g, function (c) { return WORDS[c]; });
    return original(kept, numChars, allowUnicode);
  };
})();

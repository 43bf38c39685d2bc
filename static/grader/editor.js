// Progressive enhancement: the textarea works on its own; with JS, Ace replaces it.
(function () {
  function setup() {
    var textarea = document.getElementById("code");
    var holder = document.getElementById("editor");
    var form = document.getElementById("submit-form");
    if (!textarea || !form) return;
    function submit() {
      if (window.htmx) { window.htmx.trigger(form, "submit"); } else { form.requestSubmit(); }
    }
    textarea.addEventListener("keydown", function (e) {
      if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); submit(); }
    });
    // Disabling the Submit button while its request runs drops focus to the page, so a
    // keyboard or screen-reader user would have to hunt for the verdict: the verdict (or the
    // refusal) takes focus when it arrives, each poll's copy again. Someone who submitted from
    // the editor with Ctrl+Enter keeps their place there; the live region reads it out.
    var result = document.getElementById("result");
    var button = document.getElementById("submit-button");
    document.body.addEventListener("htmx:afterSettle", function (e) {
      if (!result || !result.contains(e.target)) return;
      var verdict = result.querySelector(".verdict");
      var active = document.activeElement;
      if (!verdict || (active && active !== document.body && active !== button)) return;
      verdict.setAttribute("tabindex", "-1");
      verdict.focus();
    });
    if (!window.ace || !holder) return;
    // Ace fetches the Python mode when the editor starts. Its address comes from the template
    // ({% static %}), because in production every file has a hashed name: nothing may be found
    // by a file name, neither ace.js's own nor the module's.
    var modeUrl = holder.getAttribute("data-python-mode-url");
    if (modeUrl) window.ace.config.setModuleUrl("ace/mode/python", modeUrl);
    holder.hidden = false;
    textarea.hidden = true;
    var editor = window.ace.edit(holder, {
      mode: "ace/mode/python",
      theme: "ace/theme/textmate",
      value: textarea.value,
      tabSize: 4,
      useSoftTabs: true,
      showPrintMargin: false,
      fontSize: "15px",
      minLines: 16,
      maxLines: 40,
      enableKeyboardAccessibility: true,
      // Ace rewrites the textarea's aria-label on focus ("Cursor at row 1"); this keeps the
      // name in front of it ("Python code editor, Cursor at row 1").
      textInputAriaLabel: "Python code editor",
    });
    editor.renderer.textarea.setAttribute("aria-label", "Python code editor");
    editor.renderer.textarea.setAttribute("aria-describedby", "editor-help");
    // Ace's keyboard mode puts two Tab stops before the text: the gutter, then the content,
    // where only Enter starts editing. Someone following the page's hint typed into neither.
    // Here Tab lands in the text itself (it comes first in the editor), Tab there indents, and
    // Escape (Ace's command) moves focus to the content, from which Tab leaves the editor.
    var text = editor.textInput.getElement();
    var content = editor.renderer.scroller;
    editor.renderer.$gutter.setAttribute("tabindex", "-1");
    content.setAttribute("tabindex", "-1");
    // Chromium makes a scrollable box a Tab stop of its own: Ace's scrollbars (code wider than
    // a phone) would be one more stop after Escape. The cursor scrolls the code instead.
    [editor.renderer.scrollBarV, editor.renderer.scrollBarH].forEach(function (bar) {
      if (bar && bar.element) bar.element.setAttribute("tabindex", "-1");
    });
    text.setAttribute("tabindex", "0");
    // While the content holds focus (after Escape), Shift+Tab must leave backwards too
    // instead of landing in the text again: the text is a Tab stop only once focus moved on.
    content.addEventListener("focus", function () { text.setAttribute("tabindex", "-1"); });
    // Back as soon as focus lands anywhere else, in the same task as the move: a timer could
    // still be waiting when the very next Tab comes (a fast typist, a loaded machine).
    document.addEventListener("focusin", function (e) {
      if (e.target !== content) text.setAttribute("tabindex", "0");
    });
    // Focus dropped to the page (a click outside): no focusin follows.
    content.addEventListener("blur", function () {
      window.setTimeout(function () { text.setAttribute("tabindex", "0"); }, 0);
    });
    editor.session.on("change", function () { textarea.value = editor.getValue(); });
    editor.commands.addCommand({
      name: "submit",
      bindKey: { win: "Ctrl-Enter", mac: "Command-Enter" },
      exec: function () { textarea.value = editor.getValue(); submit(); },
    });
    window.codeEditor = editor;  // for end-to-end tests and the console

    // The verdict names the line its error was raised on (data-error-line, the student's own
    // file only): mark it in the gutter, with the exception as the annotation's text.
    function markError() {
      var verdict = document.querySelector("#result .verdict");
      if (!verdict) return;
      var line = parseInt(verdict.getAttribute("data-error-line") || "", 10);
      var lines = editor.session.getLength();
      if (!(line >= 1 && line <= lines)) {
        editor.session.clearAnnotations();
        return;
      }
      var type = verdict.getAttribute("data-error-type") || "Error";
      var message = verdict.getAttribute("data-error-message") || "";
      editor.session.setAnnotations([{
        row: line - 1,
        column: 0,
        text: message ? type + ": " + message : type,
        type: "error",
      }]);
    }
    document.body.addEventListener("htmx:afterSettle", markError);
    markError();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();

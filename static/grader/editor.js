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

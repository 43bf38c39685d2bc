// Run before Submit: the Run button posts the editor's code and the custom input with htmx
// (hx-post on the button, the fields joined to the form by their form="" attribute).
(function () {
  function editorCode() {
    // The editor copies itself into the textarea on change; read it here too, so a Run right
    // after a programmatic edit never posts stale code.
    return window.codeEditor ? window.codeEditor.getValue() : null;
  }
  document.addEventListener("htmx:configRequest", function (e) {
    var elt = e.detail.elt;
    if (!elt || elt.id !== "run-button") return;
    var code = editorCode();
    if (code !== null) e.detail.parameters.code = code;
  });
  document.addEventListener("keydown", function (e) {
    // Enter in a custom-input field would submit its form for grading (the form's first
    // button): in these fields it means Run.
    var field = e.target;
    if (e.key !== "Enter" || !field.closest || !field.closest(".run-input")) return;
    var button = document.getElementById("run-button");
    if (!button) return;
    e.preventDefault();
    button.click();
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    // The first answer of a Run: bring the panel into view (later polls replace it in place).
    if (e.detail.target && e.detail.target.id === "run-result") {
      e.detail.target.scrollIntoView({ block: "nearest" });
    }
  });
})();

// The deep-linking answer goes back to the platform by itself (the button stays for a browser
// without scripts); after a dynamic registration the platform is told it may close its frame.
"use strict";
(function () {
  const form = document.getElementById("lti-deep-link-return");
  if (form) {
    form.submit();
  }
  if (document.getElementById("lti-registered") && window.parent !== window) {
    window.parent.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
  }
})();

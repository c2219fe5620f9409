// Small helpers for Brain's pages. Every page works without them: a copy button stays hidden,
// and a form that asks for confirmation is confirmed on a page of its own instead of in a dialog.
(function () {
  "use strict";

  function copyWithSelection(text) {
    // For pages served over plain HTTP on a non-loopback address, where navigator.clipboard is absent.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.top = "0";
    area.style.left = "0";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    document.body.removeChild(area);
    return copied ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        return copyWithSelection(text);
      });
    }
    return copyWithSelection(text);
  }

  function say(button, words) {
    var status = button.parentNode.querySelector(".copy-status");
    if (!status) return;
    status.textContent = words;
    window.clearTimeout(button._brainTimer);
    button._brainTimer = window.setTimeout(function () { status.textContent = ""; }, 4000);
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(source.textContent.trim()).then(
        function () { say(button, "Copied."); },
        function () { say(button, "Could not copy: select the text and copy it by hand."); }
      );
    });
  });

  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) {
        event.preventDefault();
        return;
      }
      var field = form.querySelector("input[name=confirm]");
      if (field) field.value = "yes";
    });
  });
})();

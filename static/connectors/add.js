// The Connectors page's "Add a connection": the kind is chosen first, and only that kind's fields
// are shown (the others are hidden and disabled, so nothing of theirs is sent). Without JavaScript,
// "Show its fields" asks the page again for the chosen kind.
(function () {
  "use strict";
  var choice = document.querySelector("[data-kind-choice]");
  var form = document.querySelector("[data-kind-form]");
  if (!choice || !form) return;
  var value = form.querySelector("[data-kind-value]");
  document.querySelectorAll("[data-without-script]").forEach(function (button) { button.hidden = true; });

  function show(kind) {
    value.value = kind;
    form.hidden = !kind;
    form.querySelectorAll("fieldset[data-kind]").forEach(function (fields) {
      var mine = fields.dataset.kind === kind;
      fields.hidden = !mine;
      fields.disabled = !mine;
    });
  }

  choice.addEventListener("change", function () { show(choice.value); });
  show(choice.value);
})();

// The Add knowledge page: each item's status follows its ingestion until it is ready or failed,
// Retry queues a failed one again, and files past the limits are pointed out before sending.
(function () {
  "use strict";
  var EVERY_MS = 1500;
  var WAITING_EVERY_MS = 5000; // a paused or out-of-usage organisation changes slowly
  var timer = null;

  function show(item, doc) {
    item.dataset.status = doc.status;
    var label = item.querySelector("[data-role=label]");
    label.textContent = doc.label;
    label.className = "badge badge-" + doc.status;
    item.querySelector("[data-role=detail]").textContent = doc.detail;
    item.querySelector("[data-role=retry]").hidden = !doc.can_retry;
    var link = item.querySelector("[data-role=link]");
    if (link && doc.url) { link.href = doc.url; link.parentNode.hidden = false; }
  }

  function pending() {
    return Array.prototype.filter.call(document.querySelectorAll("#added-items .item"), function (item) {
      return item.dataset.status !== "ready" && item.dataset.status !== "failed" && item.dataset.statusUrl;
    });
  }

  function check(item) {
    return fetch(item.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (response.status === 404) {
          item.dataset.statusUrl = ""; // gone, or no longer readable: stop asking
          return null;
        }
        return response.ok ? response.json() : null;
      })
      .then(function (doc) { if (doc) { show(item, doc); } })
      .catch(function () { /* offline for a moment: the next round asks again */ });
  }

  function poll() {
    timer = null;
    var items = pending();
    if (!items.length) { return; }
    Promise.all(items.map(check)).then(function () {
      var left = pending();
      if (!left.length) { return; }
      var onlyWaiting = left.every(function (item) { return item.dataset.status === "waiting"; });
      timer = setTimeout(poll, onlyWaiting ? WAITING_EVERY_MS : EVERY_MS);
    });
  }

  function start() {
    if (timer === null) { timer = setTimeout(poll, EVERY_MS); }
  }

  document.querySelectorAll("#added-items [data-role=retry]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var item = form.closest(".item");
      fetch(form.action, {
        method: "POST",
        body: new FormData(form), // carries the CSRF token
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      })
        .then(function (response) { return response.json(); })
        .then(function (doc) {
          if (doc.status) { show(item, doc); start(); }
          else if (doc.error) { item.querySelector("[data-role=detail]").textContent = doc.error; }
        })
        .catch(function () { form.submit(); });
    });
  });

  var input = document.getElementById("id_files");
  var warning = document.getElementById("files-check");
  if (input && warning) {
    input.addEventListener("change", function () {
      var maxFiles = Number(input.dataset.maxFiles), maxBytes = Number(input.dataset.maxBytes);
      var large = Array.prototype.filter.call(input.files, function (file) { return file.size > maxBytes; });
      var problems = [];
      if (input.files.length > maxFiles) {
        problems.push("Choose at most " + maxFiles + " files at a time (you chose " + input.files.length + ").");
      }
      if (large.length) {
        problems.push(large.map(function (file) { return file.name; }).join(", ") +
          (large.length === 1 ? " is" : " are") + " larger than " + input.dataset.limit +
          ", the most one file may be; " + (large.length === 1 ? "it" : "they") + " will not be added.");
      }
      warning.textContent = problems.join(" ");
      warning.hidden = !problems.length;
    });
  }

  start();
})();

// The Jobs page without reloads: "Run now" is sent in the background, and while a run is queued or
// running the recent runs are asked for again every few seconds, so the run is seen arriving and
// finishing. Without JavaScript the buttons post and the page reloads, as before.
(function () {
  "use strict";
  var EVERY_MS = 2500;
  var FOR_MS = 15 * 60 * 1000; // a run that takes longer is left to a reload
  var said = document.getElementById("job-said");

  function say(text, ok) {
    if (!said) return;
    said.textContent = text;
    said.className = "notice " + (ok ? "success" : "error");
    said.hidden = false;
  }

  function busy(box) {
    return box.querySelector('[data-run-status="queued"], [data-run-status="running"]') !== null;
  }

  function watch(box) {
    if (box.dataset.watching) return;
    box.dataset.watching = "1";
    var until = Date.now() + FOR_MS;
    function again() {
      fetch(box.dataset.runsUrl, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
        .then(function (answer) { return answer.ok ? answer.text() : Promise.reject(answer.status); })
        .then(function (html) {
          box.innerHTML = html;
          if (busy(box) && Date.now() < until) { setTimeout(again, EVERY_MS); } else { delete box.dataset.watching; }
        })
        .catch(function () { delete box.dataset.watching; });
    }
    setTimeout(again, EVERY_MS);
  }

  document.querySelectorAll("form[data-run-now]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var box = form.closest("section.job-org").querySelector(".job-runs");
      fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        credentials: "same-origin",
        headers: { "X-Requested-With": "fetch" },
      })
        .then(function (answer) { return answer.json(); })
        .then(function (body) {
          say(body.message, body.ok);
          if (body.ok && box) { delete box.dataset.watching; watch(box); }
        })
        .catch(function () { form.submit(); });
    });
  });

  document.querySelectorAll(".job-runs").forEach(function (box) { if (busy(box)) watch(box); });
})();

// The Jobs page without reloads: "Run now" is sent in the background, and while a run is queued or
// running the page asks the status endpoint (jobs/status/ORG/) again every few seconds and puts
// what it answers in place: each job's "Last run" cell and the recent runs. So the run is seen
// arriving and finishing in its job's row and among the runs. Without JavaScript the buttons post
// and the page reloads, as before.
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

  function busy(section) {
    var under = '[data-run-status="queued"], [data-run-status="running"], [data-job-status="queued"], [data-job-status="running"]';
    return section.querySelector(under) !== null;
  }

  function show(section, box, answer) {
    box.innerHTML = answer.runs;
    Object.keys(answer.last_runs).forEach(function (id) {
      var cell = section.querySelector('[data-last-run="' + id + '"]');
      if (cell) cell.innerHTML = answer.last_runs[id];
    });
  }

  function watch(section) {
    var box = section.querySelector(".job-runs");
    if (!box || box.dataset.watching) return;
    box.dataset.watching = "1";
    var until = Date.now() + FOR_MS;
    function again() {
      fetch(box.dataset.statusUrl, { credentials: "same-origin", headers: { "X-Requested-With": "fetch", Accept: "application/json" } })
        .then(function (answer) { return answer.ok ? answer.json() : Promise.reject(answer.status); })
        .then(function (answer) {
          show(section, box, answer);
          if (answer.busy && Date.now() < until) { setTimeout(again, EVERY_MS); } else { delete box.dataset.watching; }
        })
        .catch(function () { delete box.dataset.watching; });
    }
    again();
  }

  document.querySelectorAll("form[data-run-now]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var section = form.closest("section.job-org");
      fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        credentials: "same-origin",
        headers: { "X-Requested-With": "fetch" },
      })
        .then(function (answer) { return answer.json(); })
        .then(function (body) {
          say(body.message, body.ok);
          if (body.ok && section) {
            var box = section.querySelector(".job-runs");
            if (box) delete box.dataset.watching;
            watch(section);
          }
        })
        .catch(function () { form.submit(); });
    });
  });

  document.querySelectorAll("section.job-org").forEach(function (section) { if (busy(section)) watch(section); });
})();

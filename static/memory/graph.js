// Pan and zoom for the neighbourhood drawing on an entity page. The drawing is complete without
// this script: every node is a link. With it, the wheel or the buttons zoom, dragging pans, and a
// click that did not drag still follows the node's link.
(function () {
  "use strict";

  var STEP = 1.25;
  var MOST = 6; // the furthest a drawing zooms in, as a multiple of its own size

  function box(svg) {
    var parts = svg.getAttribute("viewBox").split(/\s+/).map(Number);
    return { x: parts[0], y: parts[1], w: parts[2], h: parts[3] };
  }

  function set(svg, b) {
    svg.setAttribute("viewBox", [b.x, b.y, b.w, b.h].map(function (n) { return n.toFixed(1); }).join(" "));
  }

  function button(label, title, act) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.setAttribute("aria-label", title);
    b.title = title;
    b.addEventListener("click", act);
    return b;
  }

  function attach(figure) {
    var svg = figure.querySelector("svg.graph");
    if (!svg || !svg.getAttribute("viewBox")) return;
    var original = svg.getAttribute("viewBox");
    var home = box(svg);

    function zoom(factor, cx, cy) {
      var b = box(svg);
      var w = Math.min(home.w * 2, Math.max(home.w / MOST, b.w / factor));
      var h = w * (home.h / home.w);
      var px = cx === undefined ? 0.5 : cx;
      var py = cy === undefined ? 0.5 : cy;
      set(svg, { x: b.x + (b.w - w) * px, y: b.y + (b.h - h) * py, w: w, h: h });
    }

    var tools = document.createElement("div");
    tools.className = "graph-tools";
    tools.appendChild(button("+", "Zoom in", function () { zoom(STEP); }));
    tools.appendChild(button("−", "Zoom out", function () { zoom(1 / STEP); }));
    tools.appendChild(button("Reset", "Show the whole drawing", function () { svg.setAttribute("viewBox", original); }));
    figure.insertBefore(tools, svg);

    svg.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = svg.getBoundingClientRect();
      zoom(event.deltaY < 0 ? STEP : 1 / STEP, (event.clientX - rect.left) / rect.width, (event.clientY - rect.top) / rect.height);
    }, { passive: false });

    var drag = null;
    svg.addEventListener("pointerdown", function (event) {
      drag = { x: event.clientX, y: event.clientY, start: box(svg), moved: false };
    });
    svg.addEventListener("pointermove", function (event) {
      if (!drag) return;
      var dx = event.clientX - drag.x;
      var dy = event.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) svg.setPointerCapture(event.pointerId);
      drag.moved = true;
      var rect = svg.getBoundingClientRect();
      var s = drag.start;
      set(svg, { x: s.x - dx * s.w / rect.width, y: s.y - dy * s.h / rect.height, w: s.w, h: s.h });
    });
    function stop() { window.setTimeout(function () { drag = null; }, 0); }
    svg.addEventListener("pointerup", stop);
    svg.addEventListener("pointercancel", stop);
    // A drag ends with a click on whatever is under the pointer: that click is not a choice.
    svg.addEventListener("click", function (event) {
      if (drag && drag.moved) event.preventDefault();
    }, true);
    svg.classList.add("pannable");
  }

  document.querySelectorAll("[data-pan-zoom]").forEach(attach);
})();

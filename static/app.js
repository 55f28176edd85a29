// Autoapp: the few lines of script the pages need. "Reviewing as" is
// remembered in this browser, so each confirmation names its reviewer.
(function () {
  "use strict";
  var key = "autoapp.reviewingAs";
  function fill(root) {
    var name = "";
    try { name = window.localStorage.getItem(key) || ""; } catch (e) { return; }
    root.querySelectorAll('input[name="by"]').forEach(function (input) {
      if (!input.value) { input.value = name; }
    });
  }
  document.addEventListener("input", function (ev) {
    var t = ev.target;
    if (t && t.name === "by") {
      try { window.localStorage.setItem(key, t.value); } catch (e) { /* private mode */ }
      document.querySelectorAll('input[name="by"]').forEach(function (input) {
        if (input !== t) { input.value = t.value; }
      });
    }
  });
  document.addEventListener("DOMContentLoaded", function () { fill(document); });
  document.addEventListener("htmx:afterSwap", function (ev) { fill(ev.target); });
})();

// A button with data-copy puts its text on the clipboard: a long id shown
// short keeps its whole value there.
(function () {
  "use strict";
  document.addEventListener("click", function (ev) {
    var b = ev.target && ev.target.closest ? ev.target.closest("button[data-copy]") : null;
    if (!b) { return; }
    ev.preventDefault();
    var done = function () { b.setAttribute("data-copied", "true"); b.textContent = "copied"; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(b.getAttribute("data-copy")).then(done, function () {});
    }
  });
})();

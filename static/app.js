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

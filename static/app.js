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

// Notifications in this browser: once the owner turned them on (and the
// browser allowed them), every open tab asks the console every few seconds
// for the notices after the last one shown here, and raises each as a
// notification whose click opens the place to act. The last id shown is
// kept for every tab of the browser, and each notification is tagged with
// its notice, so none repeats.
(function () {
  "use strict";
  var onKey = "autoapp.notify", lastKey = "autoapp.noticeLast";
  function get(k) { try { return window.localStorage.getItem(k); } catch (e) { return null; } }
  function set(k, v) { try { window.localStorage.setItem(k, v); } catch (e) { /* private mode */ } }
  function supported() { return "Notification" in window; }
  function on() { return supported() && get(onKey) === "on" && Notification.permission === "granted"; }
  function say() {
    var p = document.querySelector("[data-notify-state]");
    if (!p) { return; }
    var state, text;
    if (!supported()) {
      state = "unsupported"; text = "This browser cannot show notifications.";
    } else if (Notification.permission === "denied") {
      state = "blocked"; text = "This browser blocks notifications from this page: allow them in its site settings, then turn them on here.";
    } else if (on()) {
      state = "on"; text = "On in this browser: while any Autoapp tab is open, you get a notification when a run needs you.";
    } else {
      state = "off"; text = "Off in this browser.";
    }
    p.setAttribute("data-notify-state", state);
    p.textContent = text;
  }
  function poll() {
    if (!on() || !document.querySelector('[data-testid="rail"]')) { return; }
    var last = get(lastKey);
    var url = "/notices" + (last ? "?after=" + encodeURIComponent(last) : "");
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (d) {
      if (!d) { return; }
      if (!last) { set(lastKey, String(d.last)); return; }
      d.notices.forEach(function (n) {
        var seen = parseInt(get(lastKey) || "0", 10);
        if (n.id <= seen) { return; }
        set(lastKey, String(n.id));
        var note = new Notification(n.title, { body: n.sentence, tag: "autoapp-notice-" + n.id });
        note.onclick = function () { window.focus(); window.location.href = n.link; note.close(); };
      });
    }).catch(function () { /* the console is restarting: ask again later */ });
  }
  document.addEventListener("click", function (ev) {
    var b = ev.target && ev.target.closest ? ev.target.closest("button[data-notify]") : null;
    if (!b) { return; }
    if (b.getAttribute("data-notify") === "off") { set(onKey, "off"); say(); return; }
    if (!supported()) { say(); return; }
    Notification.requestPermission().then(function (p) {
      if (p === "granted") { set(onKey, "on"); poll(); }
      say();
    });
  });
  document.addEventListener("DOMContentLoaded", function () { say(); poll(); });
  window.setInterval(poll, 3000);
})();

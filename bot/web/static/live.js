// Keeps a page current without reloading it: every 30 seconds, while the page is shown and
// nothing is being typed, fetch it again and put in the sections that changed. The fetched
// page is our own server's escaped HTML, parsed inertly (DOMParser runs no script) and taken
// over node by node. Without JavaScript the page reads the same, reloaded by hand.
(function () {
  "use strict";
  var EVERY = 30000;
  function typing() {
    var el = document.activeElement;
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA") && el.value !== "";
  }
  function refresh() {
    if (document.hidden || typing()) { return; }
    fetch(location.href, {cache: "no-store", credentials: "same-origin", referrerPolicy: "no-referrer"})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("main section[id]").forEach(function (old) {
          if (old.id === "send" || old.id === "quick") { return; }
          var now = fresh.getElementById(old.id);
          if (now && now.innerHTML !== old.innerHTML) {
            old.replaceWith(document.importNode(now, true));
          }
        });
      })
      .catch(function () { /* offline for a moment: the next round tries again */ });
  }
  setInterval(refresh, EVERY);
})();

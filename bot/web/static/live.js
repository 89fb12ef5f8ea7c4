// Keeps a page current without reloading it (issue 30, part 4). The page's event stream
// (body[data-stream]) says "changed" when something it shows has changed; the page then
// fetches itself and puts in the sections that differ. Where the stream cannot be held (an
// in-app browser that cuts it, a server that only reads) the page fetches itself every 30
// seconds instead. The fetched page is our own server's escaped HTML, parsed inertly
// (DOMParser runs no script) and taken over node by node. Deadlines count down each minute
// on the server's clock. Without JavaScript the page reads the same, reloaded by hand.
(function () {
  "use strict";
  var EVERY = 30000;
  var body = document.body;
  var skew = Number(body.getAttribute("data-now") || Date.now()) - Date.now();
  var pending = false;
  var busy = false;
  var polling = null;

  function typing() {
    var el = document.activeElement;
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA") && el.value !== "";
  }

  function refresh() {
    if (document.hidden || typing() || busy) { pending = true; return; }
    pending = false;
    busy = true;
    fetch(location.href, {cache: "no-store", credentials: "same-origin", referrerPolicy: "no-referrer"})
      .then(function (r) {
        if (r.status === 403 || r.status === 404) { stop(); return null; }
        // a page that now leads elsewhere (a player's key once their game starts: the seat's
        // page) is followed
        if (r.redirected && r.ok) { stop(); location.assign(r.url); return null; }
        return r.ok ? r.text() : null;
      })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var old = document.querySelectorAll("main section[id], main p[id]");
        old.forEach(function (el) {
          if (el.id === "send" || el.id === "quick" || el.id === "push") { return; }
          var now = fresh.getElementById(el.id);
          if (now && now.innerHTML !== el.innerHTML) {
            el.replaceWith(document.importNode(now, true));
          }
        });
        var phase = document.querySelector("main .phase");
        var newPhase = fresh.querySelector("main .phase");
        if (phase && newPhase) { phase.textContent = newPhase.textContent; }
        var skewNow = fresh.body.getAttribute("data-now");
        if (skewNow) { skew = Number(skewNow) - Date.now(); }
        tick();
      })
      .catch(function () { /* offline for a moment: the next change or round tries again */ })
      .then(function () {
        busy = false;
        if (pending) { setTimeout(refresh, 200); }
      });
  }

  var source = null;
  function stop() {
    if (source) { source.close(); source = null; }
    if (polling) { clearInterval(polling); polling = null; }
  }
  function poll() {
    if (!polling) { polling = setInterval(refresh, EVERY); }
  }

  var stream = body.getAttribute("data-stream");
  if (stream && window.EventSource) {
    var opened = false;
    var failures = 0;
    source = new EventSource(stream);
    source.addEventListener("hello", function () {
      if (opened) { refresh(); }  // back after a break: a change may have been missed
      opened = true;
      failures = 0;
      body.setAttribute("data-live", "on");  // (the stream is open: what a test waits for)
      if (polling) { clearInterval(polling); polling = null; }
    });
    source.addEventListener("changed", refresh);
    source.onerror = function () {
      failures += 1;
      body.setAttribute("data-live", "off");
      poll();  // until the stream is back (EventSource tries again by itself)
      if (source && (source.readyState === 2 || failures > 5)) { source.close(); source = null; }
    };
  } else {
    poll();
  }
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && pending) { refresh(); }
  });
  document.addEventListener("focusout", function () {
    if (pending) { setTimeout(refresh, 100); }
  });

  // countdowns: <span data-due-ms> holds the instant; the words come from body[data-*]
  function words(name, values) {
    var text = body.getAttribute("data-" + name) || "";
    Object.keys(values).forEach(function (k) { text = text.split("{" + k + "}").join(values[k]); });
    return text;
  }
  function tick() {
    var now = Date.now() + skew;
    document.querySelectorAll("[data-due-ms]").forEach(function (el) {
      var due = Number(el.getAttribute("data-due-ms"));
      if (!due) { return; }
      var minutes = Math.floor((due - now) / 60000);
      var text;
      if (minutes < 0) {
        text = words("due", {});
      } else {
        var h = Math.floor(minutes / 60);
        var m = minutes % 60;
        text = words("left", {left: h ? words("hm", {h: h, m: m}) : words("m", {m: m})});
      }
      if (el.textContent !== text) { el.textContent = text; }
    });
  }
  tick();
  setInterval(tick, 15000);

  // 提醒我: a push subscription through our service worker (/sw.js), kept by the server
  var push = document.getElementById("push");
  if (push && "serviceWorker" in navigator && "PushManager" in window && window.fetch) {
    var said = push.querySelector(".push-said");
    var on = document.getElementById("push-on");
    var off = document.getElementById("push-off");
    var tell = function (text) { said.textContent = text; };
    var key = function (b64) {
      var s = (b64 + "===".slice((b64.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
      var raw = atob(s);
      var out = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i += 1) { out[i] = raw.charCodeAt(i); }
      return out;
    };
    var send = function (url, sub) {
      var json = sub.toJSON();
      var form = new URLSearchParams();
      form.set("endpoint", json.endpoint || "");
      form.set("p256dh", (json.keys || {}).p256dh || "");
      form.set("auth", (json.keys || {}).auth || "");
      form.set("nonce", String(Date.now()));
      return fetch(url, {method: "POST", body: form, credentials: "same-origin", referrerPolicy: "no-referrer"})
        .then(function (r) { return r.json(); });
    };
    var shown = function (subscribed) { on.hidden = subscribed; off.hidden = !subscribed; };
    push.hidden = false;
    navigator.serviceWorker.register("/sw.js").then(function (reg) {
      reg.pushManager.getSubscription().then(function (sub) { shown(!!sub); });
      on.addEventListener("click", function () {
        Notification.requestPermission().then(function (perm) {
          if (perm !== "granted") { tell(push.getAttribute("data-denied")); return null; }
          return reg.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: key(push.getAttribute("data-key"))})
            .then(function (sub) { return send(push.getAttribute("data-url"), sub); })
            .then(function (answer) { tell(answer.text); shown(!!answer.ok); });
        }).catch(function () { tell(push.getAttribute("data-failed")); });
      });
      off.addEventListener("click", function () {
        reg.pushManager.getSubscription().then(function (sub) {
          if (!sub) { shown(false); return null; }
          return send(push.getAttribute("data-url") + "/remove", sub).then(function (answer) {
            tell(answer.text);
            return sub.unsubscribe();
          }).then(function () { shown(false); });
        }).catch(function () { tell(push.getAttribute("data-failed")); });
      });
    }).catch(function () { tell(push.getAttribute("data-unsupported")); });
  } else if (push) {
    push.hidden = false;
    push.querySelector("#push-on").hidden = true;
    push.querySelector(".push-said").textContent = push.getAttribute("data-unsupported");
  }
})();

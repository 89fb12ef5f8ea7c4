// Our service worker (issue 30, part 5): shows a push reminder and opens its page when
// tapped. A reminder says only "CODE：有新消息，点开查看" and carries the page's link; what
// the message says stays on the page. Nothing is cached: every page is fetched fresh.
"use strict";
self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (event) { event.waitUntil(self.clients.claim()); });
self.addEventListener("push", function (event) {
  var data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = {}; }
  event.waitUntil(self.registration.showNotification(data.title || "", {
    body: data.body || "",
    tag: data.tag || "",
    renotify: true,
    data: {url: data.url || "/"}
  }));
});
self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = (event.notification.data || {}).url || "/";
  event.waitUntil(self.clients.matchAll({type: "window", includeUncontrolled: true}).then(function (list) {
    for (var i = 0; i < list.length; i += 1) {
      if (list[i].url === url && "focus" in list[i]) { return list[i].focus(); }
    }
    return self.clients.openWindow(url);
  }));
});

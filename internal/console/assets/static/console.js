// tether console: follow the server's change stream and refresh the page's
// content in place, without a reload; say when the stream is lost.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live");
  if (!url || !window.EventSource) { return; }
  var banner = document.getElementById("conn");
  var live = document.getElementById("live");
  var pending = null;
  var inflight = false;
  document.body.setAttribute("data-refreshes", "0");

  function refresh() {
    pending = null;
    if (inflight) { schedule(); return; }
    inflight = true;
    fetch(window.location.href, { headers: { "Accept": "text/html" }, cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("content");
        var cur = document.getElementById("content");
        if (next && cur) {
          cur.replaceChildren.apply(cur, Array.prototype.slice.call(next.childNodes).map(function (n) { return document.adoptNode(n); }));
          document.title = doc.title;
          var n = parseInt(document.body.getAttribute("data-refreshes"), 10) + 1;
          document.body.setAttribute("data-refreshes", String(n));
        }
      })
      .catch(function () { banner.hidden = false; })
      .then(function () { inflight = false; });
  }

  function schedule() {
    if (pending === null) { pending = setTimeout(refresh, 250); }
  }

  var es = new EventSource(url);
  var wasLost = false;
  es.addEventListener("ready", function () {
    banner.hidden = true;
    live.hidden = false;
    if (wasLost) { wasLost = false; schedule(); }
  });
  es.addEventListener("changed", schedule);
  es.onerror = function () {
    banner.hidden = false;
    live.hidden = true;
    wasLost = true;
  };
})();

// The sweep dashboard's small conveniences, on top of a page that works without them:
// the progress box polls its fragment while the sweep runs (and the results below it
// refresh as configurations arrive); the recall chart is inlined so that hovering a point
// names its configuration and clicking selects it; the threshold slider fetches the
// selected configuration's figures at the new threshold without reloading the page;
// [ and ] move the slider, d dims the dominated points, j and k walk the table.
(function () {
  "use strict";
  var page = document.querySelector('[data-testid="sweep"]');

  function typing(el) {
    return el && (el.tagName === "INPUT" && !/^(radio|checkbox|submit|button|range)$/.test(el.type) ||
      el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }

  function get(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (r) {
      if (!r.ok) throw new Error(r.status + " " + r.statusText);
      return r.text();
    });
  }

  function parseHTML(text) {
    return new DOMParser().parseFromString(text, "text/html");
  }

  // --- Progress: poll while running; refresh the results as they arrive. ---
  function poll() {
    var box = document.getElementById("sweep-progress");
    if (!box || !/^(running|queued)$/.test(box.dataset.state)) return;
    setTimeout(function () {
      get(box.dataset.poll).then(function (html) {
        var next = parseHTML(html).getElementById("sweep-progress");
        if (!next) return;
        var doneBefore = box.dataset.done;
        box.replaceWith(document.importNode(next, true));
        if (!/^(running|queued)$/.test(next.dataset.state)) {
          // Finished: the whole page changes (actions, summary). A notice is shown once.
          var u = new URL(window.location.href);
          u.searchParams.delete("notice");
          window.location.replace(u.pathname + u.search + u.hash);
          return;
        }
        if (next.dataset.done !== doneBefore) refreshResults();
        poll();
      }).catch(function () { setTimeout(poll, 3000); });
    }, 1000);
  }

  // The results below the box are fetched again at most every five seconds while new ones
  // arrive: reading and drawing thousands of results costs the server more than a poll.
  var lastRefresh = 0, refreshing = false;
  function refreshResults() {
    var area = document.getElementById("sweep-results");
    if (!area || refreshing || Date.now() - lastRefresh < 5000) return;
    refreshing = true;
    lastRefresh = Date.now();
    get(window.location.href).then(function (html) {
      var next = parseHTML(html).getElementById("sweep-results");
      if (!next) return;
      area.replaceWith(document.importNode(next, true));
      enhance();
    }).finally(function () { refreshing = false; });
  }

  // --- The recall chart: inline it so points hover and click. ---
  function selectHref(config) {
    var u = new URL(window.location.href);
    u.searchParams.set("config", config);
    u.searchParams.delete("t");
    u.searchParams.delete("notice");
    u.hash = "selected";
    return u.pathname + u.search + u.hash;
  }

  function inlineTradeoff() {
    var fig = document.querySelector('[data-testid="tradeoff-chart"]');
    if (!fig || fig.dataset.inlined) return;
    fig.dataset.inlined = "pending";
    fetch(fig.dataset.src, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, "image/svg+xml");
      var svg = doc.documentElement;
      if (!svg || svg.nodeName !== "svg") return;
      svg = document.importNode(svg, true);
      svg.setAttribute("role", "img");
      svg.classList.add("inline-chart");
      // Points are not tab stops (a sweep has thousands): the table below, and j and k,
      // select from the keyboard.
      var old = fig.querySelector("svg, img");
      if (old) old.replaceWith(svg); else fig.prepend(svg);
      fig.dataset.inlined = "yes";
    }).catch(function () {
      // Not inlined: show it as an image (no hover, no clicks; the table selects).
      if (fig.querySelector("img, svg")) return;
      var img = document.createElement("img");
      img.src = fig.dataset.src;
      img.alt = fig.dataset.alt || "";
      fig.prepend(img);
    });
  }

  document.addEventListener("click", function (e) {
    var g = e.target.closest && e.target.closest("figure.chart svg g.point");
    if (!g) return;
    e.preventDefault();
    window.location.href = selectHref(g.dataset.config);
  });

  // --- The threshold slider: fetch the live fragment, redraw the selection's charts. ---
  var timer = 0, seq = 0;
  function sliderChanged(slider) {
    var form = slider.form, out = form.querySelector("output");
    if (out) out.textContent = Number(slider.value).toFixed(2);
    clearTimeout(timer);
    timer = setTimeout(function () { applyThreshold(form, slider.value); }, 120);
  }

  function applyThreshold(form, t) {
    var params = new URLSearchParams(new FormData(form));
    params.set("t", t);
    var mine = ++seq;
    get(form.dataset.live + "?" + params.toString()).then(function (html) {
      if (mine !== seq) return; // a later move already asked
      var next = parseHTML(html).getElementById("sweep-live");
      var live = document.getElementById("sweep-live");
      if (next && live) live.replaceWith(document.importNode(next, true));
      // The heading names the configuration at the slider's threshold.
      var label = document.querySelector('[data-testid="sel-label"]'), words = document.querySelector('[data-testid="sel-words"]');
      if (next && label && next.dataset.label) label.textContent = next.dataset.label;
      if (next && words && next.dataset.words) words.textContent = next.dataset.words;
      ["scurve-chart", "category-chart", "histogram-chart"].forEach(function (id) {
        var fig = document.querySelector('[data-testid="' + id + '"]');
        if (!fig) return;
        fig.querySelectorAll("img, a").forEach(function (el) {
          var attr = el.tagName === "IMG" ? "src" : "href";
          var u = new URL(el.getAttribute(attr), window.location.href);
          u.searchParams.set("t", t);
          el.setAttribute(attr, u.pathname + u.search);
        });
      });
      var u = new URL(window.location.href);
      u.searchParams.set("t", t);
      u.searchParams.set("config", params.get("config"));
      u.searchParams.delete("notice");
      history.replaceState(null, "", u.pathname + u.search + u.hash);
    }).catch(function () {
      form.requestSubmit(); // fall back to the page without scripts
    });
  }

  document.addEventListener("input", function (e) {
    if (e.target && e.target.id === "threshold" && e.target.type === "range") sliderChanged(e.target);
  });

  function nudge(delta) {
    var s = document.getElementById("threshold");
    if (!s || s.type !== "range") return;
    var v = Math.min(Number(s.max), Math.max(Number(s.min), Math.round((Number(s.value) + delta) * 100) / 100));
    s.value = v.toFixed(2);
    sliderChanged(s);
  }

  function walkTable(step) {
    var rows = Array.prototype.slice.call(document.querySelectorAll('[data-testid="config-row"]'));
    if (!rows.length) return;
    var i = rows.findIndex(function (r) { return r.classList.contains("selected"); });
    var next = rows[Math.min(rows.length - 1, Math.max(0, i + step))];
    var a = next && next.querySelector("a");
    if (a && next !== rows[i]) window.location.href = a.href;
  }

  document.addEventListener("keydown", function (e) {
    if (!page || e.altKey || e.ctrlKey || e.metaKey || typing(document.activeElement)) return;
    if (e.key === "[" || e.key === "]") {
      e.preventDefault();
      nudge(e.key === "]" ? 0.01 : -0.01);
    } else if (e.key === "d") {
      var t = document.querySelector('[data-testid="dim-toggle"]');
      if (t) { e.preventDefault(); window.location.href = t.href; }
    } else if (e.key === "j" || e.key === "k") {
      e.preventDefault();
      walkTable(e.key === "j" ? 1 : -1);
    }
  });

  function enhance() {
    inlineTradeoff();
    var apply = document.querySelector('[data-testid="slider-apply"]');
    if (apply) apply.classList.add("js-hidden");
  }

  enhance();
  poll();
})();

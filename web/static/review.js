// Keyboard review of a cluster, in place: the keys are printed on the buttons. j or ↓
// moves to the next member, ↑ to the previous; d (or a click on a member's name) opens
// its text against the keeper's under its row, and closes it; q approves the removal, e
// excludes the member from removal; k opens "make keeper" (type why, Enter); Shift+Q and
// Shift+E decide the whole cluster (a chained cluster asks first); Ctrl+Z undoes (app.js
// submits the undo form); Enter goes to the next cluster; Esc closes what is open.
//
// A decision, an undo or opening a text does not load a page: the form is sent with
// fetch, the server answers with the page's "review" part (X-Fragment: review), and it
// replaces the old one. The status line says what happened; the decided row stays where
// it was on the screen and the next undecided one is focused under it. Nothing fires
// while a text field has focus or with Alt, Meta or Ctrl. Without JavaScript every key is
// a button or a link, and each answers with the whole page.
(function () {
  "use strict";
  var region = document.getElementById("review");
  if (!region) return;
  var rows = [], at = -1, busy = false, queued = null;

  function typing(el) {
    return el && (el.tagName === "INPUT" && !/^(radio|checkbox|submit|button|hidden)$/.test(el.type) ||
      el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  function status(text, isError) {
    var box = region.querySelector('[data-testid="review-status"]');
    if (!box) return;
    box.innerHTML = "";
    var p = document.createElement("p");
    p.className = isError ? "error" : "ok";
    p.setAttribute("data-testid", isError ? "cluster-error" : "cluster-message");
    p.textContent = text;
    box.appendChild(p);
  }
  function scrollNear(el) {
    if (!el) return;
    var r = el.getBoundingClientRect(), bar = region.querySelector(".review-status");
    var bottom = window.innerHeight - (bar ? bar.getBoundingClientRect().height : 0);
    if (r.top < 0 || r.bottom > bottom) el.scrollIntoView({ block: r.height > bottom / 2 ? "start" : "center" });
  }
  function focusRow(i, keep) {
    if (i < 0 || i >= rows.length) return false;
    if (at >= 0 && rows[at]) { rows[at].classList.remove("focused"); rows[at].removeAttribute("aria-current"); }
    at = i;
    rows[i].classList.add("focused");
    rows[i].setAttribute("aria-current", "true");
    if (!keep) scrollNear(rows[i]);
    return true;
  }
  function bind() {
    rows = Array.prototype.slice.call(region.querySelectorAll("#members tbody tr[data-doc]"));
    var wanted = region.getAttribute("data-focus"), start = -1;
    rows.forEach(function (r, i) { if (start < 0 && wanted !== "0" && r.getAttribute("data-item") === wanted) start = i; });
    rows.forEach(function (r, i) { if (start < 0 && r.getAttribute("data-decision") === "proposed") start = i; });
    at = -1;
    return start >= 0 ? start : Math.min(1, rows.length - 1);
  }
  var first = bind();
  focusRow(first, true);
  if (location.hash && rows[first]) scrollNear(rows[first]);

  function opened() { return region.getAttribute("data-open") === "true"; }
  function rowOf(doc) {
    for (var i = 0; i < rows.length; i++) if (rows[i].getAttribute("data-doc") === doc) return i;
    return -1;
  }

  // swap sends a request for the review part and puts the answer in place. anchor is
  // the row (by document) to keep where it is on the screen; flash marks it decided.
  function swap(url, init, anchor, flash) {
    if (busy) { queued = function () { swap(url, init, anchor, flash); }; status("Still saving the last change…"); return; }
    busy = true;
    var before = null;
    if (anchor) {
      var i = rowOf(anchor);
      if (i >= 0) before = rows[i].getBoundingClientRect().top;
    }
    init = init || {};
    init.credentials = "same-origin";
    init.headers = { "X-Fragment": "review", "Accept": "text/html" };
    fetch(url, init).then(function (res) {
      return res.text().then(function (html) { return { res: res, html: html }; });
    }).then(function (x) {
      var tpl = document.createElement("template");
      tpl.innerHTML = x.html;
      var fresh = tpl.content.getElementById("review");
      if (!fresh) {
        // Not the cluster any more (it was cut away: the list or the manifest), or a
        // refusal the server answers with a page of its own (a role, a missing removal).
        if (x.res.ok && x.res.redirected) { window.location.href = x.res.url; return; }
        status("Refused (" + x.res.status + "): " + (tpl.content.querySelector("main")?.innerText.trim().slice(0, 300) || "reload the page to see why."), true);
        return;
      }
      region.replaceWith(fresh);
      region = fresh;
      var u = new URL(x.res.url);
      u.searchParams.delete("notice");
      history.replaceState(null, "", u.pathname + u.search);
      var start = bind();
      focusRow(start, true);
      if (anchor != null && before != null) {
        var j = rowOf(anchor);
        if (j >= 0) {
          window.scrollBy(0, rows[j].getBoundingClientRect().top - before);
          if (flash) rows[j].classList.add("just-decided");
        }
      }
      var diff = region.querySelector('[data-testid="member-diff"]');
      if (diff && rows[at] && diff.getAttribute("data-doc") === rows[at].getAttribute("data-doc")) {
        // The decided row and the focused one at the top, its text under them: as much of
        // all three as fits.
        var top = rows[at].getBoundingClientRect().top, bottom = diff.getBoundingClientRect().bottom;
        var k = anchor != null ? rowOf(anchor) : -1;
        if (k >= 0 && k !== at) top = Math.min(top, rows[k].getBoundingClientRect().top);
        if (top < 0 || bottom > window.innerHeight) window.scrollBy(0, top - 8);
      } else {
        scrollNear(rows[at]);
      }
    }).catch(function () {
      status("The server did not answer: nothing changed on this page. Try again, or reload.", true);
    }).then(function () {
      busy = false;
      if (queued) { var q = queued; queued = null; q(); }
    });
  }

  function send(form, submitter) {
    var data = new FormData(form, submitter || undefined);
    data.set("open", opened() ? "1" : "");
    var row = form.closest("tr[data-doc]");
    swap(form.action, { method: "POST", body: new URLSearchParams(data) }, row ? row.getAttribute("data-doc") : (rows[at] ? rows[at].getAttribute("data-doc") : null), !!row);
  }

  // Every in-page form (decisions, undo, the whole-cluster verbs) goes through send.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute || !form.hasAttribute("data-inpage") || !region.contains(form)) return;
    e.preventDefault();
    send(form, e.submitter);
  });
  // A member's name, the diff's own links: open, close or change the view in place.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[data-diff]");
    if (!a || !region.contains(a) || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    var row = a.closest("tr[data-doc]");
    if (row) focusRow(rows.indexOf(row), true);
    swap(a.href, null, rows[at] ? rows[at].getAttribute("data-doc") : null, false);
  });

  function toggleDiff() {
    var row = rows[at];
    if (!row) return;
    var link = row.querySelector("a[data-diff]");
    if (!link) { status("The keeper is what the others are read against: j moves to a member."); return; }
    swap(link.href, null, row.getAttribute("data-doc"), false);
  }
  function rowButton(key) { return rows[at] ? rows[at].querySelector('button[data-key="' + key + '"]') : null; }
  function decide(key) {
    var b = rowButton(key);
    if (!b) { status(rows[at] && rows[at].classList.contains("keeper") ? "The keeper stays: q and e decide on the other members (j moves down)." : "Nothing to decide here."); return; }
    send(b.form, b);
  }
  function closeAll() {
    var open = region.querySelectorAll("details[open]");
    for (var i = 0; i < open.length; i++) open[i].open = false;
  }

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey || e.ctrlKey) return;
    if (e.key === "Escape") {
      if (region.querySelector("details[open]")) { closeAll(); if (typing(document.activeElement)) document.activeElement.blur(); e.preventDefault(); }
      return;
    }
    if (typing(document.activeElement)) return;
    var key = e.key;
    if (key === "j" || key === "ArrowDown") { e.preventDefault(); if (!focusRow(at + 1)) status("That was the last member."); return; }
    if (key === "ArrowUp") { e.preventDefault(); focusRow(at - 1); return; }
    if (key === "d" && !e.shiftKey) { e.preventDefault(); toggleDiff(); return; }
    if ((key === "q" || key === "e") && !e.shiftKey) { e.preventDefault(); decide(key); return; }
    if (key === "Q") {
      var ask = region.querySelector("#confirm-chained");
      if (ask) {
        e.preventDefault();
        ask.open = true;
        var firstChoice = ask.querySelector("button");
        ask.scrollIntoView({ block: "nearest" });
        if (firstChoice) firstChoice.focus();
        status("This cluster is chained: choose below what to approve (Esc to leave it).");
        return;
      }
    }
    if (key === "Q" || key === "E") {
      var b = region.querySelector('button[data-key="' + key + '"]');
      if (b && !b.disabled) { e.preventDefault(); send(b.form, b); }
      return;
    }
    if (key === "k" && !e.shiftKey) {
      var pop = rows[at] ? rows[at].querySelector("details.keeper-pop") : null;
      if (pop) {
        e.preventDefault();
        pop.open = true;
        pop.querySelector('input[name="reason"]').focus();
      } else {
        status("The keeper is this one already.");
      }
      return;
    }
    if (key === "Enter") {
      var active = document.activeElement;
      if (active && active !== document.body && active.tagName !== "TR") return; // a focused button or link does its own thing
      var next = region.querySelector("#next-cluster");
      if (next) { e.preventDefault(); window.location.href = next.href; } else { status("This is the last cluster in risk order."); }
    }
  });
})();

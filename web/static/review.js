// Keyboard review of a cluster: the keys printed on the buttons. j or ↓ moves to the
// next member, ↑ to the previous; q keeps the proposal (approves the removal), e
// excludes the member from removal, k puts the cursor in the "make keeper" reason
// (Enter there submits); Shift+Q and Shift+E decide the whole cluster; Enter goes to
// the next cluster. Nothing fires while a text field has focus or with Alt, Meta or
// Ctrl (app.js maps Ctrl+Z to the undo form). Without JavaScript every key is a button.
(function () {
  "use strict";
  var table = document.getElementById("members");
  if (!table) return;
  function typing(el) {
    return el && (el.tagName === "INPUT" && !/^(radio|checkbox|submit|button)$/.test(el.type) ||
      el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr"));
  var bar = document.querySelector('[data-testid="cluster"]');
  var wanted = bar ? bar.getAttribute("data-focus") : "0";
  var at = -1;
  function focusRow(i) {
    if (i < 0 || i >= rows.length) return;
    if (at >= 0) { rows[at].classList.remove("focused"); rows[at].removeAttribute("aria-current"); }
    at = i;
    rows[i].classList.add("focused");
    rows[i].setAttribute("aria-current", "true");
    rows[i].scrollIntoView({ block: "nearest" });
  }
  var start = -1;
  rows.forEach(function (r, i) { if (start < 0 && wanted !== "0" && r.getAttribute("data-item") === wanted) start = i; });
  rows.forEach(function (r, i) { if (start < 0 && r.getAttribute("data-decision") === "proposed") start = i; });
  focusRow(start >= 0 ? start : Math.min(1, rows.length - 1));

  var sent = false; // one submission per page
  function submit(button) {
    if (!button || sent) return false;
    sent = true;
    button.form.requestSubmit(button);
    return true;
  }
  function rowButton(key) { return rows[at] ? rows[at].querySelector('button[data-key="' + key + '"]') : null; }

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey || e.ctrlKey || typing(document.activeElement)) return;
    var key = e.key;
    if (key === "j" || key === "ArrowDown") { e.preventDefault(); focusRow(at + 1); return; }
    if (key === "ArrowUp") { e.preventDefault(); focusRow(at - 1); return; }
    if ((key === "q" || key === "e") && !e.shiftKey) {
      if (submit(rowButton(key))) e.preventDefault();
      return;
    }
    if (key === "Q" || key === "E") {
      if (submit(document.querySelector('button[data-key="' + key + '"]'))) e.preventDefault();
      return;
    }
    if (key === "k" && !e.shiftKey) {
      var reason = rows[at] ? rows[at].querySelector('input[name="reason"]') : null;
      if (reason) { e.preventDefault(); reason.focus(); }
      return;
    }
    if (key === "Enter") {
      var active = document.activeElement;
      if (active && active !== document.body && active.tagName !== "TR") return; // a focused button or link does its own thing
      var next = document.getElementById("next-cluster");
      if (next) { e.preventDefault(); window.location.href = next.href; }
    }
  });
})();

// Keyboard shortcuts and small conveniences. No shortcut fires while a text field has
// focus, and none takes a key the browser or the system uses (Ctrl+Z only on the pair
// page, outside text fields, where it undoes the last labeling decision).
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "INPUT" && !/^(radio|checkbox|submit|button)$/.test(el.type) ||
      el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  var form = document.getElementById("label-form");

  function submitWith(action) {
    if (!form) return;
    var b = form.querySelector('button[name="action"][value="' + action + '"]');
    if (b) { form.requestSubmit(b); }
  }

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey || typing(document.activeElement)) return;
    if (e.ctrlKey) {
      if ((e.key === "z" || e.key === "Z") && !e.shiftKey && document.getElementById("undo-form")) {
        e.preventDefault();
        document.getElementById("undo-form").requestSubmit();
      }
      return;
    }
    if (e.key === "?" || (e.key === "h" && document.getElementById("guidelines"))) {
      var help = document.getElementById("guidelines") || document.getElementById("help");
      if (help && !help.open) { openDialog(help); e.preventDefault(); }
      return;
    }
    if (e.key === "/") {
      var t = document.getElementById("threshold");
      if (t) {
        e.preventDefault();
        // Some input paths deliver the character after keydown anyway: swallow it once.
        t.addEventListener("beforeinput", function swallow(ev) {
          t.removeEventListener("beforeinput", swallow);
          if (ev.data === "/") ev.preventDefault();
        });
        t.focus();
        t.select();
      }
      return;
    }
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      var link = document.getElementById(e.key === "ArrowLeft" ? "prev-link" : "next-link");
      if (link) { e.preventDefault(); window.location.href = link.href; }
      return;
    }
    if (!form) return;
    if (/^[1-9]$/.test(e.key)) {
      var r = form.querySelector('input[name="category"][data-key="' + e.key + '"]');
      if (r) { r.checked = true; e.preventDefault(); }
    } else if (e.key === "y" || e.key === "n") {
      var d = form.querySelector('input[name="duplicate"][value="' + (e.key === "y" ? "yes" : "no") + '"]');
      if (d) { d.checked = true; e.preventDefault(); }
    } else if (e.key === "Enter") {
      e.preventDefault();
      submitWith("submit");
    } else if (e.key === " ") {
      e.preventDefault();
      submitWith("skip");
    } else if (e.key === "f") {
      e.preventDefault();
      submitWith(form.querySelector('button[value="unflag"]') ? "unflag" : "flag");
    }
  });

  // A dialog opens at its top, its heading focused (not its last button, which scrolled
  // a long one to the bottom); buttons with data-open="id" open one by mouse or touch.
  function openDialog(d) {
    d.showModal();
    d.scrollTop = 0;
    var title = d.querySelector("[autofocus]");
    if (title) title.focus({ preventScroll: true });
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button[data-open]");
    if (!b) return;
    var d = document.getElementById(b.getAttribute("data-open"));
    if (d && !d.open) { e.preventDefault(); openDialog(d); }
  });

  // One submission per page: a second Enter (or a key event delivered twice) is ignored.
  if (form) {
    var sent = false;
    form.addEventListener("submit", function (e) {
      if (sent) { e.preventDefault(); return; }
      sent = true;
    });
  }

  // Side-by-side panes scroll together, proportionally.
  var left = document.getElementById("pane-left"), right = document.getElementById("pane-right");
  if (left && right) {
    var lock = false;
    function sync(from, to) {
      return function () {
        if (lock) return;
        lock = true;
        var max = from.scrollHeight - from.clientHeight;
        var ratio = max > 0 ? from.scrollTop / max : 0;
        to.scrollTop = ratio * (to.scrollHeight - to.clientHeight);
        requestAnimationFrame(function () { lock = false; });
      };
    }
    left.addEventListener("scroll", sync(left, right), { passive: true });
    right.addEventListener("scroll", sync(right, left), { passive: true });
  }

  // Copy buttons (a secret shown once): shown only where the clipboard can be written;
  // elsewhere the value stays selectable by a click (user-select: all).
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    var src = document.querySelector(b.getAttribute("data-copy"));
    if (!src || !navigator.clipboard || !window.isSecureContext) return;
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(src.textContent).then(function () { b.textContent = "Copied"; },
        function () { b.textContent = "Copy failed: select it"; });
    });
  });
})();

// The results upload's configuration follows its dataset and format: the file's own for
// a manifest file, else the chosen dataset's newest signed-off manifest (data-defaults,
// from the server, which preselects the same without this script).
(function () {
  "use strict";
  var config = document.querySelector('[data-testid="results-config"]');
  var format = document.querySelector('[data-testid="results-format"]');
  var dataset = document.querySelector('[data-testid="results-dataset"]');
  if (!config || !format || !dataset) return;
  var defaults = {};
  try { defaults = JSON.parse(config.getAttribute("data-defaults") || "{}"); } catch (e) { return; }
  function follow() {
    config.value = format.value !== "manifest" && defaults[dataset.value] ? defaults[dataset.value] : "0";
  }
  format.addEventListener("change", follow);
  dataset.addEventListener("change", follow);
})();

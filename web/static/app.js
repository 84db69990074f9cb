// Keyboard shortcuts. None fires while a text field has focus, and none uses a modifier
// key, so the browser's and the operating system's own shortcuts are left alone.
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(document.activeElement)) return;
    if (e.key === "?") {
      var help = document.getElementById("help");
      if (help && !help.open) { help.showModal(); e.preventDefault(); }
    } else if (e.key === "/") {
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
    }
  });
})();

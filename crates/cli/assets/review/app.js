// docket review: the page of `docket review serve`. Routes (#/ the queue, #/tasks/<id> a task),
// the signed-in reviewer, and the keyboard.

import * as api from "./api.js";
import * as queue from "./queue.js";
import * as task from "./task.js";
import { notify } from "./ui.js";

const main = document.getElementById("main");
let view = null;
let keepNotice = false;

let routed = null; // the hash the current view shows

/** Navigates to `hash` at once (so keys pressed meanwhile act on the new view); `keep` keeps
 * the current notice on the next view. */
function go(hash, keep = false) {
  keepNotice = keep;
  if (location.hash !== hash) location.hash = hash;
  route(true);
}

function route(force = false) {
  if (!force && location.hash === routed) return;
  routed = location.hash;
  if (!keepNotice) notify("", "");
  keepNotice = false;
  try {
    view?.dispose();
  } catch (e) {
    console.warn("leaving the view:", e);
  }
  const m = location.hash.match(/^#\/tasks\/([^/?#]+)/);
  if (m) {
    document.title = "Task · docket review";
    view = task.show(main, decodeURIComponent(m[1]), go);
  } else {
    document.title = "Queue · docket review";
    view = queue.show(main);
  }
}

function typing(el) {
  return el instanceof HTMLElement && (el.matches("input, textarea, select") || el.isContentEditable);
}

document.addEventListener("keydown", (e) => {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  if (e.key === "Escape") {
    if (typing(e.target)) {
      e.target.blur();
      e.preventDefault();
    }
    return;
  }
  if (typing(e.target)) return;
  if (view?.key(e.key)) e.preventDefault();
});

window.addEventListener("hashchange", () => route());

api.me().then(
  (me) => {
    const whoami = document.getElementById("whoami");
    whoami.textContent = `Signed in as ${me.reviewer} (${me.tenant})`;
    whoami.dataset.reviewer = me.reviewer;
  },
  (e) => {
    document.getElementById("whoami").textContent = "Not signed in";
    notify("error", e.message);
  },
);

route(true);

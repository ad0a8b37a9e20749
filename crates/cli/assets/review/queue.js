// The queue: open (pending) and closed (decided, expired) tasks, oldest first, and the order
// j/k and "next task" follow.

import * as api from "./api.js";
import { h, age, when, untilDeadline, reasonShort, decisionSummary, notify } from "./ui.js";

const TABS = {
  open: { label: "Open", statuses: ["pending"], empty: "No open tasks: nothing waits for a review." },
  closed: { label: "Closed", statuses: ["decided", "expired"], empty: "No closed tasks yet." },
};

const state = {
  tab: sessionStorage.getItem("docket.review.tab") === "closed" ? "closed" : "open",
  lists: { open: null, closed: null },
  truncated: { open: false, closed: false },
  loadedAt: { open: 0, closed: 0 },
  selected: null, // the task id last focused or opened
};

const byAge = (a, b) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.taskId < b.taskId ? -1 : 1;

/** Reloads the list of `tab` (default: the current tab). */
export async function reload(tab = state.tab) {
  const pages = tab === "open" ? 10 : 5;
  const answers = await Promise.all(TABS[tab].statuses.map((s) => api.listTasks(s, pages)));
  state.lists[tab] = answers.flatMap((a) => a.tasks).sort(byAge);
  state.truncated[tab] = answers.some((a) => a.truncated);
  state.loadedAt[tab] = Date.now();
  return state.lists[tab];
}

/** Remembers `id` as the selected task (the queue focuses it when shown again). */
export function select(id) {
  state.selected = id;
}

/**
 * The task `delta` places from `task` in the current tab's order (the open tab's when that tab
 * was never loaded), also when `task` left the list meanwhile; null at either end.
 */
export async function neighbour(task, delta) {
  const tab = state.lists[state.tab] ? state.tab : "open";
  const list = state.lists[tab] || (await reload(tab));
  const i = list.findIndex((t) => t.taskId === task.taskId);
  if (i >= 0) return list[i + delta] || null;
  const after = list.findIndex((t) => byAge(t, task) > 0);
  if (delta > 0) return after >= 0 ? list[after] : null;
  const before = after >= 0 ? after - 1 : list.length - 1;
  return before >= 0 ? list[before] : null;
}

/** The open task to review after `task`: the next one in order, else the oldest other one. */
export async function nextOpen(task) {
  const list = (await reload("open")).filter((t) => t.taskId !== task.taskId);
  return list.find((t) => byAge(t, task) > 0) || list[0] || null;
}

function row(task, tab) {
  const status =
    task.status === "pending"
      ? [h("span", { class: "k" }, "Deadline "), when(task.deadline), " ",
         h("span", { class: "soft" }, `(${untilDeadline(task.deadline)})`)]
      : task.decision
        ? [decisionSummary(task.decision), task.status === "expired" ? " · expired" : ""]
        : ["Expired", task.expiry ? ` at ${when(task.expiry.at)}` : ""];
  const reasons = (task.reasons || []).map(reasonShort);
  return h(
    "li",
    {},
    h(
      "a",
      {
        class: "task",
        href: `#/tasks/${encodeURIComponent(task.taskId)}`,
        dataset: { taskId: task.taskId, status: task.status },
        "aria-current": state.selected === task.taskId ? "true" : null,
        onfocus: () => select(task.taskId),
      },
      h("span", { class: "doc" }, h("span", { class: "k" }, "Document "), task.documentId),
      h("span", { class: "reasons" }, reasons.length ? reasons.join(" · ") : "No reasons recorded"),
      h("span", { class: "when" }, ...status),
      h("span", { class: "age" }, h("span", { class: "k" }, "Age "), age(task.createdAt)),
    ),
  );
}

/** Shows the queue in `main`; answers the view's controller. */
export function show(main) {
  const tabButtons = Object.entries(TABS).map(([key, t]) =>
    h("button", { type: "button", class: "tab", dataset: { tab: key }, "aria-pressed": String(key === state.tab),
      onclick: () => switchTab(key) }, t.label, h("span", { class: "count", "aria-hidden": "true" })),
  );
  const status = h("p", { class: "queue-status soft" }, "Loading…");
  const list = h("ul", { class: "tasks", "aria-label": "Tasks" });
  const section = h("section", { id: "queue", "aria-labelledby": "queue-title" },
    h("h2", { id: "queue-title", class: "visually-hidden" }, "Review queue"),
    h("div", { class: "tabs", role: "group", "aria-label": "Which tasks" }, tabButtons),
    status, list);
  main.replaceChildren(section);
  let disposed = false;
  let timer = null;

  function render() {
    if (disposed) return;
    for (const b of tabButtons) b.setAttribute("aria-pressed", String(b.dataset.tab === state.tab));
    for (const [key, items] of Object.entries(state.lists)) {
      const count = tabButtons.find((b) => b.dataset.tab === key).querySelector(".count");
      count.textContent = items ? ` (${items.length}${state.truncated[key] ? "+" : ""})` : "";
    }
    const items = state.lists[state.tab];
    if (!items) return;
    const focusedId = document.activeElement?.closest?.("#queue a.task")?.dataset.taskId;
    const rows = items.map((t) => row(t, state.tab));
    section.querySelector(".empty")?.remove();
    list.replaceChildren(...rows);
    if (!items.length) list.after(h("p", { class: "empty" }, TABS[state.tab].empty));
    status.textContent = `${items.length} task${items.length === 1 ? "" : "s"}, oldest first` +
      (state.truncated[state.tab] ? " (more exist than shown)" : "") +
      ` · updated ${new Date(state.loadedAt[state.tab]).toLocaleTimeString()}`;
    if (focusedId) list.querySelector(`a.task[data-task-id="${CSS.escape(focusedId)}"]`)?.focus({ preventScroll: true });
  }

  async function refresh() {
    try {
      await reload(state.tab);
      render();
    } catch (e) {
      if (!disposed) {
        status.textContent = "Could not load the tasks.";
        notify("error", e.message);
      }
    }
  }

  function switchTab(key) {
    state.tab = key;
    sessionStorage.setItem("docket.review.tab", key);
    render();
    refresh();
  }

  function move(delta) {
    const links = [...list.querySelectorAll("a.task")];
    if (!links.length) return;
    const current = links.findIndex((a) => a === document.activeElement || a.dataset.taskId === state.selected);
    const next = current < 0 ? (delta > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, current + delta));
    links[next].focus();
  }

  render();
  refresh().then(() => {
    if (state.selected && !document.activeElement?.closest?.("#queue")) {
      list.querySelector(`a.task[data-task-id="${CSS.escape(state.selected)}"]`)?.focus({ preventScroll: false });
    }
  });
  timer = setInterval(() => {
    if (!document.hidden) refresh();
  }, 10_000);

  return {
    key(k) {
      if (k === "j") return move(1), true;
      if (k === "k") return move(-1), true;
      return false;
    },
    dispose() {
      disposed = true;
      clearInterval(timer);
    },
  };
}

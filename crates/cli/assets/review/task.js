// One task: its document on the left, its fields on the right; approve (with corrections) or
// reject.

import * as api from "./api.js";
import * as queue from "./queue.js";
import { renderDocument } from "./docview.js";
import {
  h, FIELDS, LOW_CONFIDENCE, fieldLabel, reasonShort, when, age, untilDeadline,
  decisionSummary, expirySummary, notify,
} from "./ui.js";

const EXPIRED = "Conflict.ReviewExpired";
const ALREADY_DECIDED = "Conflict.AlreadyDecided";

/** Shows task `id` in `main`; `go(hash)` navigates. Answers the view's controller. */
export function show(main, id, go) {
  let disposed = false;
  let task = null;
  let doc = null;
  let busy = false;
  let closed = true; // no decision can be sent (loading, decided, expired)
  const original = {}; // field → value as recorded
  const checked = {}; // field → the value last checked and found good

  const section = h("section", { id: "task", dataset: { taskId: id }, "aria-labelledby": "task-title", "aria-busy": "true" },
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "← Queue")),
    h("h2", { id: "task-title" }, "Task ", h("code", {}, id)),
    h("p", { class: "soft" }, "Loading…"));
  main.replaceChildren(section);
  queue.select(id);

  const inputs = () => [...section.querySelectorAll("#fields input")];
  const input = (f) => section.querySelector(`#fields input[name="${f}"]`);
  const errorOf = (f) => section.querySelector(`.field-error[data-field="${f}"]`);

  function setError(f, message) {
    const el = errorOf(f);
    const inp = input(f);
    if (!el || !inp) return;
    el.textContent = message || "";
    el.hidden = !message;
    if (message) inp.setAttribute("aria-invalid", "true");
    else inp.removeAttribute("aria-invalid");
  }

  function corrections() {
    const set = {};
    for (const inp of inputs()) {
      if (inp.value.trim() !== (original[inp.name] ?? "")) set[inp.name] = inp.value.trim();
    }
    return set;
  }

  function markCorrected() {
    const set = corrections();
    for (const inp of inputs()) {
      const box = inp.closest(".field");
      const on = inp.name in set;
      box.classList.toggle("corrected", on);
      box.querySelector(".badge-corrected").hidden = !on;
    }
    const n = Object.keys(set).length;
    const approve = section.querySelector("#approve");
    if (approve) approve.textContent = n ? `Approve with corrections (${n})` : "Approve";
  }

  /** Checks field `f`'s value with the API; true when good (or unchanged). */
  async function checkField(f) {
    const inp = input(f);
    const value = inp.value.trim();
    if (value === (original[f] ?? "")) {
      setError(f, null);
      return true;
    }
    if (checked[f] === value) return true;
    // An answer for a value the field no longer holds is stale: the reviewer typed on.
    const current = () => inp.value.trim() === value;
    try {
      await api.check(id, { [f]: value });
      checked[f] = value;
      if (!current()) return true;
      setError(f, null);
      const notice = document.getElementById("notice");
      if (notice.dataset.kind === "error" && !section.querySelector(".field-error[data-field]:not([hidden])")) notify("", "");
      return true;
    } catch (e) {
      if (!current()) return false;
      if (e.status === 400) setError(f, e.detail);
      else notify("error", e.message);
      return false;
    }
  }

  function focusField(f) {
    const inp = input(f);
    if (inp) {
      inp.focus();
      inp.select();
    }
  }

  function lowFields() {
    const named = new Set((task.reasons || []).map((r) => r.field).filter(Boolean));
    return FIELDS.map((f) => f.name).filter((f) => {
      const v = task.fields?.[f];
      return named.has(f) || !v || Number(v.confidence) < LOW_CONFIDENCE;
    });
  }

  function fieldRow(f, low, shown) {
    const v = task.fields?.[f.name];
    const conf = v ? Number(v.confidence) : null;
    const src = v?.source?.kind === "reviewer" ? `set by ${v.source.id}` : conf === null ? "not found" : `confidence ${conf.toFixed(2)}`;
    const inp = h("input", {
      id: `f-${f.name}`, name: f.name, type: "text", value: shown, autocomplete: "off", spellcheck: "false",
      inputmode: f.name === "total_amount" ? "decimal" : null,
      placeholder: f.hint, "aria-describedby": `m-${f.name} e-${f.name}`,
      readonly: closed ? true : null,
      onfocus: () => doc?.highlight(f.name),
      // The error goes as soon as the value changes (it is checked again on leaving): hiding
      // it on leaving would move the buttons under the pointer between press and release.
      oninput: () => {
        setError(f.name, null);
        markCorrected();
      },
      onblur: () => {
        if (!closed) checkField(f.name);
      },
    });
    return h("div", { class: `field${low ? " low" : ""}`, dataset: { field: f.name } },
      h("label", { for: `f-${f.name}` }, f.label, " ", h("span", { class: "soft" }, `(${f.hint})`)),
      inp,
      h("p", { class: "meta", id: `m-${f.name}` },
        h("span", { class: "src" }, src),
        low ? h("span", { class: "badge badge-low" }, "check") : null,
        h("span", { class: "badge badge-corrected", hidden: true }, "corrected")),
      h("p", { class: "field-error", id: `e-${f.name}`, dataset: { field: f.name }, hidden: true }));
  }

  function outcome(t, kind) {
    section.querySelector("#decision")?.remove();
    const d = t.decision;
    const lines = [];
    if (d) {
      lines.push(h("p", { class: "verdict" }, decisionSummary(d)));
      const set = Object.entries(d.corrections || {});
      if (set.length) lines.push(h("p", {}, "Corrections: ", set.map(([f, v]) => `${fieldLabel(f)} = ${v}`).join(", ")));
      if (d.comment) lines.push(h("p", {}, "Comment: ", d.comment));
      if (d.reason) lines.push(h("p", {}, "Reason: ", d.reason));
    }
    if (t.status === "expired" || kind === "expired") lines.push(h("p", { class: "verdict" }, expirySummary(t)));
    const next = h("button", { type: "button", id: "next-task", onclick: nextTask }, "Next task");
    const panel = h("section", { id: "decision", class: `outcome ${kind || t.status}`, "aria-labelledby": "decision-title" },
      h("h3", { id: "decision-title" }, t.status === "expired" || kind === "expired" ? "Expired" : "Decided"),
      ...lines, h("p", {}, next, " ", h("a", { href: "#/" }, "Back to the queue")));
    section.querySelector(".actions")?.replaceWith(panel);
    if (!panel.isConnected) section.querySelector(".side-col")?.append(panel);
    return next;
  }

  function close(t, kind) {
    closed = true;
    task = { ...task, ...t };
    for (const inp of inputs()) inp.readOnly = true;
    section.querySelector("#comment")?.setAttribute("readonly", "");
    section.querySelector(".task-status").textContent = statusLine(task);
    return outcome(task, kind);
  }

  async function nextTask() {
    try {
      const t = await queue.nextOpen(task);
      if (t) go(`#/tasks/${encodeURIComponent(t.taskId)}`, true);
      else {
        notify("ok", "No more open tasks.");
        go("#/", true);
      }
    } catch (e) {
      notify("error", e.message);
    }
  }

  async function send(decision) {
    if (busy || closed) return;
    busy = true;
    section.setAttribute("aria-busy", "true");
    try {
      const t = await api.decide(id, decision);
      const verdict = decision.verdict === "approve" ? "Approved" : "Rejected";
      notify("ok", `${verdict}. ${t.decision ? decisionSummary(t.decision) : ""}`.trim());
      close(t).focus();
    } catch (e) {
      if (e.error === ALREADY_DECIDED && e.task) {
        const d = e.task.decision;
        notify("conflict", d
          ? `Already decided by ${d.reviewer?.id} at ${when(d.decidedAt)} (${d.verdict === "approve" ? "approved" : "rejected"}).`
          : e.detail);
        close(e.task, "decided").focus();
      } else if (e.error === EXPIRED || e.error.endsWith("Expired") || e.status === 410) {
        notify("expired", `${e.task ? expirySummary(e.task) : `Expired: ${e.detail}`}; the decision was not recorded.`);
        close(e.task || { status: "expired" }, "expired").focus();
      } else if (e.status === 400 && Object.keys(decision.set || {}).includes(e.field)) {
        setError(e.field, e.detail);
        notify("error", e.message);
        focusField(e.field);
      } else {
        notify("error", e.message);
      }
    } finally {
      busy = false;
      section.setAttribute("aria-busy", "false");
    }
  }

  async function approve() {
    if (busy || closed) return;
    const set = corrections();
    const names = Object.keys(set);
    if (names.length) {
      busy = true;
      const results = await Promise.all(names.map(checkField));
      busy = false;
      const bad = names.filter((_, i) => !results[i]);
      if (bad.length) {
        notify("error", `Fix ${bad.map(fieldLabel).join(", ").toLowerCase()} before approving.`);
        focusField(bad[0]);
        return;
      }
    }
    const decision = { verdict: "approve" };
    if (names.length) decision.set = set;
    const comment = section.querySelector("#comment").value.trim();
    if (comment) decision.comment = comment;
    await send(decision);
  }

  async function reject() {
    if (busy || closed) return;
    const reasonInput = section.querySelector("#reject-reason");
    const error = section.querySelector("#reject-error");
    const reason = reasonInput.value.trim();
    if (!reason) {
      error.textContent = "A rejection needs a reason.";
      error.hidden = false;
      reasonInput.setAttribute("aria-invalid", "true");
      reasonInput.focus();
      return;
    }
    error.hidden = true;
    reasonInput.removeAttribute("aria-invalid");
    await send({ verdict: "reject", reason });
  }

  function statusLine(t) {
    const parts = [`Status: ${t.status}`, `opened ${age(t.createdAt)} ago`];
    if (t.status === "pending") parts.push(`deadline ${when(t.deadline)} (${untilDeadline(t.deadline)})`);
    return parts.join(" · ");
  }

  function render(evidence) {
    closed = task.status !== "pending";
    const corrected = task.decision?.corrections || {};
    for (const f of FIELDS) original[f.name] = task.fields?.[f.name]?.value ?? "";
    const low = new Set(lowFields());
    const reasons = task.reasons || [];
    const pages = h("div", { id: "pages", role: "region", "aria-label": "Document" });
    const side = h("div", { class: "side-col" },
      h("section", { class: "reasons", "aria-labelledby": "reasons-title" },
        h("h3", { id: "reasons-title" }, "Why it needs review"),
        reasons.length
          ? h("ul", {}, reasons.map((r) => h("li", { dataset: { field: r.field || "" } },
              h("strong", {}, reasonShort(r)), r.detail ? ` — ${r.detail}` : "")))
          : h("p", { class: "soft" }, "No reasons recorded.")),
      h("form", { id: "fields", "aria-labelledby": "fields-title", onsubmit: (e) => e.preventDefault() },
        h("h3", { id: "fields-title" }, "Fields"),
        FIELDS.map((f) => fieldRow(f, low.has(f.name), corrected[f.name] ?? original[f.name])),
        h("label", { for: "comment" }, "Comment ", h("span", { class: "soft" }, "(optional, sent with an approval)")),
        h("textarea", { id: "comment", rows: "2", maxlength: "2000", readonly: closed ? true : null })),
      h("div", { class: "actions" },
        h("button", { type: "button", id: "approve", class: "primary", onclick: approve }, "Approve"),
        h("form", { id: "reject-form", class: "reject", onsubmit: (e) => { e.preventDefault(); reject(); } },
          h("label", { for: "reject-reason" }, "Reason for rejecting ", h("span", { class: "soft" }, "(required)")),
          h("div", { class: "row" },
            h("input", { id: "reject-reason", name: "reason", type: "text", maxlength: "2000", autocomplete: "off", "aria-describedby": "reject-error" }),
            h("button", { type: "submit", id: "reject" }, "Reject")),
          h("p", { id: "reject-error", class: "field-error", role: "alert", hidden: true }))));
    section.replaceChildren(
      h("p", { class: "crumbs" }, h("a", { href: "#/" }, "← Queue")),
      h("h2", { id: "task-title" }, "Document ", h("code", {}, task.documentId)),
      h("p", { class: "task-status soft" }, statusLine(task)),
      h("div", { class: "task-body" }, h("div", { class: "doc-col" }, pages), side));
    for (const f of Object.keys(corrected)) {
      const box = section.querySelector(`.field[data-field="${f}"]`);
      if (box) {
        box.classList.add("corrected");
        box.querySelector(".badge-corrected").hidden = false;
      }
    }
    if (closed) outcome(task);
    else markCorrected();
    doc = renderDocument(pages, id, evidence, (f) => {
      if (closed) doc.highlight(f);
      else focusField(f);
    });
    doc.ready.catch(() => {});
    section.setAttribute("aria-busy", "false");
  }

  (async () => {
    try {
      const [t, evidence] = await Promise.all([
        api.getTask(id),
        api.getEvidence(id).catch((e) => {
          notify("error", `No evidence boxes: ${e.message}`);
          return null;
        }),
      ]);
      if (disposed) return;
      task = t;
      render(evidence);
    } catch (e) {
      if (disposed) return;
      section.setAttribute("aria-busy", "false");
      section.querySelector(".soft").textContent = "This task could not be loaded.";
      notify("error", e.message);
    }
  })();

  async function neighbour(delta) {
    const t = await queue.neighbour(task || { taskId: id, createdAt: "" }, delta);
    if (t) go(`#/tasks/${encodeURIComponent(t.taskId)}`);
    else notify("ok", delta > 0 ? "This is the last task of the queue." : "This is the first task of the queue.");
  }

  return {
    key(k) {
      if (k === "j" || k === "k") {
        neighbour(k === "j" ? 1 : -1).catch((e) => notify("error", e.message));
        return true;
      }
      if (!task || closed) return false;
      if (k === "a") return approve(), true;
      if (k === "r") return section.querySelector("#reject-reason").focus(), true;
      if (k === "e") return focusField(lowFields()[0] || FIELDS[0].name), true;
      return false;
    },
    dispose() {
      disposed = true;
      doc?.dispose();
    },
  };
}

// What the page says and shows: field names, reasons, times, elements, notices.

/** Every field, in the order of the core's FieldName::ALL, with its label and expected form. */
export const FIELDS = [
  { name: "issuer", label: "Issuer", hint: "company name" },
  { name: "invoice_number", label: "Invoice number", hint: "no spaces" },
  { name: "invoice_date", label: "Invoice date", hint: "yyyy-mm-dd" },
  { name: "total_amount", label: "Total amount", hint: "e.g. 1250.00" },
  { name: "currency", label: "Currency", hint: "ISO code, e.g. EUR" },
];

/** Below this confidence a field is marked for attention. */
export const LOW_CONFIDENCE = 0.9;

export function fieldLabel(name) {
  const f = FIELDS.find((f) => f.name === name);
  return f ? f.label : String(name).replaceAll("_", " ");
}

const REASONS = {
  missing_field: "Missing",
  low_confidence: "Low confidence",
  bad_format: "Malformed",
  amount_out_of_range: "Amount out of range",
  date_in_future: "Date in the future",
  date_too_old: "Date too old",
  currency_not_allowed: "Currency not allowed",
  embedded_mismatch: "Page and e-invoice disagree",
};

/** A validation reason in a few words: "Low confidence: total amount". */
export function reasonShort(reason) {
  const what = REASONS[reason.code] || String(reason.code || "reason").replaceAll("_", " ");
  return reason.field ? `${what}: ${fieldLabel(reason.field).toLowerCase()}` : what;
}

/** How long `ms` milliseconds is, roughly: "40 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** The age of an RFC 3339 instant, e.g. "12 min". */
export function age(iso, now = Date.now()) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? "?" : duration(now - t);
}

/** An RFC 3339 instant in the reader's local time, e.g. "5 Mar 2026, 14:02". */
export function when(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return String(iso || "?");
  return new Date(t).toLocaleString(undefined, {
    day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

/** How far a deadline is: "in 5 h" or "passed 20 min ago". */
export function untilDeadline(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  return t >= now ? `in ${duration(t - now)}` : `passed ${duration(now - t)} ago`;
}

/** "approved by alice at …" / "rejected by …", from a recorded decision. */
export function decisionSummary(decision) {
  const verdict = decision.verdict === "approve" ? "Approved" : "Rejected";
  const who = decision.reviewer ? decision.reviewer.id : "?";
  return `${verdict} by ${who} at ${when(decision.decidedAt)}`;
}

/** Why and when a task expired. */
export function expirySummary(task) {
  if (task.expiry) return `Expired at ${when(task.expiry.at)} (${task.expiry.reason})`;
  return `Expired: its deadline ${when(task.deadline)} passed`;
}

/** Creates an element: h("p", {class: "x"}, "text", child, …). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    // Through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
    else if (k === "style") Object.assign(el.style, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/**
 * Shows a notice in the page's live region. `kind`: ok | conflict | expired | error; an empty
 * `text` clears it.
 */
export function notify(kind, text) {
  const el = document.getElementById("notice");
  if (!el) return;
  el.textContent = text || "";
  if (text) el.dataset.kind = kind;
  else delete el.dataset.kind;
}

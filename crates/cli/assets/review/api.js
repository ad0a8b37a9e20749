// The review API as the page sees it: same origin, under /api (the local server signs each call
// with the reviewer's credentials and forwards it).

/**
 * An answer other than 2xx: `status`, and the body's `error`, `message`, `task` and `field` (the
 * correction it refuses) if any.
 */
export class ApiError extends Error {
  constructor(status, body) {
    const name = (body && body.error) || `HTTP ${status}`;
    const message = (body && body.message) || "the review API did not answer as expected";
    super(`${name}: ${message}`);
    this.status = status;
    this.error = name;
    this.detail = message;
    this.task = body && body.task ? body.task : null;
    this.field = body && typeof body.field === "string" ? body.field : null;
  }
}

async function call(method, path, body) {
  const init = { method, headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(`/api${path}`, init);
  } catch (e) {
    throw new ApiError(0, { error: "Network", message: `the local server did not answer (${e.message})` });
  }
  let json = null;
  const text = await res.text();
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = { message: text.slice(0, 300) };
    }
  }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

const enc = encodeURIComponent;

/** `{reviewer, tenant}` of the signed-in reviewer. */
export const me = () => call("GET", "/me");

/**
 * Every task of `status`, oldest first, following `nextToken` for at most `maxPages` pages.
 * Answers `{tasks, truncated}`.
 */
export async function listTasks(status, maxPages = 10) {
  const tasks = [];
  let token = null;
  for (let page = 0; page < maxPages; page++) {
    const q = `?status=${enc(status)}${token ? `&nextToken=${enc(token)}` : ""}`;
    const answer = await call("GET", `/tasks${q}`);
    tasks.push(...(answer.tasks || []));
    token = answer.nextToken;
    if (!token) return { tasks, truncated: false };
  }
  return { tasks, truncated: true };
}

/** The task `id` as recorded. */
export const getTask = async (id) => (await call("GET", `/tasks/${enc(id)}`)).task;

/** Where each field was read: `{pages: [{number}], fields: {name: {page, box}}}`. */
export const getEvidence = (id) => call("GET", `/tasks/${enc(id)}/evidence`);

/** Checks corrections `set` ({field: value}) without deciding; throws ApiError when refused. */
export const check = (id, set) => call("POST", `/tasks/${enc(id)}/check`, { set });

/** Sends a decision; answers the task as decided (or throws ApiError with `.task`). */
export const decide = async (id, decision) =>
  (await call("POST", `/tasks/${enc(id)}/decision`, decision)).task;

/** The raw document: `{blob, type}`. */
export async function getDocument(id) {
  let res;
  try {
    res = await fetch(`/api/tasks/${enc(id)}/document`);
  } catch (e) {
    throw new ApiError(0, { error: "Network", message: `the local server did not answer (${e.message})` });
  }
  if (!res.ok) {
    let body = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, body);
  }
  const type = (res.headers.get("content-type") || "").split(";")[0].trim().toLowerCase();
  return { blob: await res.blob(), type };
}

// mvlattice status page: fetches server-rendered fragments (with the bearer token when the
// service has one), swaps them in, polls, and drives the refresh buttons and the playground.
// No build step and no dependencies. Text from the server is inserted as server-escaped HTML
// (fragments) or with textContent (playground), never by concatenating strings into markup.
"use strict";

const TOKEN_KEY = "mvlattice.token";

class Unauthorized extends Error {}

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

function needsToken() {
  return document.body.dataset.auth === "bearer";
}

function say(text, isError) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = isError ? "error" : "";
}

// A job's progress stays in its own place: the poll's "updated …" must not wipe it out.
function tell(text, isError) {
  const job = document.getElementById("job");
  job.textContent = text;
  job.className = isError ? "error" : "";
}

function askForToken(message) {
  const form = document.getElementById("token-form");
  form.hidden = false;
  if (message) say(message, true);
  document.getElementById("token").focus();
}

async function call(method, path, body) {
  const headers = { Accept: "application/json, text/html" };
  if (token()) headers.Authorization = "Bearer " + token();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  // The service refuses POSTs that a cross-site form could send: say this is no form.
  if (method !== "GET") headers["X-Mvlattice-Request"] = "1";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  if (response.status === 401) {
    askForToken("the service needs a valid bearer token");
    throw new Unauthorized();
  }
  return response;
}

async function errorText(response) {
  try {
    const doc = await response.json();
    return doc.error ? doc.error.code + ": " + doc.error.message : response.statusText;
  } catch (_ignored) {
    return response.status + " " + response.statusText;
  }
}

// -- fragments, polled ----------------------------------------------------------------------
const pending = new Map(); // tile name -> job id of a refresh this page started

let shown = null;
let timer = null;

async function loadPart() {
  const content = document.getElementById("content");
  if (!content) return;
  clearTimeout(timer);
  try {
    const response = await call("GET", content.dataset.part);
    if (!response.ok) {
      say("could not load: " + (await errorText(response)), true);
    } else {
      const html = await response.text();
      if (html !== shown) {
        content.innerHTML = html; // rendered and escaped by the server
        shown = html;
      }
      markPending();
      say("updated " + new Date().toLocaleTimeString());
    }
  } catch (error) {
    if (error instanceof Unauthorized) return; // polling resumes once a token is given
    say("could not reach the service: " + error.message, true);
  }
  timer = setTimeout(loadPart, Number(content.dataset.pollMs) || 2000);
}

function markPending() {
  for (const button of document.querySelectorAll("button.refresh")) {
    const busy = pending.has(button.dataset.tile);
    button.disabled = busy;
    button.textContent = busy ? "Refreshing…" : "Refresh";
  }
}

async function refresh(button) {
  const name = button.dataset.tile;
  const model = button.dataset.model;
  const path =
    "/v1/tiles/" + encodeURIComponent(name) + "/refresh" +
    (model ? "?model=" + encodeURIComponent(model) : "");
  try {
    const response = await call("POST", path);
    if (response.status !== 202) {
      tell("refresh of " + name + ": " + (await errorText(response)), true);
      return;
    }
    const job = await response.json();
    pending.set(name, job.id);
    markPending();
    tell("refresh of " + name + ": " + job.status);
    await follow(name, job.id);
  } catch (error) {
    if (!(error instanceof Unauthorized)) tell("refresh of " + name + ": " + error.message, true);
  }
}

async function follow(name, jobId) {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const response = await call("GET", "/v1/jobs/" + encodeURIComponent(jobId));
    if (!response.ok) {
      pending.delete(name);
      tell("refresh of " + name + ": " + (await errorText(response)), true);
      break;
    }
    const job = await response.json();
    if (job.status === "succeeded" || job.status === "failed") {
      pending.delete(name);
      const why = job.error ? ": " + job.error.message : "";
      tell("refresh of " + name + ": " + job.status + why, job.status === "failed");
      break;
    }
    tell("refresh of " + name + ": " + job.status);
  }
  shown = null;
  await loadPart(); // show the outcome now, not at the next poll
}

// -- playground -------------------------------------------------------------------------------
function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function explanationTable(explain) {
  const table = element("table", undefined, "explain");
  const head = table.createTHead().insertRow();
  for (const title of ["view", "outcome", "reason", "message"]) {
    head.appendChild(element("th", title));
  }
  const body = table.createTBody();
  for (const e of explain) {
    const row = body.insertRow();
    row.dataset.outcome = e.outcome || "";
    for (const value of [e.view || "(query)", e.outcome, e.reason, e.message]) {
      row.insertCell().textContent = value || "";
    }
  }
  return table;
}

function showRewrite(result, doc) {
  result.replaceChildren();
  const verdict = element(
    "p",
    doc.rewritten ? "Rewritten onto " + doc.materializations.join(", ") : "Not rewritten",
    doc.rewritten ? "verdict hit" : "verdict miss",
  );
  verdict.id = "verdict";
  const sql = element("pre", doc.sql, "sql");
  sql.id = "rewritten-sql";
  result.append(verdict, element("h2", "SQL"), sql, element("h2", "Every view considered"));
  const explain = doc.explain || [];
  result.appendChild(
    explain.length ? explanationTable(explain) : element("p", "no view was considered", "empty"),
  );
  result.appendChild(element("p", "model " + doc.model + " · " + doc.elapsed_ms + " ms", "meta"));
}

async function rewrite(event) {
  event.preventDefault();
  const result = document.getElementById("rewrite-result");
  const sql = document.getElementById("sql").value;
  if (!sql.trim()) {
    result.replaceChildren(element("p", "type a query first", "error"));
    return;
  }
  say("rewriting…");
  try {
    const response = await call("POST", "/v1/rewrite", { sql, explain: true });
    if (!response.ok) {
      result.replaceChildren(element("p", await errorText(response), "error"));
      say("");
      return;
    }
    showRewrite(result, await response.json());
    say("rewritten at " + new Date().toLocaleTimeString());
  } catch (error) {
    if (!(error instanceof Unauthorized)) say("could not reach the service: " + error.message, true);
  }
}

// The first query: an example from the served models (a built tile answers it), shown once and
// only in an empty box, so nothing the user typed is replaced.
async function loadExample() {
  const box = document.getElementById("sql");
  if (!box || box.value.trim()) return;
  try {
    const response = await call("GET", "/ui/part/example");
    if (!response.ok) return; // the playground works without an example
    const doc = await response.json();
    if (!doc.sql || box.value.trim()) return;
    box.value = doc.sql;
    const where = doc.model ? " (model " + doc.model + ")" : "";
    document.getElementById("example-note").textContent = doc.tiles.length
      ? "An example" + where + " that the tile " + doc.tiles.join(", ") +
        " answers: Run shows its rows, Rewrite the SQL sent to the tile."
      : "An example" + where + ": no built tile answers it yet, so Spark reads the tables.";
  } catch (error) {
    if (!(error instanceof Unauthorized)) say("could not load an example: " + error.message, true);
  }
}

function answerTable(doc) {
  const table = element("table", undefined, "answer");
  table.id = "answer";
  const head = table.createTHead().insertRow();
  for (const name of doc.columns) head.appendChild(element("th", name));
  const body = table.createTBody();
  for (const values of doc.rows) {
    const row = body.insertRow();
    for (const value of values) row.insertCell().textContent = value === null ? "NULL" : value;
  }
  return table;
}

function showAnswer(result, doc) {
  result.replaceChildren();
  const verdict = element(
    "p",
    doc.rewritten ? "Answered from " + doc.materializations.join(", ") : "Answered from the tables",
    doc.rewritten ? "verdict hit" : "verdict miss",
  );
  verdict.id = "verdict";
  const engine = doc.engine === "local" ? "tile engine" : "Spark";
  const more = doc.truncated ? " (the first " + doc.row_count + ")" : "";
  const ms = Math.round(doc.elapsed_ms).toLocaleString("en");
  result.append(
    verdict,
    element("p", doc.row_count + " rows" + more + " · " + engine + " · " + ms + " ms", "meta"),
    answerTable(doc),
    element("h2", "SQL that ran"),
  );
  const sql = element("pre", doc.sql, "sql");
  sql.id = "rewritten-sql";
  result.appendChild(sql);
}

async function run() {
  const result = document.getElementById("rewrite-result");
  const sql = document.getElementById("sql").value;
  if (!sql.trim()) {
    result.replaceChildren(element("p", "type a query first", "error"));
    return;
  }
  say("running…");
  try {
    const response = await call("POST", "/v1/query", { sql, limit: 100 });
    if (!response.ok) {
      result.replaceChildren(element("p", await errorText(response), "error"));
      say("");
      return;
    }
    showAnswer(result, await response.json());
    say("answered at " + new Date().toLocaleTimeString());
  } catch (error) {
    if (!(error instanceof Unauthorized)) say("could not reach the service: " + error.message, true);
  }
}

// -- wiring -----------------------------------------------------------------------------------
function start() {
  const form = document.getElementById("token-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const given = document.getElementById("token").value.trim();
    if (!given) return;
    sessionStorage.setItem(TOKEN_KEY, given);
    document.getElementById("token").value = "";
    form.hidden = true;
    say("token kept for this tab");
    shown = null;
    loadPart();
    loadExample();
  });
  document.getElementById("token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    askForToken("token forgotten");
  });
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.refresh");
    if (button && !button.disabled) refresh(button);
  });
  const playground = document.getElementById("playground");
  if (playground) {
    playground.addEventListener("submit", rewrite);
    document.getElementById("run").addEventListener("click", run);
  }
  if (needsToken() && !token()) {
    askForToken("paste the service's bearer token to see its status");
    return;
  }
  loadPart();
  loadExample();
}

document.addEventListener("DOMContentLoaded", start);

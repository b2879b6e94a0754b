// agui-gateway run inspector: threads and runs, one run's live timeline, the kit's verdicts.
// Plain JavaScript, no framework, no build step. Everything shown is written as text (never as
// HTML). Data comes from the gateway's own endpoints (README "Inspector"):
//   GET  /inspect/api/threads, /inspect/api/runs?threadId=, /inspect/api/verdicts?threadId=&runId=
//   POST /api/v1/agent/runs/{thread}/token?runId=   a scoped token for the EventSource
//   GET  /api/v1/agent/runs/{thread}/events?runId=&access_token=[&lastEventId=]   AG-UI SSE
// The conformance rules live on the server (gateway/inspect/verdicts.py); none is ported here.
'use strict';

const KEY_STORAGE = 'agui-gateway-inspector-key';
const POLL_MS = 1500;
const VERDICT_DELAY_MS = 250;
const MAX_RETRIES = 5;
const RETRY_MS = 1000;
// AG-UI 1.0 event types (ag_ui.core EventType): the events endpoint names each frame
// `event: <TYPE>`, and an EventSource dispatches a named event only to its own listener.
const EVENT_TYPES = [
  'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TEXT_MESSAGE_CHUNK',
  'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_CHUNK', 'TOOL_CALL_RESULT',
  'STATE_SNAPSHOT', 'STATE_DELTA', 'MESSAGES_SNAPSHOT', 'ACTIVITY_SNAPSHOT', 'ACTIVITY_DELTA',
  'RAW', 'CUSTOM', 'RUN_STARTED', 'RUN_FINISHED', 'RUN_ERROR', 'STEP_STARTED', 'STEP_FINISHED',
  'REASONING_START', 'REASONING_MESSAGE_START', 'REASONING_MESSAGE_CONTENT',
  'REASONING_MESSAGE_END', 'REASONING_MESSAGE_CHUNK', 'REASONING_END',
  'REASONING_ENCRYPTED_VALUE', 'SUBAGENT_STARTED', 'SUBAGENT_FINISHED', 'SUBAGENT_ERROR',
];
const TERMINAL = new Set(['RUN_FINISHED', 'RUN_ERROR']);
const DELTAS = new Set([
  'TEXT_MESSAGE_CONTENT', 'TOOL_CALL_ARGS', 'REASONING_MESSAGE_CONTENT', 'TEXT_MESSAGE_CHUNK',
  'TOOL_CALL_CHUNK', 'REASONING_MESSAGE_CHUNK',
]);

const $ = (selector) => document.querySelector(selector);

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
  }
  return node;
}

function pretty(value) {
  if (typeof value === 'string') {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  return JSON.stringify(value, null, 2);
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

function notice(text) {
  $('#notice').textContent = text || '';
}

// -- the key and the JSON endpoints ------------------------------------------------------------

class AuthError extends Error {}

function authHeaders() {
  const key = sessionStorage.getItem(KEY_STORAGE);
  return key ? { authorization: `Bearer ${key}` } : {};
}

function askForKey(reason) {
  $('#key-form').hidden = false;
  $('#key-note').textContent = reason;
  $('#key').focus();
}

async function api(path, method = 'GET') {
  const response = await fetch(path, { method, headers: authHeaders(), cache: 'no-store' });
  if (response.status === 401) {
    sessionStorage.removeItem(KEY_STORAGE);
    askForKey('this gateway asks for an API key');
    throw new AuthError('unauthenticated');
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = body.error || {};
    throw new Error(`${response.status} ${error.code || ''} ${error.message || ''}`.trim());
  }
  return body;
}

const q = encodeURIComponent;

// -- threads and runs ----------------------------------------------------------------------------

const view = { thread: null, run: null };

function outcomeText(run) {
  if (run.error) return run.error.code || 'error';
  return { completed: 'finished', queued: 'queued', running: 'running' }[run.status] || run.status;
}

async function refreshThreads() {
  const body = await api('/inspect/api/threads');
  const list = $('#threads');
  list.replaceChildren(...body.threads.map((t) => el('li', {
    class: t.threadId === view.thread ? 'selected' : '',
    'data-thread-id': t.threadId,
    onclick: () => selectThread(t.threadId),
  }, t.threadId, el('span', { class: 'sub', text: `${t.runs} run(s), last ${when(t.lastRunAt)}` }))));
  if (!body.threads.length) list.append(el('li', { class: 'sub', text: 'no runs recorded yet' }));
}

async function refreshRuns() {
  if (view.thread === null) return;
  const body = await api(`/inspect/api/runs?threadId=${q(view.thread)}`);
  $('#runs-title').textContent = `Runs of ${view.thread}`;
  $('#runs').replaceChildren(...body.runs.map((run) => el('li', {
    class: run.runId === view.run ? 'selected' : '',
    'data-run-id': run.runId,
    onclick: () => openRun(view.thread, run.runId, null),
  }, run.runId, ' ',
  el('span', { class: `badge status-${run.status}`, text: run.status }),
  el('span', { class: 'sub', text: `${when(run.startedAt)} \u00b7 ${outcomeText(run)}` }))));
}

function selectThread(threadId) {
  view.thread = threadId;
  for (const li of document.querySelectorAll('#threads li')) {
    li.classList.toggle('selected', li.dataset.threadId === threadId);
  }
  refreshRuns().catch(report);
}

function report(error) {
  if (!(error instanceof AuthError)) notice(String(error.message || error));
}

async function poll() {
  try {
    await refreshThreads();
    await refreshRuns();
  } catch (error) {
    report(error);
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

// -- one run: the stream, the conversation, the timeline -------------------------------------

let stream = null; // { source, threadId, runId, rows: Map(cursor -> tr), ... }

function closeStream() {
  if (stream && stream.source) stream.source.close();
  if (stream) clearTimeout(stream.verdictTimer);
  stream = null;
}

async function openRun(threadId, runId, after) {
  closeStream();
  view.run = runId;
  for (const li of document.querySelectorAll('#runs li')) {
    li.classList.toggle('selected', li.dataset.runId === runId);
  }
  const current = {
    threadId, runId, after, rows: new Map(), parts: new Map(),
    source: null, ended: false, verdictTimer: null, lastCursor: null, retries: 0,
  };
  stream = current;
  $('#run').hidden = false;
  $('#run-title').textContent = `Run ${runId} of thread ${threadId}`;
  $('#timeline tbody').replaceChildren();
  $('#conversation').replaceChildren();
  $('#stream-findings').replaceChildren();
  $('#state').textContent = '(no state)';
  for (const id of ['#run-outcome', '#run-usage', '#run-verdict']) $(id).textContent = '';
  setStatus(after ? `resumed after ${after}` : 'connecting', 'live');
  await connect(current);
  scheduleVerdicts(current);
}

// A fresh scoped token per connection: the EventSource's own reconnects reuse its URL, so when
// it gives up (a 401 once the token expired, a restart) the page mints another and goes on
// after the last cursor it received.
async function connect(current) {
  let minted;
  try {
    const path = `/api/v1/agent/runs/${q(current.threadId)}/token?runId=${q(current.runId)}`;
    minted = await api(path, 'POST');
  } catch (error) {
    report(error);
    setStatus('stream closed', 'error');
    return;
  }
  if (stream !== current) return;
  const from = current.lastCursor || current.after;
  const source = new EventSource(minted.eventsUrl + (from ? `&lastEventId=${q(from)}` : ''));
  current.source = source;
  const onEvent = (message) => receive(current, message);
  for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
  source.addEventListener('message', onEvent);
  source.addEventListener('open', () => {
    if (current.ended) return;
    current.retries = 0;
    setStatus(current.after ? `live, resumed after ${current.after}` : 'live', 'live');
  });
  source.addEventListener('error', () => {
    if (current.ended || stream !== current) return;
    if (source.readyState !== EventSource.CLOSED) {
      setStatus('reconnecting', 'warning');
    } else if (current.retries < MAX_RETRIES) {
      current.retries += 1;
      setStatus('reconnecting', 'warning');
      setTimeout(() => { if (stream === current) connect(current); }, RETRY_MS);
    } else {
      setStatus('stream closed', 'error');
    }
  });
}

function setStatus(text, kind) {
  const node = $('#stream-status');
  node.className = `badge ${kind}`;
  node.textContent = text;
}

function receive(current, message) {
  if (stream !== current) return;
  let event;
  try {
    event = JSON.parse(message.data);
  } catch {
    event = { type: '(not JSON)', raw: message.data };
  }
  if (message.lastEventId) current.lastCursor = message.lastEventId;
  addRow(current, message.lastEventId, event);
  apply(current, event);
  if (TERMINAL.has(event.type)) {
    current.ended = true;
    current.source.close(); // the endpoint closes after the terminal event: do not reconnect
    setStatus('ended', event.type === 'RUN_ERROR' ? 'error' : 'ok');
    showOutcome(event);
    fetchVerdicts(current);
    refreshRuns().catch(report);
  } else if (!DELTAS.has(event.type)) {
    scheduleVerdicts(current); // control events are durable once sent (docs/runs.md section 2)
  }
}

function summary(event) {
  const rest = { ...event };
  delete rest.type;
  const text = JSON.stringify(rest);
  return text.length > 240 ? `${text.slice(0, 240)}\u2026` : text;
}

function addRow(current, cursor, event) {
  const resume = el('button', {
    type: 'button', class: 'resume', title: 'reopen the stream after this event',
    onclick: () => openRun(current.threadId, current.runId, cursor),
  }, 'resume from here');
  const row = el('tr', { 'data-cursor': cursor || '', 'data-type': event.type },
    el('td', { class: 'cursor', text: cursor || '' }),
    el('td', { class: 'type', text: event.type }),
    el('td', { class: 'summary', text: summary(event) }),
    el('td', { class: 'kit' }),
    el('td', {}, cursor ? resume : null));
  $('#timeline tbody').append(row);
  if (cursor) current.rows.set(cursor, row);
}

// -- the conversation as it grows ------------------------------------------------------------

function part(current, key, make) {
  let node = current.parts.get(key);
  if (!node) {
    node = make();
    current.parts.set(key, node);
    $('#conversation').append(node.box);
  }
  return node;
}

function textPart(current, id, role, kind) {
  return part(current, `${kind}:${id}`, () => {
    const text = el('div', { class: 'text open' });
    const box = el('div', { class: kind, 'data-id': id },
      el('div', { class: 'role', text: kind === 'reasoning' ? 'reasoning' : role || 'assistant' }),
      text);
    return { box, text };
  });
}

function toolPart(current, id, name) {
  return part(current, `tool:${id}`, () => {
    const args = el('pre', { class: 'args open' });
    const result = el('pre', { class: 'result', hidden: '' });
    const title = el('div', { class: 'name', text: `tool call ${name || ''} (${id})` });
    const box = el('div', { class: 'tool', 'data-id': id }, title, args, result);
    return { box, args, result, raw: '' };
  });
}

function apply(current, ev) {
  switch (ev.type) {
    case 'TEXT_MESSAGE_START':
      textPart(current, ev.messageId, ev.role, 'msg');
      break;
    case 'TEXT_MESSAGE_CONTENT':
    case 'TEXT_MESSAGE_CHUNK':
      if (ev.delta) textPart(current, ev.messageId, ev.role, 'msg').text.append(ev.delta);
      break;
    case 'TEXT_MESSAGE_END':
      textPart(current, ev.messageId, null, 'msg').text.classList.remove('open');
      break;
    case 'REASONING_MESSAGE_START':
      textPart(current, ev.messageId, null, 'reasoning');
      break;
    case 'REASONING_MESSAGE_CONTENT':
    case 'REASONING_MESSAGE_CHUNK':
      if (ev.delta) textPart(current, ev.messageId, null, 'reasoning').text.append(ev.delta);
      break;
    case 'REASONING_MESSAGE_END':
      textPart(current, ev.messageId, null, 'reasoning').text.classList.remove('open');
      break;
    case 'TOOL_CALL_START':
      toolPart(current, ev.toolCallId, ev.toolCallName);
      break;
    case 'TOOL_CALL_ARGS':
    case 'TOOL_CALL_CHUNK': {
      const tool = toolPart(current, ev.toolCallId, ev.toolCallName);
      tool.raw += ev.delta || '';
      tool.args.textContent = tool.raw;
      break;
    }
    case 'TOOL_CALL_END': {
      const tool = toolPart(current, ev.toolCallId);
      tool.args.classList.remove('open');
      tool.args.textContent = pretty(tool.raw);
      break;
    }
    case 'TOOL_CALL_RESULT': {
      const tool = toolPart(current, ev.toolCallId);
      tool.result.hidden = false;
      tool.result.textContent = `result: ${pretty(ev.content)}`;
      const schema = ev.metadata && ev.metadata.ui_schema;
      if (schema && Array.isArray(schema.messages)) {
        surface(current, `result:${ev.toolCallId}`, schema.messages);
      }
      break;
    }
    case 'ACTIVITY_SNAPSHOT': {
      const ops = ev.content && ev.content.a2ui_operations;
      if (Array.isArray(ops)) surface(current, ev.messageId, ops);
      break;
    }
    default:
      break;
  }
}

function showOutcome(ev) {
  if (ev.type === 'RUN_ERROR') {
    $('#run-outcome').textContent = `RUN_ERROR ${ev.code || ''}: ${ev.message || ''}`;
  } else {
    const meta = ev.metadata || {};
    const outcome = ev.outcome ? ev.outcome.type : 'success';
    const reason = meta.finishReason ? ` (${meta.finishReason})` : '';
    const repairs = meta.repairs ? `; gateway repairs: ${JSON.stringify(meta.repairs)}` : '';
    $('#run-outcome').textContent = `RUN_FINISHED: ${outcome}${reason}${repairs}`;
  }
  const usage = Array.isArray(ev.usage) ? ev.usage : [];
  const tokens = usage.map((u) => `${u.model || 'usage'}: ${u.inputTokens ?? '?'} in / `
    + `${u.outputTokens ?? '?'} out`).join('; ');
  const meta = ev.metadata || {};
  const cost = typeof meta.cost === 'number' ? `cost ${meta.cost} ${meta.currency || 'USD'}`
    : (meta.costWarning ? `cost unknown: ${meta.costWarning}` : '');
  $('#run-usage').textContent = [tokens, cost].filter(Boolean).join(' \u00b7 ');
}

// -- A2UI surfaces: a generic rendering of the component tree (A2UI v0.9 basic catalog) -------

function surface(current, key, ops) {
  const model = { components: new Map(), data: {} };
  for (const op of ops) {
    if (op.updateComponents) {
      for (const c of op.updateComponents.components || []) model.components.set(c.id, c);
    }
    if (op.updateDataModel) setPath(model, op.updateDataModel.path, op.updateDataModel.value);
  }
  const node = part(current, `surface:${key}`, () => {
    const body = el('div', { class: 'body' });
    const box = el('div', { class: 'surface', 'data-id': key },
      el('div', { class: 'name', text: 'A2UI surface' }), body);
    return { box, body };
  });
  node.body.replaceChildren(renderComponent(model, 'root', '', 0));
}

function setPath(model, path, value) {
  if (!path || path === '/') {
    model.data = value;
    return;
  }
  const keys = path.split('/').slice(1);
  let target = model.data;
  for (const key of keys.slice(0, -1)) {
    if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
    target = target[key];
  }
  target[keys[keys.length - 1]] = value;
}

function lookup(model, path, base) {
  const absolute = path.startsWith('/') ? path : `${base}/${path}`;
  let value = model.data;
  for (const key of absolute.split('/').slice(1)) {
    if (key === '') continue;
    if (value === null || typeof value !== 'object') return undefined;
    value = value[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

function resolve(model, value, base) {
  if (value === null || typeof value !== 'object') return value;
  if (typeof value.path === 'string') return lookup(model, value.path, base);
  if (typeof value.call === 'string') {
    const args = value.args || {};
    const shown = 'value' in args ? resolve(model, args.value, base) : '';
    return [shown, args.currency || ''].filter((s) => s !== '').join(' ');
  }
  return JSON.stringify(value);
}

function renderComponent(model, id, base, depth) {
  const c = model.components.get(id);
  if (!c || depth > 40) return el('span', { class: 'caption', text: `(missing ${id})` });
  const kind = c.component || '?';
  const node = el('div', { class: `a2ui a2ui-${kind} ${c.variant || ''}`, 'data-component': id },
    el('span', { class: 'kind', text: kind }));
  for (const prop of ['text', 'label', 'url', 'value']) {
    if (prop in c) {
      const shown = resolve(model, c[prop], base);
      node.append(el('span', { class: prop, text: shown === undefined ? '' : String(shown) }));
    }
  }
  if (typeof c.child === 'string') node.append(renderComponent(model, c.child, base, depth + 1));
  if (Array.isArray(c.children)) {
    for (const child of c.children) node.append(renderComponent(model, child, base, depth + 1));
  } else if (c.children && typeof c.children === 'object') {
    // a template: the component once per item of the list at `path`
    const { componentId, path } = c.children;
    const items = lookup(model, path || '', base);
    const listBase = path && path.startsWith('/') ? path : `${base}/${path}`;
    (Array.isArray(items) ? items : []).forEach((_item, index) => {
      node.append(renderComponent(model, componentId, `${listBase}/${index}`, depth + 1));
    });
  }
  return node;
}

// -- the kit's verdicts ------------------------------------------------------------------------

function scheduleVerdicts(current) {
  clearTimeout(current.verdictTimer);
  current.verdictTimer = setTimeout(() => fetchVerdicts(current), VERDICT_DELAY_MS);
}

function cursorKey(cursor) {
  const [epoch, seq] = String(cursor).split('.');
  return [Number(epoch), Number(seq)];
}

function notAfter(cursor, last) {
  if (!last) return false;
  const [e1, s1] = cursorKey(cursor);
  const [e2, s2] = cursorKey(last);
  return e1 < e2 || (e1 === e2 && s1 <= s2);
}

async function fetchVerdicts(current) {
  let body;
  try {
    body = await api(`/inspect/api/verdicts?threadId=${q(current.threadId)}&runId=${q(current.runId)}`);
  } catch (error) {
    report(error);
    return;
  }
  if (stream !== current) return;
  const byCursor = new Map();
  const streamLevel = [];
  for (const finding of body.findings) {
    if (finding.cursor === null) streamLevel.push(finding);
    else byCursor.set(finding.cursor, [...(byCursor.get(finding.cursor) || []), finding]);
  }
  for (const [cursor, row] of current.rows) {
    const cell = row.querySelector('td.kit');
    const found = byCursor.get(cursor) || [];
    row.classList.remove('violation-error', 'violation-warning', 'violation-info');
    if (found.length) {
      const worst = ['error', 'warning', 'info'].find((s) => found.some((f) => f.severity === s));
      row.classList.add(`violation-${worst}`);
      cell.replaceChildren(...found.map((f) => el('span', {
        class: `finding badge ${f.severity}`, title: f.message, 'data-rule': f.rule,
      }, `${f.severity}: ${f.rule}`, el('span', { class: 'finding-message', text: f.message }))));
    } else if (notAfter(cursor, body.lastCursor)) {
      cell.replaceChildren(el('span', { class: 'badge ok', text: 'ok' }));
    }
  }
  $('#stream-findings').replaceChildren(...streamLevel.map((f) => el('li', {
    class: f.severity, 'data-rule': f.rule,
  }, `${f.severity}: ${f.rule}: ${f.message}`)));
  const counts = ['error', 'warning', 'info'].map(
    (s) => `${body.findings.filter((f) => f.severity === s).length} ${s}`).join(', ');
  const verdict = body.rejected ? 'rejected by @ag-ui/client 1.0.0' : 'accepted by @ag-ui/client 1.0.0';
  const node = $('#run-verdict');
  const warned = body.findings.some((f) => f.severity === 'warning');
  node.className = `badge ${body.rejected ? 'error' : (warned ? 'warning' : 'ok')}`;
  node.textContent = `kit (${body.events} stored events): ${verdict}; ${counts}`
    + (body.truncated ? ' (first events only)' : '');
  if ('state' in body) $('#state').textContent = pretty(body.state);
}

// -- start -------------------------------------------------------------------------------------

function start() {
  $('#key-form').addEventListener('submit', (submit) => {
    submit.preventDefault();
    const key = $('#key').value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_STORAGE, key);
    $('#key').value = '';
    $('#key-form').hidden = true;
    $('#key-forget').hidden = false;
    notice('');
  });
  $('#key-forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY_STORAGE);
    closeStream();
    $('#key-forget').hidden = true;
    askForKey('key forgotten');
  });
  $('#key-forget').hidden = !sessionStorage.getItem(KEY_STORAGE);
  poll();
}

start();

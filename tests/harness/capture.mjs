// Per-job capture of console output and process warnings.
//
// Jobs run concurrently, so console.* is patched once and each call is routed
// to the job whose async context made it (AsyncLocalStorage follows promise
// continuations, rxjs callbacks driven by fetch reads and WHATWG stream pumps).
// Nothing a client library prints may reach stdout: stdout carries the one
// JSON result object.

import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';

const storage = new AsyncLocalStorage();
const original = {
  log: console.log,
  info: console.info,
  debug: console.debug,
  warn: console.warn,
  error: console.error,
  emitWarning: process.emitWarning,
};

/** Messages printed outside any job (e.g. after a timed-out job was abandoned). */
export const unattributed = [];

function route(kind, text) {
  const store = storage.getStore();
  if (store) {
    (kind === 'warn' ? store.warnings : store.logs).push(
      kind === 'warn' ? text : `${kind}: ${text}`,
    );
  } else {
    unattributed.push(`${kind}: ${text}`);
  }
}

let installed = false;

/** Patch console.* and process.emitWarning (idempotent). */
export function installCapture() {
  if (installed) return;
  installed = true;
  console.log = (...a) => route('log', format(...a));
  console.info = (...a) => route('info', format(...a));
  console.debug = (...a) => route('debug', format(...a));
  console.warn = (...a) => route('warn', format(...a));
  console.error = (...a) => route('error', format(...a));
  process.emitWarning = (warning, ...rest) => {
    const text =
      warning instanceof Error
        ? `${warning.name}: ${warning.message}`
        : `${typeof rest[0] === 'string' ? rest[0] : 'Warning'}: ${String(warning)}`;
    route('warn', text);
  };
}

/** A fresh capture store: what the job printed, by kind. */
export function newStore() {
  return { warnings: [], logs: [] };
}

/** Run fn (returning a promise) with console output routed into store. */
export function runCaptured(store, fn) {
  return storage.run(store, fn);
}

/** Write to the real stderr, bypassing the capture. */
export function stderr(...a) {
  process.stderr.write(format(...a) + '\n');
}

#!/usr/bin/env node
// Replays raw SSE response bodies through the real JS clients.
//
//   node replay.mjs            < request.json  > response.json
//   node replay.mjs --self-test                 (table; exit 1 on mismatch)
//
// Request (stdin, one JSON object):
//   {"jobs": [{"id": "j1", "client": "agui"|"ai-v7"|"ai-v6"|"ai-v5",
//              "body_b64": "<SSE bytes, base64>",
//              // optional:
//              "chunk_size": 7,            // serve the body in pieces of N bytes
//              "hold_open": true,          // never end the response (client must time out)
//              "timeout_ms": 300,          // this job's timeout
//              "initial_messages": [...],  // client-native messages already in the chat
//              "prompt": "..."}],          // AI SDK user text (default "replay")
//    "timeout_ms": 30000,                  // per job (default 30000)
//    "concurrency": 8}                     // jobs in flight (default 8)
//
// Response (stdout, one JSON object):
//   {"results": [{"id", "client", "accepted", "error", "streamError",
//                 "messages", "warnings", "logs", "harnessError", ...client extras}],
//    "meta": {"node", "versions", "unattributed"}}
// See README.md for the meaning of each field.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installCapture, newStore, runCaptured, stderr, unattributed } from './capture.mjs';
import { CLIENTS, RUNNERS, formatError, responseHeaders } from './clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// Generous: a timeout is no verdict, and a loaded CI machine takes seconds for a big stream.
const DEFAULT_TIMEOUT_MS = 30000;
const DEFAULT_CONCURRENCY = 8;
const TIMEOUT = Symbol('timeout');

class UsageError extends Error {}

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', chunk => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

function clientVersions() {
  const versions = {};
  for (const name of ['@ag-ui/client', '@ag-ui/core', 'ai', 'ai-v6', 'ai-v5', 'zod']) {
    try {
      const pkg = JSON.parse(
        fs.readFileSync(path.join(HERE, 'node_modules', name, 'package.json'), 'utf8'),
      );
      versions[name] = pkg.version;
    } catch {
      versions[name] = null;
    }
  }
  return versions;
}

/** Validate the request; returns normalised jobs or throws UsageError. */
function parseRequest(request) {
  if (request == null || typeof request !== 'object' || !Array.isArray(request.jobs)) {
    throw new UsageError('request must be an object with a "jobs" array');
  }
  const seen = new Set();
  const jobs = request.jobs.map((job, index) => {
    const where = `jobs[${index}]`;
    if (job == null || typeof job !== 'object') throw new UsageError(`${where} is not an object`);
    if (typeof job.id !== 'string' || job.id === '') throw new UsageError(`${where}.id must be a non-empty string`);
    if (seen.has(job.id)) throw new UsageError(`${where}.id ${JSON.stringify(job.id)} is duplicated`);
    seen.add(job.id);
    if (!CLIENTS.includes(job.client)) {
      throw new UsageError(`${where}.client must be one of ${CLIENTS.join(', ')}; got ${JSON.stringify(job.client)}`);
    }
    if (typeof job.body_b64 !== 'string') throw new UsageError(`${where}.body_b64 must be a base64 string`);
    if (job.chunk_size != null && !(Number.isInteger(job.chunk_size) && job.chunk_size > 0)) {
      throw new UsageError(`${where}.chunk_size must be a positive integer`);
    }
    if (job.timeout_ms != null && !(Number.isFinite(job.timeout_ms) && job.timeout_ms > 0)) {
      throw new UsageError(`${where}.timeout_ms must be a positive number`);
    }
    return { ...job, body: Buffer.from(job.body_b64, 'base64') };
  });
  const timeoutMs = request.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  const concurrency = request.concurrency ?? DEFAULT_CONCURRENCY;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new UsageError('timeout_ms must be a positive number');
  if (!(Number.isInteger(concurrency) && concurrency > 0)) throw new UsageError('concurrency must be a positive integer');
  return { jobs, timeoutMs, concurrency };
}

/** One local server; job i is served at /job/i (any method, request body ignored). */
function startServer(jobs) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const match = /^\/job\/(\d+)(?:[/?#]|$)/.exec(req.url ?? '');
      const job = match ? jobs[Number(match[1])] : undefined;
      if (!job || req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such job');
        return;
      }
      res.writeHead(200, responseHeaders(job.client));
      const finish = () => {
        if (!job.hold_open) res.end();
      };
      if (!job.chunk_size) {
        res.write(job.body);
        finish();
        return;
      }
      let offset = 0;
      const pump = () => {
        if (res.destroyed) return;
        if (offset >= job.body.length) {
          finish();
          return;
        }
        res.write(job.body.subarray(offset, offset + job.chunk_size));
        offset += job.chunk_size;
        setImmediate(pump);
      };
      pump();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function runJob(base, job, index, timeoutMs) {
  const store = newStore();
  const control = { abort: null, snapshot: null };
  const url = `${base}/job/${index}`;
  let timer;
  const work = runCaptured(store, () => RUNNERS[job.client](url, job, control));
  work.catch(() => {}); // a late failure after a timeout is not unhandled
  const timeout = new Promise(resolve => {
    timer = setTimeout(() => resolve(TIMEOUT), timeoutMs);
  });
  let outcome;
  let harnessError = null;
  try {
    outcome = await Promise.race([work, timeout]);
  } catch (error) {
    harnessError = error;
  } finally {
    clearTimeout(timer);
  }
  let result;
  if (harnessError) {
    result = {
      accepted: false,
      error: `harness error: ${formatError(harnessError)}`,
      streamError: null,
      messages: [],
      harnessError: true,
    };
  } else if (outcome === TIMEOUT) {
    let messages = [];
    try {
      messages = control.snapshot?.() ?? [];
      control.abort?.();
    } catch {
      // best effort: the job is abandoned either way
    }
    result = { accepted: false, error: 'timeout', streamError: null, messages };
  } else {
    result = outcome;
  }
  return {
    id: job.id,
    client: job.client,
    harnessError: false,
    ...result,
    warnings: [...store.warnings],
    logs: [...store.logs],
  };
}

/**
 * Replay jobs [{id, client, body: Buffer, ...}] through the real clients.
 * Returns results in job order.
 */
export async function replayJobs(jobs, { timeoutMs = DEFAULT_TIMEOUT_MS, concurrency = DEFAULT_CONCURRENCY } = {}) {
  installCapture();
  const server = await startServer(jobs);
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await runJob(base, jobs[index], index, jobs[index].timeout_ms ?? timeoutMs);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
  return results;
}

function writeAndExit(text, code) {
  process.stdout.write(text, () => process.exit(code));
}

async function main(argv) {
  process.on('unhandledRejection', reason => {
    unattributed.push(`unhandledRejection: ${formatError(reason)}`);
  });
  if (argv.includes('--self-test')) {
    const { selfTest } = await import('./self-test.mjs');
    const ok = await selfTest(replayJobs, { verbose: argv.includes('--verbose') });
    process.exit(ok ? 0 : 1);
  }
  let request;
  try {
    const text = await readStdin();
    try {
      request = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`stdin is not JSON: ${error.message}`);
    }
    const { jobs, timeoutMs, concurrency } = parseRequest(request);
    const results = await replayJobs(jobs, { timeoutMs, concurrency });
    const response = {
      results,
      meta: { node: process.version, versions: clientVersions(), unattributed: [...unattributed] },
    };
    writeAndExit(JSON.stringify(response) + '\n', 0);
  } catch (error) {
    if (error instanceof UsageError) {
      stderr(`replay.mjs: bad request: ${error.message}`);
      process.exit(2);
    }
    stderr(`replay.mjs: ${error?.stack ?? error}`);
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2));
}

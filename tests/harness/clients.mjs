// The real client code paths, one runner per client.
//
// Each runner is handed the URL of a local endpoint that answers with the
// job's SSE bytes and drives the client exactly as a browser app would: the
// client's own fetch, SSE parsing, schema validation, verification and
// message building. Nothing here parses or judges the stream itself; the
// only additions are observers (subscriber callbacks, a pass-through that
// notes `error` chunks) used to tell the outcomes apart.

import { HttpAgent } from '@ag-ui/client';

/** Longest error text reported (TypeValidationError messages embed the value). */
const MAX_ERROR_CHARS = 4000;

/** "Name: message (cause: ...)" for an error, or null. */
export function formatError(error) {
  if (error == null) return null;
  let text;
  if (error instanceof Error) {
    text = `${error.name}: ${error.message}`;
    if (error.cause != null && !String(error.message).includes(String(error.cause?.message ?? error.cause))) {
      text += ` (cause: ${formatError(error.cause)})`;
    }
  } else {
    text = String(error);
  }
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

/** JSON-safe deep copy (drops undefined, functions). */
function plain(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

// ---------------------------------------------------------------------------
// AG-UI: @ag-ui/client HttpAgent.runAgent
// ---------------------------------------------------------------------------

/**
 * Replay through `new HttpAgent({url}).runAgent()`.
 *
 * Pipeline inside the client (node_modules/@ag-ui/client, sources in
 * dist/index.mjs.map): fetch (src/run/http-request.ts) -> SSE split on "\n\n",
 * data: lines, JSON.parse (src/transform/sse.ts, src/transform/http.ts) ->
 * CompatibilityBoundary middleware (legacy nulls, THINKING_*) -> enforceEvents
 * (unknown type dropped with console.warn, unknown keys stripped with
 * console.warn, malformed known field -> zod error) -> transformChunks ->
 * verifyEvents (AGUIError) -> defaultApplyEvents -> agent.messages.
 * Any error in that pipeline reaches catchError -> onError -> subscribers'
 * onRunFailed, console.error("Agent execution failed:"), and runAgent rejects.
 * RUN_ERROR events do NOT reject: they reach onRunErrorEvent.
 */
export async function runAgui(url, job, control) {
  const agent = new HttpAgent({
    url,
    threadId: job.thread_id ?? `thread-${job.id}`,
    initialMessages: job.initial_messages ?? [],
  });
  control.abort = () => agent.abortRun();
  control.snapshot = () => plain(agent.messages) ?? [];

  let failed = null;
  const runErrors = [];
  let thrown = null;
  let runResult;
  try {
    runResult = await agent.runAgent(
      { runId: job.run_id ?? `run-${job.id}` },
      {
        onRunFailed: ({ error }) => {
          failed = error;
        },
        onRunErrorEvent: ({ event }) => {
          runErrors.push({ message: event.message, code: event.code ?? null });
        },
      },
    );
  } catch (error) {
    thrown = error;
  }
  const error = thrown ?? failed;
  return {
    accepted: error == null,
    error: formatError(error),
    streamError: runErrors.length > 0 ? runErrors[0].message : null,
    runErrors,
    messages: plain(agent.messages) ?? [],
    state: plain(agent.state) ?? null,
    result: plain(runResult?.result) ?? null,
    pendingInterrupts: plain(agent.pendingInterrupts) ?? [],
  };
}

// ---------------------------------------------------------------------------
// AI SDK: AbstractChat (what useChat wraps) + DefaultChatTransport
// ---------------------------------------------------------------------------

const SDK_MODULES = {
  'ai-v7': 'ai',
  'ai-v6': 'ai-v6',
  'ai-v5': 'ai-v5',
};

const sdkCache = new Map();

/**
 * The classes for one AI SDK major, built once.
 *
 * MemoryChatState mirrors @ai-sdk/react's ReactChatState (chat.react.ts):
 * messages replaced immutably, replaceMessage stores a structuredClone
 * snapshot, snapshot = structuredClone.
 *
 * ObservingTransport is DefaultChatTransport unchanged (parseJsonEventStream
 * with uiMessageChunkSchema, throw on a failed parse) plus a pass-through
 * after it that records the errorText of `error` chunks, so an `error` chunk
 * (legal end, chat.error = new Error(errorText)) can be told apart from a
 * rejected stream (chat.error = validation / processing error).
 */
async function loadSdk(client) {
  if (sdkCache.has(client)) return sdkCache.get(client);
  const sdk = await import(SDK_MODULES[client]);
  const { AbstractChat, DefaultChatTransport } = sdk;

  class MemoryChatState {
    constructor(messages = []) {
      this.messages = messages;
      this.status = 'ready';
      this.error = undefined;
    }
    pushMessage = message => {
      this.messages = this.messages.concat(message);
    };
    popMessage = () => {
      this.messages = this.messages.slice(0, -1);
    };
    replaceMessage = (index, message) => {
      this.messages = [
        ...this.messages.slice(0, index),
        this.snapshot(message),
        ...this.messages.slice(index + 1),
      ];
    };
    snapshot = value => structuredClone(value);
  }

  class ObservingTransport extends DefaultChatTransport {
    constructor(options, seen) {
      super(options);
      this.seen = seen;
    }
    processResponseStream(stream) {
      const seen = this.seen;
      return super.processResponseStream(stream).pipeThrough(
        new TransformStream({
          transform(chunk, controller) {
            seen.chunkTypes.push(chunk.type);
            if (chunk.type === 'error') seen.errorTexts.push(chunk.errorText);
            controller.enqueue(chunk);
          },
        }),
      );
    }
  }

  class HarnessChat extends AbstractChat {
    constructor({ messages, ...init }) {
      super({ ...init, state: new MemoryChatState(messages) });
    }
  }

  const classes = { sdk, HarnessChat, ObservingTransport };
  sdkCache.set(client, classes);
  return classes;
}

/**
 * Replay through `chat.sendMessage(...)` on an AbstractChat subclass with a
 * DefaultChatTransport pointed at the local endpoint (POST, JSON body
 * {id, messages, trigger, messageId}). Chat path (node_modules/ai, ai-v6: src/ui/; ai-v5: dist/index.mjs.map):
 * chat.ts makeRequest -> http-chat-transport.ts sendMessages -> fetch ->
 * default-chat-transport.ts processResponseStream (parseJsonEventStream +
 * uiMessageChunkSchema) -> process-ui-message-stream.ts (state machine,
 * UIMessageStreamError / Error on a delta for a part never started, ...) ->
 * chat state. Errors end as chat.status 'error' / chat.error.
 *
 * With job.initial_messages ending in an assistant message, the request is
 * a continuation (`sendMessage()` with no message, as after addToolOutput or
 * an approval); otherwise a user message with text job.prompt ("replay").
 */
export async function runAiSdk(client, url, job, control) {
  const { HarnessChat, ObservingTransport } = await loadSdk(client);
  const seen = { errorTexts: [], chunkTypes: [] };
  let counter = 0;
  let finish = null;
  const chat = new HarnessChat({
    id: job.chat_id ?? `chat-${job.id}`,
    messages: structuredClone(job.initial_messages ?? []),
    generateId: () => `gen-${++counter}`,
    transport: new ObservingTransport({ api: url }, seen),
    onFinish: ({ isAbort, isDisconnect, isError, finishReason }) => {
      finish = { isAbort, isDisconnect, isError, finishReason: finishReason ?? null };
    },
  });
  // The user message the harness sends is not part of the replayed output.
  const initialIds = new Set(chat.messages.map(message => message.id));
  const visible = () =>
    plain(
      chat.messages.filter(message => message.role !== 'user' || initialIds.has(message.id)),
    ) ?? [];
  control.abort = () => chat.stop();
  control.snapshot = visible;

  const last = chat.messages[chat.messages.length - 1];
  if (last?.role === 'assistant') {
    await chat.sendMessage();
  } else {
    await chat.sendMessage({ text: job.prompt ?? 'replay' });
  }

  const error = chat.error ?? null;
  const isErrorChunk =
    error != null && seen.errorTexts.length > 0 && error.message === seen.errorTexts[0];
  return {
    accepted: error == null || isErrorChunk,
    error: isErrorChunk ? null : formatError(error),
    streamError: isErrorChunk ? seen.errorTexts[0] : null,
    status: chat.status,
    finishReason: finish?.finishReason ?? null,
    isAbort: finish?.isAbort ?? null,
    messages: visible(),
  };
}

export const RUNNERS = {
  agui: (url, job, control) => runAgui(url, job, control),
  'ai-v7': (url, job, control) => runAiSdk('ai-v7', url, job, control),
  'ai-v6': (url, job, control) => runAiSdk('ai-v6', url, job, control),
  'ai-v5': (url, job, control) => runAiSdk('ai-v5', url, job, control),
};

export const CLIENTS = Object.keys(RUNNERS);

/** Response headers the local endpoint sends for each client. */
export function responseHeaders(client) {
  const headers = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  };
  if (client !== 'agui') headers['x-vercel-ai-ui-message-stream'] = 'v1';
  return headers;
}

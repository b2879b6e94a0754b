// Self-test: hand-written SSE bodies whose fate is known from each client's
// source. Proves the harness reports rejections as rejections (and accepts
// what the clients accept). Run: node replay.mjs --self-test [--verbose]

const agui = events => events.map(event => `data: ${JSON.stringify(event)}\n\n`).join('');
const aiSse = (chunks, { done = true } = {}) =>
  chunks.map(chunk => `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`).join('') +
  (done ? 'data: [DONE]\n\n' : '');

const RUN_STARTED = { type: 'RUN_STARTED', threadId: 't1', runId: 'r1', protocolVersion: '1.0' };
const RUN_FINISHED = { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' };
const TEXT = [
  { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hel' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'lo' },
  { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
];

const AI_TEXT = [
  { type: 'start', messageId: 'msg-1' },
  { type: 'start-step' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Hel' },
  { type: 'text-delta', id: 't1', delta: 'lo' },
  { type: 'text-end', id: 't1' },
  { type: 'finish-step' },
];
const AI = ['ai-v7', 'ai-v6', 'ai-v5'];

// expect: accepted (bool), and optionally:
//   text: the concatenated text of the final assistant message
//   streamError: exact stream error text
//   warning: RegExp one captured warning must match
//   error: RegExp the error must match
//   finishReason: expected finish reason (AI SDK)
export const CASES = [
  // ---- AG-UI ------------------------------------------------------------
  {
    name: 'agui good text run',
    clients: ['agui'],
    body: agui([RUN_STARTED, ...TEXT, RUN_FINISHED]),
    expect: { accepted: true, text: 'Hello' },
  },
  {
    name: 'agui good text, served 3 bytes at a time',
    clients: ['agui'],
    body: agui([RUN_STARTED, ...TEXT.slice(0, 1), { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'héllo ✓' }, TEXT[3], RUN_FINISHED]),
    chunkSize: 3,
    expect: { accepted: true, text: 'héllo ✓' },
  },
  {
    name: 'agui TEXT_MESSAGE_CONTENT without START',
    clients: ['agui'],
    body: agui([RUN_STARTED, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'x' }, RUN_FINISHED]),
    expect: { accepted: false, error: /No active text message|TEXT_MESSAGE_CONTENT/ },
  },
  {
    name: 'agui first event not RUN_STARTED',
    clients: ['agui'],
    body: agui([...TEXT, RUN_FINISHED]),
    expect: { accepted: false, error: /First event must be 'RUN_STARTED'/ },
  },
  {
    name: 'agui RUN_FINISHED with open message',
    clients: ['agui'],
    body: agui([RUN_STARTED, TEXT[0], TEXT[1], RUN_FINISHED]),
    expect: { accepted: false },
  },
  {
    name: 'agui TOOL_CALL_START parentMessageId:null (legacy null, converted)',
    clients: ['agui'],
    body: agui([
      RUN_STARTED,
      { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'f', parentMessageId: null },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{}' },
      { type: 'TOOL_CALL_END', toolCallId: 'c1' },
      RUN_FINISHED,
    ]),
    expect: { accepted: true, warning: /parentMessageId: null/ },
  },
  {
    name: 'agui TEXT_MESSAGE_START parentMessageId:null (not a legacy null)',
    clients: ['agui'],
    body: agui([RUN_STARTED, { ...TEXT[0], parentMessageId: null }, ...TEXT.slice(1), RUN_FINISHED]),
    expect: { accepted: true, warning: /parentMessageId/ },
  },
  {
    name: 'agui TEXT_MESSAGE_START subagentRunId:null',
    clients: ['agui'],
    body: agui([RUN_STARTED, { ...TEXT[0], subagentRunId: null }, ...TEXT.slice(1), RUN_FINISHED]),
    expect: { accepted: false },
  },
  {
    name: 'agui RUN_STARTED rawEvent:null (legacy null, converted)',
    clients: ['agui'],
    body: agui([{ ...RUN_STARTED, rawEvent: null }, RUN_FINISHED]),
    expect: { accepted: true, warning: /rawEvent: null/ },
  },
  {
    name: 'agui RUN_ERROR code:null',
    clients: ['agui'],
    body: agui([RUN_STARTED, { type: 'RUN_ERROR', message: 'boom', code: null }]),
    expect: { accepted: false },
  },
  {
    name: 'agui TEXT_MESSAGE_START role:null',
    clients: ['agui'],
    body: agui([RUN_STARTED, { ...TEXT[0], role: null }, ...TEXT.slice(1), RUN_FINISHED]),
    expect: { accepted: false },
  },
  {
    name: 'agui RUN_FINISHED outcome:null (legacy null, converted)',
    clients: ['agui'],
    body: agui([RUN_STARTED, { ...RUN_FINISHED, outcome: null }]),
    expect: { accepted: true, warning: /outcome: null/ },
  },
  {
    name: 'agui malformed known field (delta: 5)',
    clients: ['agui'],
    body: agui([RUN_STARTED, TEXT[0], { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 5 }, TEXT[3], RUN_FINISHED]),
    expect: { accepted: false },
  },
  {
    name: 'agui unknown event type (dropped, warned)',
    clients: ['agui'],
    body: agui([RUN_STARTED, { type: 'NOT_A_REAL_EVENT', x: 1 }, ...TEXT, RUN_FINISHED]),
    expect: { accepted: true, text: 'Hello', warning: /NOT_A_REAL_EVENT/ },
  },
  {
    name: 'agui removed THINKING_START (translated)',
    clients: ['agui'],
    body: agui([RUN_STARTED, { type: 'THINKING_START' }, { type: 'THINKING_END' }, RUN_FINISHED]),
    expect: { accepted: true, warning: /THINKING_START/ },
  },
  {
    name: 'agui RUN_ERROR after partial text',
    clients: ['agui'],
    body: agui([RUN_STARTED, TEXT[0], TEXT[1], { type: 'RUN_ERROR', message: 'upstream failed', code: 'x' }]),
    expect: { accepted: true, streamError: 'upstream failed' },
  },
  {
    name: 'agui event after RUN_ERROR',
    clients: ['agui'],
    body: agui([RUN_STARTED, { type: 'RUN_ERROR', message: 'boom' }, TEXT[0]]),
    expect: { accepted: false, error: /already errored/ },
  },
  {
    name: 'agui two runs in sequence',
    clients: ['agui'],
    body: agui([RUN_STARTED, RUN_FINISHED, { ...RUN_STARTED, runId: 'r2' }, ...TEXT, { ...RUN_FINISHED, runId: 'r2' }]),
    expect: { accepted: true, text: 'Hello' },
  },
  {
    name: 'agui CRLF framing',
    clients: ['agui'],
    body: agui([RUN_STARTED, ...TEXT, RUN_FINISHED]).replace(/\n/g, '\r\n'),
    expect: { accepted: false },
  },
  {
    name: 'agui non-JSON data line',
    clients: ['agui'],
    body: agui([RUN_STARTED]) + 'data: {not json\n\n',
    expect: { accepted: false },
  },
  {
    name: 'agui response never ends (timeout)',
    clients: ['agui'],
    body: agui([RUN_STARTED, TEXT[0], TEXT[1]]),
    holdOpen: true,
    timeoutMs: 300,
    expect: { accepted: false, error: /^timeout$/ },
  },
  // ---- AI SDK ------------------------------------------------------------
  {
    name: 'ai good text stream',
    clients: AI,
    body: aiSse([...AI_TEXT, { type: 'finish', finishReason: 'stop' }]),
    expect: { accepted: true, text: 'Hello', finishReason: 'stop' },
  },
  {
    name: 'ai good text, served 3 bytes at a time',
    clients: AI,
    body: aiSse([
      ...AI_TEXT.slice(0, 3),
      { type: 'text-delta', id: 't1', delta: 'héllo ✓' },
      ...AI_TEXT.slice(5),
      { type: 'finish' },
    ]),
    chunkSize: 3,
    expect: { accepted: true, text: 'héllo ✓' },
  },
  {
    name: 'ai text-delta without text-start',
    clients: AI,
    body: aiSse([{ type: 'start' }, { type: 'text-delta', id: 't1', delta: 'x' }, { type: 'finish' }]),
    expect: { accepted: false, error: { 'ai-v7': /missing text part with ID "t1"/, 'ai-v6': /missing text part with ID "t1"/, 'ai-v5': /TypeError/ } },
  },
  {
    name: 'ai unknown chunk type',
    clients: AI,
    body: aiSse([{ type: 'start' }, { type: 'not-a-chunk', id: 'x' }, { type: 'finish' }]),
    expect: { accepted: false, error: /[Vv]alidation/ },
  },
  {
    name: 'ai finishReason "unknown"',
    clients: ['ai-v5'],
    body: aiSse([...AI_TEXT, { type: 'finish', finishReason: 'unknown' }]),
    expect: { accepted: true, text: 'Hello', finishReason: 'unknown' },
  },
  {
    name: 'ai finishReason "unknown"',
    clients: ['ai-v7', 'ai-v6'],
    body: aiSse([...AI_TEXT, { type: 'finish', finishReason: 'unknown' }]),
    expect: { accepted: false, error: /[Vv]alidation/ },
  },
  {
    name: 'ai finishReason "interrupted"',
    clients: ['ai-v7'],
    body: aiSse([...AI_TEXT, { type: 'finish', finishReason: 'interrupted' }]),
    expect: { accepted: true, finishReason: 'interrupted' },
  },
  {
    name: 'ai finishReason "interrupted"',
    clients: ['ai-v6', 'ai-v5'],
    body: aiSse([...AI_TEXT, { type: 'finish', finishReason: 'interrupted' }]),
    expect: { accepted: false, error: /[Vv]alidation/ },
  },
  {
    name: 'ai error chunk (later chunks ignored)',
    clients: AI,
    body: aiSse([
      ...AI_TEXT,
      { type: 'error', errorText: 'upstream failed' },
      { type: 'text-start', id: 't2' },
      { type: 'text-delta', id: 't2', delta: ' after' },
      { type: 'text-end', id: 't2' },
      { type: 'finish', finishReason: 'error' },
    ]),
    expect: { accepted: true, streamError: 'upstream failed', text: 'Hello' },
  },
  {
    name: 'ai tool-input-available without input key',
    clients: AI,
    body: aiSse([{ type: 'start' }, { type: 'tool-input-available', toolCallId: 'c1', toolName: 'f' }, { type: 'finish' }]),
    expect: { accepted: false, error: /[Vv]alidation/ },
  },
  {
    name: 'ai tool call round trip (input null ok)',
    clients: AI,
    body: aiSse([
      { type: 'start' },
      { type: 'tool-input-start', toolCallId: 'c1', toolName: 'f' },
      { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '{}' },
      { type: 'tool-input-available', toolCallId: 'c1', toolName: 'f', input: null },
      { type: 'tool-output-available', toolCallId: 'c1', output: { ok: true } },
      { type: 'finish', finishReason: 'tool-calls' },
    ]),
    expect: { accepted: true, finishReason: 'tool-calls' },
  },
  {
    name: 'ai tool-output-available for unknown call',
    clients: AI,
    body: aiSse([{ type: 'start' }, { type: 'tool-output-available', toolCallId: 'nope', output: 1 }, { type: 'finish' }]),
    expect: { accepted: false, error: { 'ai-v7': /"nope"/, 'ai-v6': /"nope"/, 'ai-v5': /must be preceded by a tool-input-available/ } },
  },
  {
    name: 'ai __proto__ key',
    clients: AI,
    body: aiSse([{ type: 'start' }, '{"type":"data-x","data":{"__proto__":{"a":1}}}', { type: 'finish' }]),
    expect: { accepted: false },
  },
  {
    name: 'ai missing final blank line (last event dropped)',
    clients: AI,
    body: aiSse([...AI_TEXT, { type: 'finish' }], { done: false }) +
      'data: {"type":"text-delta","id":"t1","delta":" late"}',
    expect: { accepted: true, text: 'Hello' },
  },
  {
    name: 'ai response never ends (timeout)',
    clients: AI,
    body: aiSse(AI_TEXT.slice(0, 4), { done: false }),
    holdOpen: true,
    timeoutMs: 300,
    expect: { accepted: false, error: /^timeout$/, text: 'Hel' },
  },
];

function assistantText(messages) {
  const assistant = [...messages].reverse().find(m => m.role === 'assistant');
  if (!assistant) return null;
  if (typeof assistant.content === 'string') return assistant.content; // AG-UI
  return (assistant.parts ?? []).filter(p => p.type === 'text').map(p => p.text).join('');
}

function check(expect, result) {
  const problems = [];
  const errorPattern = expect.error instanceof RegExp ? expect.error : expect.error?.[result.client];
  if (result.harnessError) problems.push('harness error');
  if (result.accepted !== expect.accepted) problems.push(`accepted=${result.accepted}`);
  if (errorPattern && !errorPattern.test(result.error ?? '')) problems.push(`error !~ ${errorPattern}`);
  if ('streamError' in expect && result.streamError !== expect.streamError) {
    problems.push(`streamError=${JSON.stringify(result.streamError)}`);
  }
  if (!('streamError' in expect) && result.streamError != null) {
    problems.push(`unexpected streamError=${JSON.stringify(result.streamError)}`);
  }
  if (expect.warning && !result.warnings.some(w => expect.warning.test(w))) {
    problems.push(`no warning ~ ${expect.warning}`);
  }
  if (expect.text !== undefined && assistantText(result.messages) !== expect.text) {
    problems.push(`text=${JSON.stringify(assistantText(result.messages))}`);
  }
  if (expect.finishReason !== undefined && result.finishReason !== expect.finishReason) {
    problems.push(`finishReason=${JSON.stringify(result.finishReason)}`);
  }
  return problems;
}

const cut = (text, n) => {
  const flat = String(text ?? '').replace(/\s+/g, ' ');
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

export async function selfTest(replayJobs, { verbose = false } = {}) {
  const jobs = [];
  const expectations = [];
  CASES.forEach((testCase, caseIndex) => {
    for (const client of testCase.clients) {
      jobs.push({
        id: `${caseIndex}:${client}`,
        client,
        body: Buffer.from(testCase.body, 'utf8'),
        chunk_size: testCase.chunkSize,
        hold_open: testCase.holdOpen,
        timeout_ms: testCase.timeoutMs,
      });
      expectations.push({ testCase, client });
    }
  });
  const started = Date.now();
  const results = await replayJobs(jobs, {});
  const elapsed = Date.now() - started;
  const rows = results.map((result, i) => {
    const { testCase, client } = expectations[i];
    const problems = check(testCase.expect, result);
    const detail = result.error ?? (result.streamError != null ? `streamError: ${result.streamError}` : result.warnings[0] ?? '');
    return {
      ok: problems.length === 0,
      cells: [
        problems.length === 0 ? 'ok' : 'FAIL',
        testCase.name,
        client,
        testCase.expect.accepted ? 'accept' : 'reject',
        result.accepted ? 'accept' : 'reject',
        problems.length ? problems.join('; ') : cut(detail, verbose ? 400 : 70),
      ],
      result,
    };
  });
  const header = ['', 'case', 'client', 'expect', 'got', 'detail'];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map(r => (c === 5 ? 0 : r.cells[c].length))));
  const line = cells => cells.map((cell, c) => (c === 5 ? cell : cell.padEnd(widths[c]))).join(' | ');
  const out = [line(header), widths.map((w, c) => '-'.repeat(c === 5 ? 6 : w)).join('-|-')];
  for (const row of rows) out.push(line(row.cells));
  const failed = rows.filter(r => !r.ok).length;
  out.push('');
  out.push(`${rows.length - failed} passed, ${failed} failed (${rows.length} jobs in ${elapsed} ms)`);
  process.stdout.write(out.join('\n') + '\n');
  if (verbose) {
    for (const row of rows.filter(r => !r.ok)) {
      process.stdout.write(`\n--- ${row.cells[1]} [${row.cells[2]}]\n${JSON.stringify(row.result, null, 2)}\n`);
    }
  }
  return failed === 0;
}

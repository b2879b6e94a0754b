// The chat request body the real AI SDK client posts after tool approvals are answered.
//
// stdin: JSON [{id, client: "ai-v7" | "ai-v6", messages: UIMessage[], answers: [{id, approved,
// reason?}]}]; stdout: JSON {<id>: body}. Each job builds an AbstractChat over the messages
// (the last one an assistant message whose tool parts are `approval-requested`), with
// `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`, answers every
// approval with `chat.addToolApprovalResponse` (ai 7.0.173 / 6.0.326 src/ui/chat.ts) and
// records the body DefaultChatTransport posts (its fetch is stubbed: the first request gets an
// empty stream, a later one never an answer, since the unchanged parts would send again).
import { readFileSync } from 'node:fs';

const MODULES = { 'ai-v7': 'ai', 'ai-v6': 'ai-v6' };
const STREAM = 'data: {"type":"start"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n';

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
      structuredClone(message),
      ...this.messages.slice(index + 1),
    ];
  };
  snapshot = value => structuredClone(value);
}

async function bodyOf(job) {
  const sdk = await import(MODULES[job.client]);
  const { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } = sdk;
  let posted;
  const sent = new Promise(resolve => {
    posted = resolve;
  });
  let calls = 0;
  const fetch = async (url, init) => {
    if (++calls > 1) return new Promise(() => {});
    posted(JSON.parse(init.body));
    return new Response(STREAM, {
      headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
    });
  };
  class Chat extends AbstractChat {
    constructor({ messages, ...init }) {
      super({ ...init, state: new MemoryChatState(messages) });
    }
  }
  const chat = new Chat({
    id: 'chat-1',
    messages: structuredClone(job.messages),
    transport: new DefaultChatTransport({ api: 'http://harness.invalid/api/chat', fetch }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  for (const answer of job.answers) await chat.addToolApprovalResponse(answer);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${job.id}: no request within 10 s`)), 10000);
  });
  try {
    return await Promise.race([sent, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const jobs = JSON.parse(readFileSync(0, 'utf8'));
const out = {};
for (const job of jobs) out[job.id] = await bodyOf(job);
process.stdout.write(JSON.stringify(out), () => process.exit(0));

// Drive the real clients against a running gateway (the demo route), both turns of a tool
// round trip, and print one JSON object with what each client ended up with.
//
// Usage: node live_clients.mjs <harness_dir> <base_url>
//
// The clients are the pinned ones in tests/harness/node_modules (@ag-ui/client 1.0.0, ai
// 7.0.173, ai@6 and ai@5 as ai-v6 / ai-v5). Unlike tests/harness/replay.mjs, which serves fixed
// bytes, this sends the clients' *own* requests to the gateway, so the request bodies
// (RunAgentInput from HttpAgent, {id, messages, trigger, messageId} from DefaultChatTransport)
// are the real ones.

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [harnessDir, base] = process.argv.slice(2);
if (!harnessDir || !base) {
  console.error('usage: node live_clients.mjs <harness_dir> <base_url>');
  process.exit(2);
}
const requireFromHarness = createRequire(join(harnessDir, 'package.json'));
const load = name => import(pathToFileURL(requireFromHarness.resolve(name)).href);

function errorText(error) {
  if (error == null) return null;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const plain = value => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

async function agui() {
  const { HttpAgent } = await load('@ag-ui/client');
  const agent = new HttpAgent({
    url: `${base}/v1/agui/demo`,
    threadId: 'thread-live',
    initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Rome?' }],
  });
  const runErrors = [];
  const subscriber = { onRunErrorEvent: ({ event }) => runErrors.push(event.code ?? event.message) };
  const out = { error: null, runErrors };
  try {
    await agent.runAgent({ runId: 'run-live-1' }, subscriber);
    out.first = plain(agent.messages);
    const last = agent.messages[agent.messages.length - 1];
    const call = last?.toolCalls?.[0];
    agent.addMessage({
      id: 't1',
      role: 'tool',
      toolCallId: call?.id ?? 'missing',
      content: JSON.stringify({ temperature: 21 }),
    });
    await agent.runAgent({ runId: 'run-live-2' }, subscriber);
  } catch (error) {
    out.error = errorText(error);
  }
  out.messages = plain(agent.messages);
  return out;
}

async function aiSdk(moduleName) {
  const { AbstractChat, DefaultChatTransport } = await load(moduleName);
  class State {
    constructor() {
      this.messages = [];
      this.status = 'ready';
      this.error = undefined;
    }
    pushMessage = m => {
      this.messages = this.messages.concat(m);
    };
    popMessage = () => {
      this.messages = this.messages.slice(0, -1);
    };
    replaceMessage = (i, m) => {
      this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)];
    };
    snapshot = v => structuredClone(v);
  }
  class Chat extends AbstractChat {
    constructor(init) {
      super({ ...init, state: new State() });
    }
  }
  let n = 0;
  const chat = new Chat({
    id: `chat-${moduleName}`,
    generateId: () => `gen-${++n}`,
    transport: new DefaultChatTransport({ api: `${base}/v1/ai-sdk/demo` }),
  });
  const out = { error: null };
  try {
    await chat.sendMessage({ text: 'Weather in Rome?' });
    out.first = plain(chat.messages);
    const last = chat.messages[chat.messages.length - 1];
    const part = last.parts.find(p => p.type === 'tool-get_weather');
    const addOutput = (chat.addToolOutput ?? chat.addToolResult).bind(chat);
    await addOutput({ tool: 'get_weather', toolCallId: part?.toolCallId, output: { temperature: 21 } });
    await chat.sendMessage();
  } catch (error) {
    out.error = errorText(error);
  }
  out.status = chat.status;
  out.chatError = errorText(chat.error);
  out.messages = plain(chat.messages);
  return out;
}

const result = { agui: await agui() };
for (const name of ['ai', 'ai-v6', 'ai-v5']) result[name] = await aiSdk(name);
process.stdout.write(JSON.stringify(result));

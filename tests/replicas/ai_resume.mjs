// Resume AI SDK chats against a running gateway with the real `ai` 7 client
// (`chat.resumeStream()` -> DefaultChatTransport.reconnectToStream -> GET {api}/{chatId}/stream)
// and print one JSON object with what each chat ended up with.
//
// Usage: node ai_resume.mjs <harness_dir> <api_url> <job_json>
//   job_json: {"chats": [{"name": "...", "id": "<chatId>", "messages": [UIMessage...]}]}
//
// The client is the pinned one in tests/harness/node_modules (ai 7.0.173).

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [harnessDir, api, jobText] = process.argv.slice(2);
if (!harnessDir || !api || !jobText) {
  console.error('usage: node ai_resume.mjs <harness_dir> <api_url> <job_json>');
  process.exit(2);
}
const requireFromHarness = createRequire(join(harnessDir, 'package.json'));
const { AbstractChat, DefaultChatTransport } = await import(
  pathToFileURL(requireFromHarness.resolve('ai')).href
);

const errorText = error =>
  error == null ? null : error instanceof Error ? `${error.name}: ${error.message}` : String(error);

class State {
  constructor(messages) {
    this.messages = messages;
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
  constructor({ messages, ...init }) {
    super({ ...init, state: new State(messages) });
  }
}

async function resume(job) {
  const chat = new Chat({
    id: job.id,
    messages: structuredClone(job.messages ?? []),
    transport: new DefaultChatTransport({ api }),
  });
  const out = { error: null };
  try {
    await chat.resumeStream();
  } catch (error) {
    out.error = errorText(error);
  }
  out.status = chat.status;
  out.chatError = errorText(chat.error);
  out.messages = JSON.parse(JSON.stringify(chat.messages));
  return [job.name, out];
}

// All chats resume at once (the run they join is live).
const jobs = JSON.parse(jobText).chats;
const results = Object.fromEntries(await Promise.all(jobs.map(resume)));
process.stdout.write(JSON.stringify(results));

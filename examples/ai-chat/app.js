// The smallest AI SDK chat page on the gateway: ai's AbstractChat (what useChat wraps) with
// DefaultChatTransport, plus README "From the frontend": history as the initial messages,
// resumeStream() on load (useChat({ resume: true })), Stop = stop() + DELETE of the chat's
// stream. Query: ?gateway=<url>&thread=<chat id>&resume=1.
import { AbstractChat, DefaultChatTransport } from 'ai';

const query = new URLSearchParams(location.search);
const gateway = query.get('gateway');
const chatId = query.get('thread');
const api = `${gateway}/v1/ai-sdk/gpt`;

class State {
  constructor(messages) {
    this.messages = messages;
    this.status = 'ready';
    this.error = undefined;
  }
  pushMessage = (m) => { this.messages = this.messages.concat(m); };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (i, m) => {
    this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)];
  };
  snapshot = (v) => structuredClone(v);
}

class Chat extends AbstractChat {
  constructor({ messages, ...init }) {
    super({ ...init, state: new State(messages) });
  }
}

const show = (status) => {
  document.getElementById('status').textContent = status;
  document.getElementById('out').textContent = JSON.stringify(app.chat?.messages ?? [], null, 1);
};

const app = {
  chat: null,
  done: false,
  error: null,
  async send(text) {
    try {
      await app.chat.sendMessage({ text });
      app.done = true;
    } catch (error) {
      app.error = String(error?.message ?? error);
    }
    show(app.chat.status);
  },
  async stop() {
    await app.chat.stop();
    const reply = await fetch(`${api}/${encodeURIComponent(chatId)}/stream`, { method: 'DELETE' });
    app.stopped = reply.status;
    show('stopped');
  },
  messages: () => structuredClone(app.chat.messages),
};
window.app = app;
app.ready = (async () => {
  const messages = await (
    await fetch(`${gateway}/api/v1/agent/history?threadId=${encodeURIComponent(chatId)}&format=ai-sdk`)
  ).json();
  app.chat = new Chat({ id: chatId, messages, transport: new DefaultChatTransport({ api }) });
  show('ready');
  if (query.get('resume')) {
    try {
      await app.chat.resumeStream();
      app.done = true;
    } catch (error) {
      app.error = String(error?.message ?? error);
    }
    show(app.chat.status);
  }
})();

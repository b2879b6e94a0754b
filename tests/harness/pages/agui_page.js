// The smallest AG-UI page on the gateway: the stock @ag-ui/client HttpAgent, and the few lines
// of app code README "From the frontend" shows (history as initialMessages; after a reload or a
// cut, runAgent({ runId }) again re-joins the run). Query: ?gateway=<url>&thread=<id>.
import { HttpAgent } from '@ag-ui/client';

const query = new URLSearchParams(location.search);
const gateway = query.get('gateway');
const threadId = query.get('thread');
const getJson = async (path) => (await fetch(gateway + path)).json();
const show = (status, messages) => {
  document.getElementById('status').textContent = status;
  document.getElementById('out').textContent = JSON.stringify(messages, null, 1);
};

const app = {
  agent: null,
  done: false,
  error: null,
  async run(runId) {
    try {
      await app.agent.runAgent({ runId });
      app.done = true;
      show('done', app.agent.messages);
    } catch (error) {
      app.error = String(error?.message ?? error);
      show('error: ' + app.error, app.agent.messages);
    }
  },
  send(text, runId) {
    app.agent.addMessage({ id: 'u-' + runId, role: 'user', content: text });
    return app.run(runId);
  },
  async resume() {
    const { runs } = await getJson(`/api/v1/agent/runs?threadId=${encodeURIComponent(threadId)}`);
    const active = runs.find((r) => r.status === 'running' || r.status === 'queued');
    if (active) return app.run(active.runId);
    app.done = true;
    show('nothing to resume', app.agent.messages);
  },
  messages: () => JSON.parse(JSON.stringify(app.agent.messages)),
};
window.app = app;
app.ready = (async () => {
  const initialMessages = await getJson(
    `/api/v1/agent/history?threadId=${encodeURIComponent(threadId)}&format=agui`,
  );
  app.agent = new HttpAgent({ url: `${gateway}/v1/agui/gpt`, threadId, initialMessages });
  show('ready', initialMessages);
})();

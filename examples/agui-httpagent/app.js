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
  cuts: 0,
  async run(runId) {
    // A cut connection rejects runAgent: while the run is still active, the same runId
    // re-joins it (the gateway sends a snapshot and the rest; nothing twice).
    for (let attempt = 0; attempt < 60; attempt += 1) {
      try {
        await app.agent.runAgent({ runId });
        app.done = true;
        app.error = null;
        show('done', app.agent.messages);
        return;
      } catch (error) {
        app.error = String(error?.message ?? error);
        if (app.stopping) return;
        app.cuts += 1;
        show('cut: ' + app.error, app.agent.messages);
        const run = await app.findRun(runId).catch(() => ({ status: 'unknown' }));
        if (run && run.status !== 'running' && run.status !== 'queued' && run.status !== 'unknown') {
          return; // it ended: the error is the run's own
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  },
  async findRun(runId) {
    const { runs } = await getJson(`/api/v1/agent/runs?threadId=${encodeURIComponent(threadId)}`);
    return runId ? runs.find((r) => r.runId === runId) : runs.find((r) => r.status === 'running' || r.status === 'queued');
  },
  send(text, runId) {
    app.agent.addMessage({ id: 'u-' + runId, role: 'user', content: text });
    return app.run(runId);
  },
  async resume() {
    const active = await app.findRun(null);
    if (active) return app.run(active.runId);
    app.done = true;
    show('nothing to resume', app.agent.messages);
  },
  async stop(runId) {
    // Stop: abortRun() ends the fetch; the cancel call ends the run upstream too
    app.stopping = true;
    app.agent.abortRun();
    const url = `${gateway}/api/v1/agent/runs/${encodeURIComponent(threadId)}/cancel?runId=${encodeURIComponent(runId)}`;
    app.stopped = (await fetch(url, { method: 'POST' })).status;
    show('stopped', app.agent.messages);
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

// The CopilotKit runtime in front of the gateway: one AG-UI HttpAgent whose url is a gateway
// route, served by @copilotkit/runtime's v2 Node listener. A CopilotKit frontend
// (<CopilotKit runtimeUrl="http://127.0.0.1:4000/api/copilotkit">) then talks to the runtime,
// and every run of its "default" agent is a gateway run: recorded, resumable, metered.
//
//   npm ci --prefix examples/copilotkit
//   GATEWAY_URL=http://127.0.0.1:8000 GATEWAY_ROUTE=demo node examples/copilotkit/server.mjs
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8000), GATEWAY_ROUTE (default demo),
// GATEWAY_TOKEN (sent as "authorization: Bearer ..." when the gateway asks for a key),
// PORT (default 4000; 0 picks a free one). The first line on stdout is
// {"listening": "<runtime base URL>"}.
import { createServer } from "node:http";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const gateway = process.env.GATEWAY_URL ?? "http://127.0.0.1:8000";
const route = process.env.GATEWAY_ROUTE ?? "demo";
const token = process.env.GATEWAY_TOKEN;
const basePath = "/api/copilotkit";

const runtime = new CopilotRuntime({
  agents: {
    default: new HttpAgent({
      url: `${gateway}/v1/agui/${encodeURIComponent(route)}`,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    }),
  },
  runner: new InMemoryAgentRunner(),
});

const listener = createCopilotNodeListener({
  runtime,
  basePath,
  cors: true,
  activateChannels: false, // no CopilotKit Intelligence channels: nothing to connect to
});

const server = createServer(listener);
server.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${port}${basePath}` })}\n`);
});

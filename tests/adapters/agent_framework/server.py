"""agent-framework-ag-ui 1.7.0 served on 127.0.0.1 over a scripted OpenAI Chat Completions model.

Run with the python of .venv-agent-framework (requirements.txt beside this file; it cannot share
the gateway's venv): ``python server.py MODEL_BASE_URL``. The OS picks the port; the endpoint's
URL is the first line of stdout. The agent has no tools of its own: the run input's tools are
frontend tools, as the scenario runner declares them.
"""

import socket
import sys

import uvicorn
from agent_framework import Agent
from agent_framework.openai import OpenAIChatCompletionClient
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint
from fastapi import FastAPI

client = OpenAIChatCompletionClient(
    model="scripted", api_key="scripted", base_url=f"{sys.argv[1]}/v1"
)
agent = Agent(client=client, name="scripted", instructions="")
app = FastAPI()
# single_user: the endpoint refuses to start without an explicit authorization scope
add_agent_framework_fastapi_endpoint(app, agent, "/", single_user=True)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
print(f"http://127.0.0.1:{sock.getsockname()[1]}/", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])

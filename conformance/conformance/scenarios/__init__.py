"""The scenario runner: drive an adapter with scripted models and check what it streams.

``agui-conformance scenarios URL`` starts :class:`ModelServer` on loopback (OpenAI Chat
Completions, OpenAI Responses and Anthropic Messages), runs each scenario of
:data:`SCENARIOS` against the adapter's AG-UI or AI SDK endpoint (:func:`run_scenarios`) and
reports per scenario the kit's verdict, the real client's verdict where a client harness is
given, and the data checks (every text and argument byte of the script arrived, once).
"""

from __future__ import annotations

from .model_server import ModelServer
from .runner import ScenarioResult, format_results, run_scenarios
from .scripts import SCENARIOS, TOOLS, Scenario

__all__ = [
    "SCENARIOS",
    "TOOLS",
    "ModelServer",
    "Scenario",
    "ScenarioResult",
    "format_results",
    "run_scenarios",
]

"""The scripted model turns of each scenario: what the model server streams, whatever the API.

A :class:`Scenario` is a list of turns; turn *n* answers the *n*-th model request of the
scenario's conversation (counted from the user message that names the scenario). A turn is a
list of parts: :class:`Text`, :class:`Reasoning`, :class:`Calls` (one or more tool calls, their
argument deltas interleaved across calls or not) and :class:`Abort` (the model connection
breaks mid-stream). The runner declares the tools in the run input (AG-UI ``tools``: frontend
tools) and answers frontend calls with :attr:`Scenario.results`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["SCENARIOS", "TOOLS", "Abort", "Call", "Calls", "Reasoning", "Scenario", "Text", "Turn"]


@dataclass(frozen=True, slots=True)
class Text:
    """Assistant text, streamed as ``pieces`` deltas."""

    pieces: tuple[str, ...]

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Reasoning (thinking) text, streamed as ``pieces`` deltas."""

    pieces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: ``id``, ``name`` and its arguments as ``pieces`` of one JSON document."""

    id: str
    name: str
    pieces: tuple[str, ...]

    @property
    def arguments(self) -> Any:
        return json.loads("".join(self.pieces))


@dataclass(frozen=True, slots=True)
class Calls:
    """Tool calls of one turn; ``interleave``: the argument pieces alternate across calls
    (OpenAI streams parallel calls that way; Anthropic sends one block after the other)."""

    calls: tuple[Call, ...]
    interleave: bool = False


@dataclass(frozen=True, slots=True)
class Abort:
    """The model connection breaks here (no finish, no end of stream)."""


Part = Text | Reasoning | Calls | Abort
Turn = tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario: ``turns`` of the model, the ``results`` the runner gives frontend calls
    (by tool name), whether the runner ``cancel``s the run after its first events, and a
    one-line ``description``."""

    name: str
    description: str
    turns: tuple[Turn, ...]
    results: dict[str, str] = field(default_factory=dict)
    cancel: bool = False

    def texts(self) -> str:
        """Every text byte the script sends, in order."""
        return "".join(p.text for turn in self.turns for p in turn if isinstance(p, Text))

    def calls(self) -> list[Call]:
        """Every tool call the script makes."""
        return [c for turn in self.turns for p in turn if isinstance(p, Calls) for c in p.calls]


def _split(text: str, size: int) -> tuple[str, ...]:
    return tuple(text[i : i + size] for i in range(0, len(text), size))


TOOLS: Final[list[dict[str, Any]]] = [
    {"name": "get_weather", "description": "The weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]}},
    {"name": "get_time", "description": "The time in a time zone.",
     "parameters": {"type": "object", "properties": {"zone": {"type": "string"}},
                    "required": ["zone"]}},
    {"name": "save_note", "description": "Save a note.",
     "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"]}},
]  # fmt: skip
"""The tools of the scenarios, declared in the run input (frontend tools)."""

_WEATHER = Call("call_weather", "get_weather", ('{"ci', 'ty": "Pa', 'ris"}'))
_TIME = Call("call_time", "get_time", ('{"zo', 'ne": "Europe/', 'Paris"}'))
_ANSWER = Text(("It is sunny ", "in Paris, ", "and noon."))
_RESULTS = {"get_weather": "sunny", "get_time": "12:00", "save_note": "saved"}
_BIG = json.dumps({"text": "".join(f"line {n:05d} of a long note\n" for n in range(8000))})

SCENARIOS: Final[dict[str, Scenario]] = {
    s.name: s
    for s in (
        Scenario("plain-text", "text only, in several deltas",
                 ((Text(("Hello", ", this is ", "the scripted ", "model.")),),)),
        Scenario("one-tool", "one tool call with streamed arguments, then text",
                 ((Calls((_WEATHER,)),), (_ANSWER,)), _RESULTS),
        Scenario("parallel-tools", "two tool calls whose argument deltas interleave, then text",
                 ((Calls((_WEATHER, _TIME), interleave=True),), (_ANSWER,)), _RESULTS),
        Scenario("frontend-tool", "text, a frontend tool call, its result from the client, text",
                 ((Text(("Let me save that.",)), Calls((Call("call_note", "save_note",
                                                            ('{"text": ', '"milk"}')),))),
                  (Text(("Saved.",)),)), _RESULTS),
        Scenario("tool-error", "a call of a tool the agent does not have, then text",
                 ((Calls((Call("call_missing", "no_such_tool", ("{}",)),)),),
                  (Text(("That tool is not available.",)),),
                  (Text(("That tool is not available.",)),)), _RESULTS),
        Scenario("upstream-error", "text, then the model connection breaks",
                 ((Text(("Half an ", "answer")), Abort()),)),
        Scenario("cancel", "a long answer; the client goes away after the first events",
                 ((Text(tuple(f"word{n} " for n in range(400))),),), cancel=True),
        Scenario("long-reasoning", "600 reasoning deltas, then text",
                 ((Reasoning(tuple(f"step {n}. " for n in range(600))),
                   Text(("Done thinking.",))),)),
        Scenario("large-argument", "one tool call with a 200 KB argument in 1 KB deltas",
                 ((Calls((Call("call_big", "save_note", _split(_BIG, 1024)),)),),
                  (Text(("Noted.",)),)), _RESULTS),
    )
}  # fmt: skip
"""Every scenario, by name."""

"""Client profiles: which rules apply, and how severe they are, for one kind of client.

* ``agui`` (``--profile 1.0``, the default): the stock ``@ag-ui/client`` 1.0.0, whose
  verdicts the differential tests prove. It speaks protocol ``1.0``
  (``@ag-ui/core`` ``PROTOCOL_VERSION``) and warns when a producer declares a newer or an
  uninterpretable version (``src/agent/agent.ts`` ``warnOnProducerDeclaration``).
* ``agui@1.1`` (``--profile 1.1``): the AG-UI 1.1 specification (ag-ui-protocol/ag-ui
  ``spec/1.1``) plus the fatal rules of its draft: a RUN_FINISHED whose runId / threadId
  differ from its RUN_STARTED's, a second run on another thread, duplicate interrupt ids and a
  stream that ends with a run open fail the run; re-opening a closed message is legal;
  ``protocolVersion`` ``1.1`` is the spoken version (a newer minor is a notice).
* ``ai-sdk@5`` / ``ai-sdk@6`` / ``ai-sdk@7``: an ``ai`` major (:mod:`conformance.ai_sdk`).

Severities per profile live with the rules (:attr:`conformance.rules.Rule.profiles`); this
module names the profiles and compares declared protocol versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["AGUI_PROFILES", "AguiProfile", "VersionVerdict", "agui_profile"]

VersionVerdict = Literal["same", "older", "newer", "newer-minor", "uninterpretable"]
_GRAMMAR: Final = re.compile(r"\d+\.\d+")


@dataclass(frozen=True, slots=True)
class AguiProfile:
    """One AG-UI client profile.

    Attributes:
        name: the report's profile (``agui``, ``agui@1.1``), the key of
            :attr:`conformance.rules.Rule.profiles`.
        version: the protocol version the client speaks (``MAJOR.MINOR``).
    """

    name: str
    version: str

    def compare(self, declared: str) -> VersionVerdict:
        """Judge a producer's ``protocolVersion`` the way ``compareDeclaredProtocol`` of
        ``@ag-ui/client`` does: the grammar is two numeric components, checked first;
        ``newer-minor`` is a newer minor of the same major."""
        if not _GRAMMAR.fullmatch(declared):
            return "uninterpretable"
        major, minor = (int(p) for p in declared.split("."))
        own_major, own_minor = (int(p) for p in self.version.split("."))
        if (major, minor) == (own_major, own_minor):
            return "same"
        if (major, minor) < (own_major, own_minor):
            return "older"
        return "newer-minor" if major == own_major else "newer"


AGUI_PROFILES: Final[dict[str, AguiProfile]] = {
    "1.0": AguiProfile("agui", "1.0"),
    "1.1": AguiProfile("agui@1.1", "1.1"),
}
"""The AG-UI profiles by their ``--profile`` value."""


def agui_profile(name: str) -> AguiProfile:
    """The profile named ``1.0`` / ``1.1`` (or by its report name ``agui`` / ``agui@1.1``).

    Raises:
        ValueError: no such profile.
    """
    for key, profile in AGUI_PROFILES.items():
        if name in (key, profile.name):
            return profile
    raise ValueError(f"unknown AG-UI profile {name!r} (1.0 or 1.1)")

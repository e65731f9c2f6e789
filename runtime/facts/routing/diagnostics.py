"""What the router says about a provider that failed: one sanitized line per provider.

A diagnostic is built from what the failure *is* (its class and, for our provider errors, its
code), never from its message: a third-party provider's message may quote memory content, a
URL with credentials or a token, and a diagnostic lands in the session log and on stderr. So
the line says which provider (its ``memory.providers`` name and backend), what kind of failure,
and that recall went on without it.

``Diagnostics`` collects them for one wiring: the router records, the loop drains once per turn
(``MemorySeam.diagnostics``) and writes each into the session log. A provider failing several
times in one turn (auto-recall, then a Recall tool call) is reported once.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from specwire.runtime.facts.providers.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequest,
    ProviderProtocolError,
    ProviderScopeError,
    ProviderTimeout,
    ProviderUnavailable,
)
from specwire.runtime.facts.providers.protocol import DeadlineExceeded

_CODE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


@dataclass(frozen=True)
class ProviderDiagnostic:
    provider: str  # the ``memory.providers`` name (a resource id: no secret fits in it)
    backend: str
    problem: str  # from ``describe_failure``: never a message, a URL or content

    def line(self) -> str:
        return (
            f"[memory] provider {self.provider} ({self.backend}) skipped: {self.problem}; "
            "recall went on without it\n"
        )

    def payload(self) -> dict[str, str]:
        return {"provider": self.provider, "backend": self.backend, "problem": self.problem}


def describe_failure(exc: BaseException, deadline_ms: int | None = None) -> str:
    """What went wrong, from the failure's kind alone."""
    waited = f" within {deadline_ms} ms" if deadline_ms is not None else ""
    if isinstance(exc, DeadlineExceeded | ProviderTimeout | TimeoutError):
        return f"did not answer{waited}"
    if isinstance(exc, ProviderAuthError):
        return "its credential was refused"
    if isinstance(exc, ProviderScopeError):
        return "it refused the scope"
    if isinstance(exc, ProviderProtocolError):
        return "it answered outside its contract"
    if isinstance(exc, ProviderUnavailable):
        return "it is unreachable or failing"
    if isinstance(exc, ProviderInvalidRequest):
        return "it refused the request"
    if isinstance(exc, ProviderError):
        code = exc.code if _CODE.fullmatch(exc.code or "") else "provider_error"
        return f"it failed ({code})"
    if isinstance(exc, OSError):
        return "it is unreachable"
    name = type(exc).__name__
    return f"it failed ({name if _NAME.fullmatch(name) else 'error'})"


class Diagnostics:
    """Diagnostics of one wiring, at most one per provider until drained."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, ProviderDiagnostic] = {}

    def record(self, diagnostic: ProviderDiagnostic) -> None:
        with self._lock:
            self._pending.setdefault(diagnostic.provider, diagnostic)

    def drain(self) -> tuple[ProviderDiagnostic, ...]:
        """What was recorded since the last drain, in the order the providers failed."""
        with self._lock:
            pending, self._pending = tuple(self._pending.values()), {}
        return pending

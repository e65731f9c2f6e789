"""An OpenComputer memory endpoint as a ``FactProvider`` (``memory.protocol: opencomputer``).

The contract has two operations, recall and the endpoint's own tools, so this provider is
read-only as a fact provider (``retain`` and ``forget`` refuse: writes are the endpoint's tools,
``runtime.facts.providers.http.opencomputer_tools``). A recall's projection becomes **one hit**:
the recalled text block whole (the endpoint composed and bounded it; splitting it would invent
boundaries the contract does not give), its sources' ids as the hit's ``reasons``
(``source:<id>``), the only source's title as its title, and a content fingerprint. Empty memory
(``""``) is no hit. A failed recall raises: it blocks the turn, never empty memory.

The endpoint is a third party, so its recalled text is screened by the injection scanner like
every fact read back into a prompt: a flagged block is held whole (the scanner judges the block,
and a directive split over lines is one directive), reported to ``on_held`` with its rule (never
its text) and recalled as no text.

The cursor a recall returns is the host's read state for the tools of the same request: kept
here (one instance per wiring, never per process), replaced by every successful recall
(``None`` when the endpoint gave none), never changed by a tool or an error.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable

from specwire.runtime.core.clock import utc_now
from specwire.runtime.facts.providers.errors import ProviderError
from specwire.runtime.facts.providers.http import opencomputer_wire as oc
from specwire.runtime.facts.providers.http.opencomputer_client import OpenComputerClient
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    DeadlineExceeded,
    ForgetRequest,
    ForgetResult,
    Health,
    ProviderDescriptor,
    ProviderHit,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.facts.text import fingerprint
from specwire.runtime.safety.injection import scan

# The current input's text sent to recall: at most this many bytes, so a long message still
# fits the 64 KiB request body (the rest of the body is under 2 KiB).
MAX_INPUT_TEXT_BYTES = 60 * 1024
HEALTH_DEADLINE_S = 1.0
# A recall block has no rank of its own; the router re-ranks across providers anyway.
BLOCK_SCORE = 0.5
CAPABILITIES = Capabilities()


class OpenComputerFactProvider:
    def __init__(
        self,
        client: OpenComputerClient,
        *,
        name: str = "primary",
        on_held: Callable[[str], None] = lambda rule: None,
    ) -> None:
        self.client = client
        self._name = name
        self._on_held = on_held
        self._lock = threading.Lock()
        self._cursor: str | None = None

    def __repr__(self) -> str:
        return f"OpenComputerFactProvider({self.client!r})"

    @property
    def cursor(self) -> str | None:
        """The last successful recall's cursor (what this request's tools send)."""
        with self._lock:
            return self._cursor

    def project(self, text: str | None, *, deadline_s: float | None = None) -> oc.Recalled:
        """Recall for the current input's ``text`` (None or blank: the input has no text) and
        keep the reply's cursor for the tools."""
        given = oc.clip_utf8(text, MAX_INPUT_TEXT_BYTES) if text and text.strip() else None
        recalled = self.client.recall(given, deadline_s=deadline_s)
        with self._lock:
            self._cursor = recalled.cursor
        hit = scan(recalled.text) if recalled.text.strip() else None
        if hit is not None:
            self._on_held(hit.rule)
            return oc.Recalled("", (), recalled.cursor)
        return recalled

    # -- FactProvider -----------------------------------------------------------------------

    def recall(self, request: RecallRequest) -> RecallResponse:
        if request.expired():
            raise DeadlineExceeded("recall: the caller's deadline passed before it started")
        budget = None if request.deadline is None else request.deadline - time.monotonic()
        recalled = self.project(request.query, deadline_s=budget)
        if request.expired():
            raise DeadlineExceeded("recall: the caller's deadline passed")
        if not recalled.text.strip():
            return RecallResponse(())
        text = recalled.text
        if request.max_tokens is not None:
            text = oc.clip_utf8(text, request.max_tokens * 4)
        digest = hashlib.sha256(f"{self.client.partition}\n{text}".encode()).hexdigest()
        only = recalled.sources[0] if len(recalled.sources) == 1 else None
        hit = ProviderHit(
            id=f"oc-{digest[:24]}",
            text=text,
            tags=(),
            score=BLOCK_SCORE,
            evidence_backed=False,
            provider=self._name,
            reasons=tuple(f"source:{source.id}" for source in recalled.sources),
            fingerprint=fingerprint(text),
            title=only.title if only is not None else None,
        )
        return RecallResponse((hit,))

    def retain(self, request: RetainRequest) -> RetainResult:
        raise _no_writes("retain")

    def forget(self, request: ForgetRequest) -> ForgetResult:
        raise _no_writes("forget")

    def health(self) -> Health:
        """A recall without input text (recall has no side effects), within 1 s and without
        retries; the answer's content is discarded, never reported."""
        try:
            self.client.recall(None, deadline_s=HEALTH_DEADLINE_S, retries=0)
        except ProviderError as exc:
            if exc.code == "deadline_exceeded":
                return Health(False, "health check timeout", utc_now())
            return Health(False, f"health check failed: {exc.code}", utc_now())
        return Health(True, None, utc_now())

    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def descriptor(self) -> ProviderDescriptor:
        return ProviderDescriptor(
            id=self._name,
            kind="http",
            read_only=True,
            description=f"OpenComputer HTTP memory (version {oc.VERSION}) at {self.client.where}",
        )

    def dispose(self) -> None:
        self.client.close()


def _no_writes(operation: str) -> ProviderError:
    return ProviderError(
        f"{operation}: an OpenComputer memory endpoint takes writes through its own tools "
        "(memory.tools), not the fact operations",
        code="unsupported",
    )

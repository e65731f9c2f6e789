"""``FactRouter``: one ``FactProvider`` over the primary and the spec's other providers.

Recall fans out: the primary runs on the caller's thread, every other provider on its own
thread under its own deadline (``memory.providers[].deadline``, default 2 s, never past the
caller's). Their hits are checked again (a provider that returns a fact outside the caller's
visible scope keys, a tier note on plain recall, another type than asked, or something that is
not a hit, has that hit dropped), fused by rank (``routing.rerank``: RRF, duplicates by
provider id and by content fingerprint merged) and cut to the limit and token budget.

Failure: the primary's failure propagates (the loop blocks the turn: an answer from silently
empty memory would contradict earlier ones). Any other provider's failure or lateness is
recorded as one sanitized diagnostic (``routing.diagnostics``) and recall goes on without it;
a late provider's thread is told to stop (``RecallRequest.cancel``) and left to finish.

Writes (retain, forget, update), point reads and tier notes go to the primary only: the
other providers are read-only here, whatever they could do.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from specwire.runtime.facts.model import MAX_RECALL_K, MAX_TEXT_CHARS, InvalidRequestError
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    CatalogEntry,
    CatalogProvider,
    DisposableProvider,
    FactProvider,
    FactReader,
    ForgetRequest,
    ForgetResult,
    Health,
    ProviderDescriptor,
    ProviderHit,
    ReadRequest,
    ReadResponse,
    RecallRequest,
    RecallResponse,
    RefreshingProvider,
    RetainRequest,
    RetainResult,
    UpdateRequest,
    UpdatingProvider,
)
from specwire.runtime.facts.providers.recall_bounds import give_up_if_expired, within_request
from specwire.runtime.facts.routing.diagnostics import (
    Diagnostics,
    ProviderDiagnostic,
    describe_failure,
)
from specwire.runtime.facts.routing.rerank import Method, fuse
from specwire.runtime.facts.text import clip, fingerprint

# The longest hit id the router passes on (OpenComputer's source id limit, in UTF-8 bytes).
MAX_HIT_ID_BYTES = 1024


@dataclass(frozen=True)
class RoutedProvider:
    """One provider the router reads, as the spec names it."""

    name: str
    backend: str
    provider: FactProvider
    deadline_s: float
    release: Callable[[], None] = field(default=lambda: None)


class _Call:
    """One provider's recall on its own thread."""

    def __init__(self, member: RoutedProvider, request: RecallRequest) -> None:
        self.member = member
        self.request = request
        self.hits: Sequence[Any] = ()
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"recall-{member.name}", daemon=True)

    def _run(self) -> None:
        try:
            self.hits = self.member.provider.recall(self.request).hits
        except BaseException as exc:  # recorded as a diagnostic, never raised on this thread
            self.error = exc
        finally:
            self.done.set()


class FactRouter:
    """The primary and the other providers behind the one provider protocol."""

    def __init__(
        self,
        primary: RoutedProvider,
        others: Sequence[RoutedProvider],
        *,
        diagnostics: Diagnostics | None = None,
        method: Method = "rrf",
    ) -> None:
        names = [primary.name, *(member.name for member in others)]
        if len(set(names)) != len(names):
            raise InvalidRequestError("router: provider names must be unique")
        self._primary = primary
        self._others = tuple(others)
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self._method = method

    @property
    def primary(self) -> FactProvider:
        return self._primary.provider

    @property
    def members(self) -> tuple[RoutedProvider, ...]:
        return (self._primary, *self._others)

    # -- writes and reads go to the primary ------------------------------------------------

    def retain(self, request: RetainRequest) -> RetainResult:
        return self._primary.provider.retain(request)

    def forget(self, request: ForgetRequest) -> ForgetResult:
        return self._primary.provider.forget(request)

    def read(self, request: ReadRequest) -> ReadResponse:
        primary = self._primary.provider
        if not isinstance(primary, FactReader):
            raise InvalidRequestError("read: the primary memory provider has no point reads")
        return primary.read(request)

    def update(self, request: UpdateRequest) -> RetainResult:
        primary = self._primary.provider
        if not isinstance(primary, UpdatingProvider):
            raise InvalidRequestError("update: the primary memory provider cannot update facts")
        return primary.update(request)

    def health(self) -> Health:
        """The primary's (the other providers' failures never block a turn)."""
        return self._primary.provider.health()

    def capabilities(self) -> Capabilities:
        own = self._primary.provider.capabilities()
        catalog = own.catalog or any(isinstance(m.provider, CatalogProvider) for m in self._others)
        return dataclasses.replace(own, catalog=catalog)

    def descriptor(self) -> ProviderDescriptor:
        names = ", ".join(f"{m.name} ({m.backend})" for m in self.members)
        return ProviderDescriptor("router", "router", description=f"recall over {names}")

    def catalog(self, limit: int = 100) -> tuple[CatalogEntry, ...]:
        """Every provider's catalog that offers one (a failing one is skipped, recorded)."""
        entries: list[CatalogEntry] = []
        for member in self.members:
            provider = member.provider
            if not isinstance(provider, CatalogProvider):
                continue
            try:
                entries.extend(provider.catalog(limit))
            except Exception as exc:
                self._record(member, exc)
        return tuple(entries[: max(0, limit)])

    def refresh(self) -> None:
        for member in self.members:
            if isinstance(member.provider, RefreshingProvider):
                member.provider.refresh()

    def dispose(self) -> None:
        for member in reversed(self.members):
            if isinstance(member.provider, DisposableProvider):
                member.provider.dispose()
            member.release()

    # -- recall ----------------------------------------------------------------------------

    def recall(self, request: RecallRequest) -> RecallResponse:
        give_up_if_expired(request)
        if request.tiers or not self._others:
            return self._primary.provider.recall(request)
        depth = min(MAX_RECALL_K, 2 * request.limit)  # room for what dedup merges
        started = time.monotonic()
        calls = [_Call(m, self._sub_request(request, m, depth, started)) for m in self._others]
        for call in calls:
            call.thread.start()
        try:
            primary_hits = self._primary.provider.recall(
                dataclasses.replace(request, limit=depth, max_tokens=None)
            ).hits
        except BaseException:
            for call in calls:
                _give_up(call)
            raise
        rankings = [self._checked(self._primary, primary_hits, request)]
        for call in calls:
            rankings.append(self._collected(call, request))
        return RecallResponse(within_request(request, fuse(rankings, self._method)))

    def _sub_request(
        self, request: RecallRequest, member: RoutedProvider, depth: int, started: float
    ) -> RecallRequest:
        deadline = started + member.deadline_s
        if request.deadline is not None:
            deadline = min(deadline, request.deadline)
        return dataclasses.replace(
            request, limit=depth, max_tokens=None, deadline=deadline, cancel=threading.Event()
        )

    def _collected(self, call: _Call, request: RecallRequest) -> list[ProviderHit]:
        member = call.member
        deadline = call.request.deadline
        assert deadline is not None
        if not call.done.wait(max(0.0, deadline - time.monotonic())):
            _give_up(call)
            self._record(member, TimeoutError())
            return []
        if call.error is not None:
            self._record(member, call.error)
            return []
        return self._checked(member, call.hits, request)

    def _checked(
        self, member: RoutedProvider, hits: Sequence[Any], request: RecallRequest
    ) -> list[ProviderHit]:
        """The provider's hits the caller may see, each tagged with the provider's name."""
        visible = set(request.visible)
        wanted = frozenset(request.types)
        kept = []
        for hit in hits:
            if not _well_formed(hit):
                continue
            if hit.scope not in visible or hit.tier is not None:
                continue
            if wanted and hit.type not in wanted:
                continue
            text = clip(hit.text, MAX_TEXT_CHARS)
            kept.append(
                dataclasses.replace(
                    hit,
                    text=text,
                    provider=member.name,
                    fingerprint=fingerprint(text),
                )
            )
        return kept

    def _record(self, member: RoutedProvider, exc: BaseException) -> None:
        deadline_ms = round(member.deadline_s * 1000)
        diagnostic = ProviderDiagnostic(
            member.name, member.backend, describe_failure(exc, deadline_ms)
        )
        self.diagnostics.record(diagnostic)


def _give_up(call: _Call) -> None:
    cancel = call.request.cancel
    if cancel is not None:
        cancel.set()


def _well_formed(hit: Any) -> bool:
    """A hit a provider of one's own may get wrong: the router passes on only sound ones."""
    return (
        isinstance(hit, ProviderHit)
        and isinstance(hit.id, str)
        and 0 < len(hit.id.encode("utf-8", errors="replace")) <= MAX_HIT_ID_BYTES
        and isinstance(hit.text, str)
        and bool(hit.text.strip())
        and isinstance(hit.score, int | float)
    )

"""Targets that break one rule each, to show the packaged suite catches it (each wraps the
file backend's target and changes one behaviour of its providers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specwire.runtime.facts.conformance.target import LocalTarget
from specwire.runtime.facts.providers.protocol import Health, RecallRequest, RecallResponse


class _Wrapped:
    """Delegates everything to ``inner``; subclasses override one method."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class IgnoresDeadline(_Wrapped):
    def recall(self, request: RecallRequest) -> RecallResponse:
        response: RecallResponse = self.inner.recall(replace(request, deadline=None, cancel=None))
        return response


class IgnoresTokenBudget(_Wrapped):
    def recall(self, request: RecallRequest) -> RecallResponse:
        response: RecallResponse = self.inner.recall(replace(request, max_tokens=None))
        return response


class SeesEveryScope(_Wrapped):
    """Recalls as the owner would: every scope key the suite writes, whatever was asked."""

    def recall(self, request: RecallRequest) -> RecallResponse:
        from specwire.runtime.core.scopes import AGENT, CREW, ScopeKey

        everyone = (AGENT, CREW, ScopeKey("user", "U_ALICE"), ScopeKey("user", "U_BOB"))
        response: RecallResponse = self.inner.recall(replace(request, visible=everyone))
        return response


class HealthSaysWhatItStored(_Wrapped):
    """A degraded provider whose health message quotes what the target last stored."""

    def __init__(self, inner: Any, last_text: Callable[[], str]) -> None:
        super().__init__(inner)
        self.last_text = last_text

    def health(self) -> Health:
        return Health(False, f"cannot store: {self.last_text()}", datetime.now(UTC))


class _BrokenTarget(LocalTarget):
    """The file backend's target whose providers are wrapped in ``wrapper``."""

    wrapper: type[_Wrapped] = _Wrapped
    builtin = False

    def provider(self, tenant: str, spec: str, session: str | None = None) -> Any:
        return self.wrapper(super().provider(tenant, spec, session))


class _IgnoresDeadlineTarget(_BrokenTarget):
    name = "ignores-deadline"
    wrapper = IgnoresDeadline


class _IgnoresTokenBudgetTarget(_BrokenTarget):
    name = "ignores-token-budget"
    wrapper = IgnoresTokenBudget


class _SeesEveryScopeTarget(_BrokenTarget):
    name = "sees-every-scope"
    wrapper = SeesEveryScope


class _LeakyHealthTarget(LocalTarget):
    name = "leaky-health"
    builtin = False

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.last_text = ""

    def provider(self, tenant: str, spec: str, session: str | None = None) -> Any:
        target = self

        class Remembering(_Wrapped):
            def retain(self, request: Any) -> Any:
                target.last_text = request.text
                return self.inner.retain(request)

        return Remembering(super().provider(tenant, spec, session))

    def degraded(self, tenant: str, spec: str) -> Any:
        return HealthSaysWhatItStored(super().degraded(tenant, spec), lambda: self.last_text)


def ignores_deadline(workdir: Path) -> LocalTarget:
    return _IgnoresDeadlineTarget(workdir)


def ignores_token_budget(workdir: Path) -> LocalTarget:
    return _IgnoresTokenBudgetTarget(workdir)


def sees_every_scope(workdir: Path) -> LocalTarget:
    return _SeesEveryScopeTarget(workdir)


def leaky_health(workdir: Path) -> LocalTarget:
    return _LeakyHealthTarget(workdir)

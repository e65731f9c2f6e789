"""What a PostgreSQL fact provider is bound to: one tenant's spec, shared or one session's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import CLIENT_KEY_RE, CLIENT_KEY_RULE, SPEC_KEY_RE
from specwire.runtime.facts.model import InvalidRequestError


class ScopeError(StoreError):
    """A call claimed a tenant, spec or session other than the one its provider is bound to."""


@dataclass(frozen=True)
class FactScope:
    """Whose memory: a tenant's spec, shared (``session`` None) or one session's."""

    tenant: str
    spec: str
    session: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tenant, str) or not CLIENT_KEY_RE.fullmatch(self.tenant):
            raise InvalidRequestError(f"tenant must be {CLIENT_KEY_RULE}")
        if not isinstance(self.spec, str) or not SPEC_KEY_RE.fullmatch(self.spec):
            raise InvalidRequestError("spec must be a spec name (1-128 letters, digits, _ .:-)")
        if self.session is not None and (
            not isinstance(self.session, str) or not CLIENT_KEY_RE.fullmatch(self.session)
        ):
            raise InvalidRequestError(f"session must be {CLIENT_KEY_RULE}")

    def params(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "spec": self.spec, "session": self.session or ""}

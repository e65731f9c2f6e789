"""Where the facts tier writes and what it reads, for one wiring: the spec's scope and the host's
audience turned into scope keys (``runtime.core.scopes``).

Without ``memory.scope`` in the fragment (cli and research) everything is the ``agent`` key, the
behaviour before scopes, and the host's audience is not consulted. With it, the host must say
who the agent is talking to: a scoped spec wired without an audience fails closed (a fact
written nowhere in particular would be everyone's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.scopes import (
    AGENT,
    SCOPES,
    Audience,
    Scope,
    ScopeError,
    ScopeKey,
    narrower_or_equal,
)

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import ScopeData


@lazy_methods_dataclass(frozen=True)
class FactScoping:
    """Where this wiring's writes go and which scope keys its reads see."""

    # Where a write goes when the model names no scope.
    write_key: ScopeKey = AGENT
    # What recall, point reads and the model's forget may see.
    visible: tuple[ScopeKey, ...] = (AGENT,)
    # The scopes the model may name on Remember, and the key each one writes to (empty: the
    # tool takes no scope).
    choices: tuple[tuple[Scope, ScopeKey], ...] = ()
    default: Scope | None = None

    @property
    def scoped(self) -> bool:
        return self.default is not None

    def key_for(self, scope: Scope | None) -> ScopeKey:
        """The key a write naming ``scope`` goes to; a scope outside ``choices`` is refused."""
        if scope is None:
            return self.write_key
        for name, key in self.choices:
            if name == scope:
                return key
        allowed = ", ".join(name for name, _ in self.choices) or "none"
        raise ScopeError(f"scope {scope!r} is not available here (allowed: {allowed})")


UNSCOPED = FactScoping()


def fact_scoping(scope: ScopeData | None, audience: Audience | None) -> FactScoping:
    if scope is None:
        return UNSCOPED
    if audience is None:
        raise MemoryServiceError(
            "memory-service: this spec's memory is scoped (memory.scope) but the host passed no "
            "audience: rebuild the bundle with `codegen build` so its builder takes one"
        )
    if scope.follow_user:
        audience = Audience(
            user=audience.user,
            conversation=audience.conversation,
            role=audience.role,
            crew=audience.crew,
            private=audience.private,
            follow_user=True,
        )
    try:
        write_key = audience.default_key(scope.default)
    except ScopeError as exc:
        raise MemoryServiceError(f"memory-service: {exc}") from None
    return FactScoping(
        write_key=write_key,
        visible=audience.visible(),
        choices=_choices(scope.default, audience),
        default=scope.default,
    )


def _choices(default: Scope, audience: Audience) -> tuple[tuple[Scope, ScopeKey], ...]:
    """Scopes no wider than the default (a crew role may also share with its ``crew``) that
    this audience has a subject for."""
    found: list[tuple[Scope, ScopeKey]] = []
    for scope in SCOPES:
        wider_crew = scope == "crew" and default == "role"
        if not (narrower_or_equal(scope, default) or wider_crew):
            continue
        try:
            key = audience.key_for(scope)
        except ScopeError:
            continue
        found.append((scope, key))
    return tuple(found)

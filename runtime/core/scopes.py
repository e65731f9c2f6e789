"""Who a memory belongs to: the scope vocabulary every backend, tool and host shares.

A fact (or a tier note) is written in exactly one **scope key**: a scope and, for the personal
scopes, the id of its subject.

- ``user``: one person, wherever they talk to the agent (subject: the host's id for that person,
  e.g. a Slack user id or the managed request's ``user`` field);
- ``conversation``: one conversation (subject: a channel or thread key, a managed session id);
- ``role``: one role of a crew (subject: the role's name);
- ``agent``: everyone who talks to this agent (no subject): the behaviour before scopes, and
  what facts written before scopes existed became;
- ``crew``: every role of a crew (no subject).

Subjects always come from the host (``Audience``), never from a model's tool arguments: the model
may pick a scope no wider than its default (``narrower_or_equal``), never a subject, so it cannot
write into, or read from, someone else's memory. Recall reads the union of the keys the audience
may see (``Audience.visible``) and nothing else.
"""

from __future__ import annotations

from typing import Literal, get_args

from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.patterns import LazyPattern

Scope = Literal["user", "conversation", "role", "agent", "crew"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
# Scopes whose keys name a subject; ``agent`` and ``crew`` never do.
PERSONAL_SCOPES: frozenset[Scope] = frozenset({"user", "conversation", "role"})

# How far a scope reaches: a model may write at its default's width or narrower.
_WIDTH: dict[Scope, int] = {"user": 0, "conversation": 0, "role": 0, "crew": 1, "agent": 2}

# A subject id as hosts pass it: Slack ids, client keys, role names, managed user strings, and
# a managed conversation ``<user>/<X-Session-Id>`` (two client keys of up to 200: 401).
SUBJECT_RE = LazyPattern(r"^[^\x00-\x1f\x7f]{1,512}$")


class ScopeError(ValueError):
    """A scope key or audience that breaks the rules above (a bug in the caller, or hostile
    input at a boundary); the message is safe to show."""


@lazy_methods_dataclass(frozen=True, order=True)
class ScopeKey:
    """The key facts are written under and read by: a scope, and its subject when it has one."""

    scope: Scope
    subject: str | None = None

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ScopeError(f"unknown memory scope {self.scope!r} (one of {', '.join(SCOPES)})")
        if self.scope in PERSONAL_SCOPES:
            if self.subject is None or not SUBJECT_RE.fullmatch(self.subject):
                raise ScopeError(f"a {self.scope} memory needs its subject id")
        elif self.subject is not None:
            raise ScopeError(f"an {self.scope} memory has no subject")

    def label(self) -> str:
        """``agent``, ``crew``, ``user:U123``: how owners see and filter a key."""
        return self.scope if self.subject is None else f"{self.scope}:{self.subject}"

    @classmethod
    def parse(cls, label: str) -> ScopeKey:
        scope, _, subject = label.partition(":")
        return cls(scope, subject or None)  # type: ignore[arg-type]  # checked in __post_init__


AGENT = ScopeKey("agent")
CREW = ScopeKey("crew")


def narrower_or_equal(scope: Scope, default: Scope) -> bool:
    """May a write the default puts in ``default`` be put in ``scope`` instead?"""
    return _WIDTH[scope] <= _WIDTH[default]


@lazy_methods_dataclass(frozen=True)
class Audience:
    """Who the agent is talking to in this turn, as the host knows it (never as the model says).

    ``private`` is true when nobody else reads the conversation: a Slack direct message, a
    managed request on behalf of one ``user``, a cli session. ``follow_user`` is the spec's
    opt-in for a person's ``user`` facts to be recalled in shared conversations too.
    """

    user: str | None = None
    conversation: str | None = None
    role: str | None = None
    crew: bool = False
    private: bool = False
    follow_user: bool = False

    def __post_init__(self) -> None:
        for name in ("user", "conversation", "role"):
            value = getattr(self, name)
            if value is not None and not SUBJECT_RE.fullmatch(value):
                raise ScopeError(f"audience {name} is not a valid subject id")
        if self.role is not None and not self.crew:
            raise ScopeError("an audience with a role is a crew's")

    def visible(self) -> tuple[ScopeKey, ...]:
        """Every key this audience may read, sorted: the union recall searches."""
        keys = [AGENT]
        if self.crew:
            keys.append(CREW)
        if self.role is not None:
            keys.append(ScopeKey("role", self.role))
        if self.conversation is not None:
            keys.append(ScopeKey("conversation", self.conversation))
        if self.user is not None and (self.private or self.follow_user):
            keys.append(ScopeKey("user", self.user))
        return tuple(sorted(keys))

    def key_for(self, scope: Scope) -> ScopeKey:
        """The key a write in ``scope`` goes to for this audience; a scope this audience has no
        subject for is an error (never a silent fallback to a wider scope)."""
        if scope == "agent":
            return AGENT
        if scope == "crew":
            if not self.crew:
                raise ScopeError("crew memory exists only in a crew")
            return CREW
        subject = {"user": self.user, "conversation": self.conversation, "role": self.role}[scope]
        if subject is None:
            raise ScopeError(f"there is no {scope} in this conversation to keep a memory for")
        return ScopeKey(scope, subject)

    def default_key(self, default: Scope) -> ScopeKey:
        """Where a write goes when the model names no scope, under the spec's ``default``.

        ``user`` means the person in their private conversations; said in a shared one (a Slack
        channel) it belongs to that conversation, since everyone there heard it. A default whose
        subject this audience lacks narrows, never widens: ``user`` without a user falls back to
        the conversation, ``role`` without a role is an error.
        """
        if default == "user":
            if self.user is not None and self.private:
                return ScopeKey("user", self.user)
            if self.conversation is not None:
                return ScopeKey("conversation", self.conversation)
        return self.key_for(default)


DEFAULT_AUDIENCE = Audience()

"""Which scope keys an owner's command covers: ``--scope``, ``--user``, ``--conversation``,
``--role`` (``runtime.core.scopes``).

Reading verbs (``list``, ``show``, ``search``, ``forget``, ``export``) narrow to a
``FactFilter``: ``--user U`` is that person's ``user`` key, ``--scope conversation`` every
conversation's key, nothing at all every key. Writing (``remember``) names one key: ``agent``
unless told otherwise. ``erase`` names one subject's key (``erase_target``). A subject is the
host's id (a Slack user id, a managed ``user``, a channel or thread key, a role's name), exactly
as ``codegen memory list`` shows it after the scope (``user:U123``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable

from specwire.runtime.core.scopes import (
    AGENT,
    PERSONAL_SCOPES,
    SCOPES,
    Scope,
    ScopeError,
    ScopeKey,
)
from specwire.runtime.facts.providers.admin import EVERY_KEY, FactFilter
from specwire.runtime.owner.selection import SelectionError

# The subject options, and the scope each names.
SUBJECT_OPTIONS: tuple[tuple[str, Scope], ...] = (
    ("user", "user"),
    ("conversation", "conversation"),
    ("role", "role"),
)


def add_scope_options(
    parser: argparse.ArgumentParser,
    *,
    scope_help: str = "only memory of this scope",
    subject_help: Callable[[str], str] | None = None,
) -> None:
    parser.add_argument("--scope", choices=SCOPES, help=scope_help)
    for option, scope in SUBJECT_OPTIONS:
        parser.add_argument(
            f"--{option}",
            metavar="ID",
            help=(
                subject_help(scope)
                if subject_help is not None
                else f"only the {scope} memory of this {_subject_noun(scope)}"
            ),
        )


def _subject_noun(scope: Scope) -> str:
    return {"user": "person", "conversation": "conversation", "role": "role"}.get(scope, scope)


def _named_subject(args: argparse.Namespace) -> tuple[Scope, str] | None:
    """The one subject option given, as (its scope, the id); None when none is."""
    given = [
        (scope, value)
        for option, scope in SUBJECT_OPTIONS
        if (value := getattr(args, option, None)) is not None
    ]
    if len(given) > 1:
        names = " and ".join(f"--{scope}" for scope, _ in given)
        raise SelectionError(f"{names}: name one subject (a memory has one scope key)")
    if not given:
        return None
    scope, subject = given[0]
    _check_subject(scope, subject)
    explicit = getattr(args, "scope", None)
    if explicit is not None and explicit != scope:
        raise SelectionError(f"--scope {explicit} and --{scope}: the {scope} id names {scope}")
    return scope, subject


def _check_subject(scope: Scope, subject: str) -> None:
    try:
        ScopeKey(scope, subject)
    except ScopeError:
        raise SelectionError(
            f"--{scope}: not a subject id (1-256 characters, no control characters)"
        ) from None


def fact_filter(args: argparse.Namespace) -> FactFilter:
    """The keys a reading verb covers (``EVERY_KEY`` when no option narrows them)."""
    named = _named_subject(args)
    if named is not None:
        return FactFilter(scopes=(named[0],), subject=named[1])
    scope = getattr(args, "scope", None)
    return EVERY_KEY if scope is None else FactFilter(scopes=(scope,))


def single_key(where: FactFilter) -> ScopeKey | None:
    """The one scope key ``where`` admits, when it names exactly one (``--user U``,
    ``--scope agent``); None when it covers several."""
    if where.scopes is None or len(where.scopes) != 1:
        return None
    scope = where.scopes[0]
    if scope in PERSONAL_SCOPES:
        return None if where.subject is None else ScopeKey(scope, where.subject)
    return ScopeKey(scope)


def describe(where: FactFilter) -> str:
    """How a filter reads in a message: ``every scope``, ``user:U123``, ``every role``."""
    if where.everything:
        return "every scope"
    key = single_key(where)
    if key is not None:
        return key.label()
    return " or ".join(f"every {scope}" for scope in where.scopes or ())


def write_key(args: argparse.Namespace) -> ScopeKey:
    """The key ``remember`` writes into: ``agent`` unless ``--scope`` or a subject option says
    otherwise; a personal scope needs its subject."""
    named = _named_subject(args)
    if named is not None:
        return ScopeKey(named[0], named[1])
    scope: Scope | None = getattr(args, "scope", None)
    if scope is None:
        return AGENT
    if scope in PERSONAL_SCOPES:
        raise SelectionError(f"--scope {scope} needs --{scope} ID (whose memory it is)")
    return ScopeKey(scope)


def erase_target(args: argparse.Namespace) -> ScopeKey | None:
    """The subject key ``erase`` removes (``--user ID``, ``--conversation ID``, ``--role
    NAME``); None without one. ``--scope`` alone names no one: refused."""
    named = _named_subject(args)
    if named is None:
        if getattr(args, "scope", None) is not None:
            raise SelectionError(
                "erase --scope needs a subject: --user ID, --conversation ID or --role NAME "
                "(erasure removes one subject's memory, never a whole scope)"
            )
        return None
    return ScopeKey(named[0], named[1])


def visible_keys(where: FactFilter, present: Iterable[ScopeKey]) -> tuple[ScopeKey, ...]:
    """The keys a search reads: the one ``where`` names, else those of ``present`` (the keys
    the backend holds facts in) that ``where`` admits, sorted."""
    key = single_key(where)
    if key is not None:
        return (key,)
    return tuple(sorted({key for key in present if where.admits_key(key)}))

"""``FactFilter``: which scope keys an owner's listing, export or quarantine view covers."""

from __future__ import annotations

import pytest

from specwire.runtime.core.scopes import AGENT, CREW, ScopeKey
from specwire.runtime.facts.model import InvalidRequestError
from specwire.runtime.facts.providers.admin import EVERY_KEY, FactFilter

ALICE = ScopeKey("user", "U_ALICE")
BOB = ScopeKey("user", "U_BOB")
GENERAL = ScopeKey("conversation", "C_GENERAL")
KEYS = (AGENT, CREW, ALICE, BOB, GENERAL, ScopeKey("role", "writer"))


def admitted(where: FactFilter) -> list[str]:
    return [key.label() for key in KEYS if where.admits_key(key)]


def test_the_default_admits_every_key() -> None:
    assert EVERY_KEY.everything and len(admitted(EVERY_KEY)) == len(KEYS)


def test_scopes_subject_and_both() -> None:
    assert admitted(FactFilter(scopes=("user",))) == ["user:U_ALICE", "user:U_BOB"]
    assert admitted(FactFilter(scopes=("agent", "crew"))) == ["agent", "crew"]
    # A subject never matches agent or crew facts, which name none.
    assert admitted(FactFilter(subject="U_ALICE")) == ["user:U_ALICE"]
    assert admitted(FactFilter(scopes=("user",), subject="U_BOB")) == ["user:U_BOB"]
    assert admitted(FactFilter(scopes=("conversation",), subject="U_BOB")) == []


@pytest.mark.parametrize(
    ("scopes", "subject", "message"),
    [
        ((), None, "at least one scope"),
        (("everyone",), None, "unknown memory scope"),
        (None, "bad\nid", "not a valid subject id"),
        (("agent",), "U_ALICE", "needs a scope that has one"),
    ],
)
def test_bad_filters_are_refused(scopes: object, subject: str | None, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        FactFilter(scopes=scopes, subject=subject)  # type: ignore[arg-type]

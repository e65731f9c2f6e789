"""Continuity scope ``audience`` (managed's ``auto``, issue 21): the person's folder (the
private conversation's ``user``, else the conversation), named by a digest of the scope key,
and no folder at all without an audience."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from continuity_support import Clock, Logs, layout_for

from specwire.runtime.continuity.wiring import build_continuity
from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment import ContinuityFragment
from specwire.runtime.core.paths import audience_folder
from specwire.runtime.core.scopes import Audience, ScopeKey

PERSONAL = ContinuityFragment(scope="audience")


def folder_of(tmp_path: Path, audience: Audience | None) -> Path:
    layout = layout_for(tmp_path)
    wiring = build_continuity(
        PERSONAL,
        layout,
        sessions_dir=layout.sessions_dir,
        session_scope="sess_00112233445566ff",
        now=Clock(),
        log=Logs(),
        audience=audience,
    )
    return Path(wiring.store.scope_dir)


def test_a_person_keeps_one_folder_across_conversations(tmp_path: Path) -> None:
    first = folder_of(tmp_path, Audience(user="ana", conversation="ana/s1", private=True))
    again = folder_of(tmp_path, Audience(user="ana", conversation="ana/s2", private=True))
    other = folder_of(tmp_path, Audience(user="bob", conversation="bob/s1", private=True))
    assert first == again != other
    assert first == layout_for(tmp_path).audience_state_dir(ScopeKey("user", "ana"))
    assert first.parent == (tmp_path / ".specwire/state/demo/sessions").resolve()


def test_an_anonymous_conversation_keeps_its_own(tmp_path: Path) -> None:
    kiosk = folder_of(tmp_path, Audience(conversation="kiosk-1", private=True))
    assert kiosk != folder_of(tmp_path, Audience(conversation="kiosk-2", private=True))
    # a person whose id is that conversation's key is someone else
    assert kiosk != folder_of(tmp_path, Audience(user="kiosk-1", private=True))


@pytest.mark.parametrize("audience", [None, Audience()], ids=["none", "nobody"])
def test_without_an_audience_nothing_is_wired(tmp_path: Path, audience: Audience | None) -> None:
    # Never the tenant-wide folder every user would read.
    with pytest.raises(MemoryServiceError, match='continuity scope "audience" needs'):
        folder_of(tmp_path, audience)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (ScopeKey("user", "a b"), ScopeKey("user", "a-b")),  # storage_name's safe forms agree
        (ScopeKey("user", "a:b"), ScopeKey("conversation", "b")),
        (ScopeKey("user", "x"), ScopeKey("conversation", "x")),
        (ScopeKey("conversation", "ana/s1"), ScopeKey("conversation", "ana-s1")),
    ],
)
def test_folder_names_are_safe_and_never_shared(one: ScopeKey, other: ScopeKey) -> None:
    for key in (one, other):
        assert re.fullmatch(r"(user|conversation)-[0-9a-f]{64}", audience_folder(key))
    assert audience_folder(one) != audience_folder(other)
    assert audience_folder(ScopeKey("user", "u" * 200)) == audience_folder(
        ScopeKey("user", "u" * 200)
    )

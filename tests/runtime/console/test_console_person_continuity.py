"""The console's Continuity page shows a managed person's working memory (continuity scope
``audience``: ``state/<spec>/sessions/user-<sha256>/``) when asked for by user or conversation
id, as ``codegen memory continuity show --user ID`` does, and only theirs: without an id it
shows the tenant-wide folder, an unknown id shows nothing (never someone else's), and a bad or
doubled choice is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from specwire.runtime.console.data import ConsoleData
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.core.tenancy import build_tenant
from tests.runtime.console.console_client import console_data, logged_in

SPEC = "concierge"
FOCUSES = {
    ScopeKey("user", "ana"): "ana sick-leave paperwork",
    ScopeKey("user", "bob"): "bob <b>window</b> seat",
    ScopeKey("conversation", "kiosk-1"): "the refund queue",
}
SHARED = "the old shared focus of the tenant"


@pytest.fixture
def acme(tmp_path: Path) -> Iterator[tuple[ConsoleData, StoreLayout]]:
    tenant = build_tenant("acme", tmp_path / ".specwire" / "tenants")
    layout = StoreLayout(tenant.root, SPEC)
    for key, focus in FOCUSES.items():
        ContinuityStore(layout, scope_dir=layout.audience_state_dir(key)).write_focus(focus)
    ContinuityStore(layout).write_focus(SHARED)
    data = console_data(tmp_path, tenant="acme")
    yield data, layout
    data.close()


def shown(data: ConsoleData, query: str = "") -> tuple[int, str]:
    answer = logged_in(data).get("/continuity" + query)
    return answer.status_code, answer.text


def test_one_persons_working_memory_and_no_one_elses(
    acme: tuple[ConsoleData, StoreLayout],
) -> None:
    data, _ = acme
    status, page = shown(data, "?user=ana")
    assert status == 200 and "sick-leave" in page
    assert "refund" not in page and "window" not in page and SHARED not in page
    assert "user ana" in page
    status, page = shown(data, "?conversation=kiosk-1&user=")
    assert status == 200 and "refund" in page and "sick-leave" not in page
    status, page = shown(data, "?user=bob")
    assert "&lt;b&gt;window&lt;/b&gt;" in page and "<b>window" not in page  # escaped


def test_without_an_id_the_tenant_wide_folder_and_an_unknown_id_shows_nothing(
    acme: tuple[ConsoleData, StoreLayout],
) -> None:
    data, layout = acme
    status, page = shown(data)
    assert status == 200 and SHARED in page and "tenant-wide" in page
    assert not any(focus in page for focus in FOCUSES.values() if "<" not in focus)
    assert "window" not in page
    status, page = shown(data, "?user=carol")
    assert status == 200 and SHARED not in page and "window" not in page
    assert not any(focus in page for focus in FOCUSES.values() if "<" not in focus)
    assert not layout.audience_state_dir(ScopeKey("user", "carol")).exists()  # a read: no folder


@pytest.mark.parametrize(
    "query", ["?user=ana&conversation=kiosk-1", "?user=ana%20lopez%0A", "?conversation=a%00b"]
)
def test_a_doubled_or_bad_choice_is_refused(
    acme: tuple[ConsoleData, StoreLayout], query: str
) -> None:
    status, page = shown(acme[0], query)
    assert status == 400
    assert SHARED not in page and "sick-leave" not in page and "refund" not in page

"""The console in process (Starlette's TestClient): login, CSRF and origin checks, escaping,
the pages over a demo memory, changes behind a confirm page, tenants kept apart."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

from specwire.runtime.console.app import CSP
from specwire.runtime.console.data import ConsoleData
from specwire.runtime.facts.store import FactStore
from tests.runtime.console.console_client import (
    BASE,
    TOKEN,
    client,
    console_data,
    csrf_of,
    logged_in,
)
from tests.runtime.console.demo_memory import HELD_TEXT, SESSION, DemoMemory, build


@pytest.fixture
def demo(tmp_path: Path) -> DemoMemory:
    return build(tmp_path)


@pytest.fixture
def data(demo: DemoMemory) -> Iterator[ConsoleData]:
    opened = console_data(demo.root)
    yield opened
    opened.close()


def test_every_page_needs_the_token(data: ConsoleData) -> None:
    browser = client(data)
    answer = browser.get("/")
    assert answer.status_code == 303 and answer.headers["location"].endswith("/login")
    assert browser.get("/search?q=deploy").status_code == 303
    wrong = browser.post("/login", data={"token": "not-the-token-at-all"}, headers={"origin": BASE})
    assert wrong.headers["location"].endswith("/login?failed=1")
    assert "specwire_console" not in wrong.headers.get("set-cookie", "")


def test_login_sets_a_strict_httponly_session_cookie_not_the_token(data: ConsoleData) -> None:
    answer = client(data).post("/login", data={"token": TOKEN}, headers={"origin": BASE})
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert TOKEN not in cookie


def test_security_headers_on_every_answer(data: ConsoleData) -> None:
    browser = client(data)
    for answer in (browser.get("/login"), browser.get("/"), logged_in(data).get("/nowhere")):
        assert answer.headers["content-security-policy"] == CSP
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"


def test_facts_list_filters_and_fact_page(data: ConsoleData, demo: DemoMemory) -> None:
    browser = logged_in(data)
    live = browser.get("/").text
    assert demo.deploy_fact in live and demo.old_fact not in live
    superseded = browser.get("/?status=superseded").text
    assert demo.old_fact in superseded and demo.deploy_fact not in superseded
    assert demo.user_fact in browser.get("/?scope=user&subject=U42").text
    assert demo.deploy_fact not in browser.get("/?scope=user&subject=U42").text
    assert demo.held_fact in browser.get("/?status=quarantined").text
    page = browser.get(f"/facts/{demo.old_fact}").text
    assert demo.deploy_fact in page  # the supersede chain
    fact = browser.get(f"/facts/{demo.deploy_fact}").text
    assert f"/sessions/{SESSION}#tool-{demo.remember_tool}" in fact
    assert f"/sessions/{SESSION}#tool-{demo.proof_tool}" in fact


def test_keyset_pages_cover_every_fact_once(tmp_path: Path) -> None:
    texts = [f"corpus fact number {n}" for n in range(120)]
    demo = build(tmp_path, extra_texts=texts)
    data = console_data(demo.root)
    try:
        seen: list[str] = []
        cursor = None
        while True:
            page = data.page("live", console_data_filter(), tag="corpus", text=None, cursor=cursor)
            seen += [status.fact.text for status in page.statuses]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert sorted(seen) == sorted(texts) and len(seen) == len(set(seen))
        assert seen[0] == "corpus fact number 119"  # newest first
    finally:
        data.close()


def console_data_filter():  # type: ignore[no-untyped-def]
    from specwire.runtime.facts.providers.admin import EVERY_KEY

    return EVERY_KEY


def test_search_shows_scores_and_reasons(data: ConsoleData, demo: DemoMemory) -> None:
    page = logged_in(data).get("/search?q=deploy+make+ship").text
    assert demo.deploy_fact in page
    assert "BM25 #1" in page
    assert "evidence factor" in page  # the fact cites a tool call


def test_a_change_needs_csrf_and_the_same_origin(data: ConsoleData, demo: DemoMemory) -> None:
    browser = logged_in(data)
    confirm = browser.get(f"/quarantine/{demo.held_fact}/release")
    assert confirm.status_code == 200 and html.escape(HELD_TEXT) in confirm.text
    token = csrf_of(confirm.text)
    target = f"/quarantine/{demo.held_fact}/release"
    assert browser.post(target, data={}, headers={"origin": BASE}).status_code == 403
    assert (
        browser.post(target, data={"csrf": "x" * 43}, headers={"origin": BASE}).status_code == 403
    )
    cross = browser.post(target, data={"csrf": token}, headers={"origin": "http://evil.example"})
    assert cross.status_code == 403
    site = browser.post(target, data={"csrf": token}, headers={"sec-fetch-site": "cross-site"})
    assert site.status_code == 403
    assert (
        client(data).post(target, data={"csrf": token}, headers={"origin": BASE}).status_code == 403
    )
    with FactStore.open(demo.layout.facts_db) as store:
        assert store.quarantined_by_id(demo.held_fact) is not None  # nothing changed yet
    done = browser.post(target, data={"csrf": token}, headers={"origin": BASE})
    assert done.status_code == 200, done.text
    with FactStore.open(demo.layout.facts_db) as store:
        assert store.quarantined_by_id(demo.held_fact) is None
        assert store.get(demo.held_fact) is not None


def test_stored_text_is_escaped(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>"quoted"'
    demo = build(tmp_path, extra_texts=[hostile])
    data = console_data(demo.root)
    try:
        browser = logged_in(data)
        for path in ("/?tag=corpus", "/search?q=script+alert", "/?text=%3Cscript%3E"):
            page = browser.get(path).text
            assert "<script>" not in page and "<img src=x" not in page
            assert html.escape(hostile) in page
    finally:
        data.close()


def test_erase_preview_confirm_and_receipt(data: ConsoleData, demo: DemoMemory) -> None:
    browser = logged_in(data)
    preview = browser.get("/erase/preview?kind=subject&value=Dana+Whitfield")
    assert preview.status_code == 200 and "facts/helper.sqlite3" in preview.text
    receipt = browser.post(
        "/erase",
        data={"csrf": csrf_of(preview.text), "kind": "subject", "value": "Dana Whitfield"},
        headers={"origin": BASE},
    )
    assert receipt.status_code == 200, receipt.text
    assert "Erasure receipt" in receipt.text and "clean: 0 occurrences" in receipt.text
    assert "Dana" not in browser.get("/?scope=user&subject=U42").text


def test_tenants_are_kept_apart(tmp_path: Path) -> None:
    tenants = tmp_path / ".specwire" / "tenants"
    acme = build(tmp_path, tenant_root=tenants / "acme")
    other = build(tmp_path / "elsewhere", tenant_root=tenants / "globex")
    data = console_data(tmp_path, tenant="acme")
    try:
        browser = logged_in(data)
        assert acme.deploy_fact in browser.get("/").text
        assert browser.get(f"/facts/{other.deploy_fact}").status_code == 404
        assert other.deploy_fact not in browser.get("/search?q=deploy").text
    finally:
        data.close()


def test_pages_over_the_demo_memory(data: ConsoleData, demo: DemoMemory) -> None:
    browser = logged_in(data)
    continuity = browser.get("/continuity").text
    assert "Ship release 2.1" in continuity
    assert f"/sessions/{SESSION}#tool-{demo.proof_tool}" in continuity
    timeline = browser.get(f"/sessions/{SESSION}").text
    assert f'id="tool-{demo.proof_tool}"' in timeline and "42 passed" in timeline
    assert "input 812" in timeline
    wiki = browser.get("/wiki/deploys").text
    assert "make ship" in wiki and "2 of 2" in wiki
    diff = browser.get("/wiki/deploys/diff?from=1&to=2").text
    assert "diff-add" in diff and "diff-del" in diff
    assert "deploy-recall" in browser.get("/evals").text
    assert browser.get("/sessions/sess_..%2F..%2Fetc").status_code == 404
    assert browser.get("/wiki/..%2Fsecret").status_code == 404

"""The console in process (Starlette's TestClient): login, CSRF and origin checks, escaping,
the pages over a demo memory, changes behind a confirm page, tenants kept apart."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

from specwire.runtime.console.app import CSP
from specwire.runtime.console.auth import same_origin
from specwire.runtime.console.data import BackendOptions, ConsoleData, Refused
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.facts.providers.admin import EVERY_KEY
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.selection import select
from tests.runtime.console.console_client import (
    BASE,
    TOKEN,
    client,
    console_data,
    csrf_of,
    logged_in,
)
from tests.runtime.console.demo_memory import HELD_TEXT, SESSION, SPEC, DemoMemory, build

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"quoted"'
CORPUS = [f"corpus fact number {n}" for n in range(30)]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoMemory, ConsoleData]]:
    """One demo memory for the tests that only read (built once: the fast layer's budget)."""
    demo = build(tmp_path_factory.mktemp("console"), extra_texts=[HOSTILE, *CORPUS])
    opened = console_data(demo.root)
    yield demo, opened
    opened.close()


@pytest.fixture
def demo(shared: tuple[DemoMemory, ConsoleData]) -> DemoMemory:
    return shared[0]


@pytest.fixture
def data(shared: tuple[DemoMemory, ConsoleData]) -> ConsoleData:
    return shared[1]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoMemory, ConsoleData]]:
    """A demo memory for the tests that change it, each a different part (the held write,
    the user's fact), so their order does not matter."""
    demo = build(tmp_path_factory.mktemp("changed"))
    opened = console_data(demo.root)
    yield demo, opened
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


def test_keyset_pages_cover_every_fact_once(data: ConsoleData) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = data.page("live", EVERY_KEY, tag="corpus", text="number", cursor=cursor, limit=7)
        seen += [status.fact.text for status in page.statuses]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert sorted(seen) == sorted(CORPUS) and len(seen) == len(set(seen))
    assert seen[0] == CORPUS[-1]  # newest first


def test_search_shows_scores_and_reasons(data: ConsoleData, demo: DemoMemory) -> None:
    page = logged_in(data).get("/search?q=deploy+make+ship").text
    assert demo.deploy_fact in page
    assert "BM25 #1" in page
    assert "evidence factor" in page  # the fact cites a tool call


def test_a_change_needs_csrf_and_the_same_origin(fresh: tuple[DemoMemory, ConsoleData]) -> None:
    demo, data = fresh
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


def test_stored_text_is_escaped(data: ConsoleData) -> None:
    browser = logged_in(data)
    for path in ("/?tag=corpus", "/search?q=script+alert", "/?text=%3Cscript%3E"):
        page = browser.get(path).text
        assert "<script>" not in page and "<img src=x" not in page
        assert html.escape(HOSTILE) in page


def test_erase_preview_confirm_and_receipt(fresh: tuple[DemoMemory, ConsoleData]) -> None:
    demo, data = fresh
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
    """A console opened for tenant acme sees acme's memory and none of globex's, though both
    live under one root (the same spec, the same ids' shape)."""
    tenants = tmp_path / ".specwire" / "tenants"
    ids = {}
    for tenant in ("acme", "globex"):
        layout = StoreLayout((tenants / tenant).resolve(), SPEC)
        layout.facts_db.parent.mkdir(parents=True)
        with FactStore.open(layout.facts_db) as store:
            ids[tenant] = store.remember(f"{tenant} deploys on Tuesdays").id
    data = console_data(tmp_path, tenant="acme")
    try:
        browser = logged_in(data)
        assert ids["acme"] in browser.get("/").text
        assert browser.get(f"/facts/{ids['globex']}").status_code == 404
        found = browser.get("/search?q=deploys+tuesdays").text
        assert ids["acme"] in found and ids["globex"] not in found
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
    evals = browser.get("/evals").text
    assert "deploy-recall" in evals and "<svg" in evals and "Memory growth" in evals
    assert browser.get("/sessions/sess_..%2F..%2Fetc").status_code == 404
    assert browser.get("/wiki/..%2Fsecret").status_code == 404


@pytest.mark.parametrize(
    ("origin", "fetch_site", "allowed"),
    [
        (BASE, "same-origin", True),
        ("null", "same-origin", True),  # Chromium's own form post under no-referrer
        (None, "same-origin", True),
        ("null", None, False),
        ("null", "cross-site", False),
        (BASE, "same-site", False),
        ("http://evil.example", None, False),
        ("http://evil.example", "same-origin", False),
        (None, None, True),  # no browser: the CSRF token alone decides
    ],
)
def test_same_origin_rule(origin: str | None, fetch_site: str | None, allowed: bool) -> None:
    assert same_origin(origin, fetch_site, BASE) is allowed


def test_log_out_ends_the_session(fresh: tuple[DemoMemory, ConsoleData]) -> None:
    browser = logged_in(fresh[1])
    page = browser.get("/")
    assert page.status_code == 200
    out = browser.post("/logout", data={"csrf": csrf_of(page.text)}, headers={"origin": BASE})
    assert out.status_code == 303
    assert browser.get("/").headers["location"].endswith("/login")


def test_search_narrowed_to_one_person(data: ConsoleData, demo: DemoMemory) -> None:
    browser = logged_in(data)
    mine = browser.get("/search?q=summaries+bullet+deploy&scope=user&subject=U42").text
    assert demo.user_fact in mine and demo.deploy_fact not in mine
    agents = browser.get("/search?q=summaries+bullet+deploy&scope=agent").text
    assert demo.deploy_fact in agents and demo.user_fact not in agents
    assert browser.get("/search?q=x&scope=nowhere").status_code == 400


@pytest.mark.parametrize("backend", ["postgres", "http"])
def test_erasure_is_refused_when_the_facts_are_not_in_the_file_store(
    demo: DemoMemory, backend: str
) -> None:
    """A console over facts in PostgreSQL or a memory service erased only the files under its
    root, and its receipt said "clean: 0 occurrences" (the verification searches files)
    while every fact naming the subject stayed in the database: it refuses, and changes
    nothing."""
    before = {path: path.read_bytes() for path in sorted(demo.root.rglob("*")) if path.is_file()}
    data = ConsoleData(
        select(demo.root, None, None, None),
        BackendOptions(backend=backend, dsn="SPECWIRE_TEST_DSN", url="http://127.0.0.1:9"),
    )
    with pytest.raises(Refused, match="codegen memory erase"):
        data.erase(Subject.literal("Dana Whitfield"), None)
    after = {path: path.read_bytes() for path in sorted(demo.root.rglob("*")) if path.is_file()}
    assert after == before

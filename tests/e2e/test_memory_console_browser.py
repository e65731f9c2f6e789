"""The memory console in real Chromium (Debian's package, driven by Playwright): the issue's
acceptance — search a fact and open its page; follow a proof to its tool call in the session
log; release a held write and see it recalled; erase a subject and read the receipt; refused
without the token and on a cross-site form post; every injection-corpus item rendered as inert
text (a CSP violation listener, dialogs trapped, DOM assertions)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.facts.store import FactStore
from tests.e2e.console_support import browser_page, chromium_missing, log_in, running_console
from tests.runtime.console.demo_memory import (
    CORPUS_SESSION,
    HELD_TEXT,
    SESSION,
    DemoMemory,
    build,
)
from tests.runtime.safety.injection_corpus import BENIGN, MALICIOUS

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

# Stored text aimed at a browser rather than a model.
HTML_HOSTILE = [
    "<script>alert('stored')</script>",
    '<img src=x onerror="alert(1)">',
    "<svg onload=alert(2)></svg>",
    '"><iframe src="javascript:alert(3)"></iframe>',
    "</td></tr></table><form action=https://evil.example><button>go</button></form>",
    "<style>body{display:none}</style>",
    "<a href='javascript:alert(4)'>click</a>",
    "{{7*7}} ${7*7} <%= 7*7 %>",
]
CORPUS = [*MALICIOUS, *BENIGN, *HTML_HOSTILE]


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def demo(tmp_path: Path) -> DemoMemory:
    return build(tmp_path, extra_texts=CORPUS, transcript=CORPUS)


@pytest.fixture
def console(demo: DemoMemory) -> Iterator[str]:
    with running_console(demo.root) as running:
        yield running.url


def _inert(page: Any) -> None:
    """No script ran, none was blocked trying, no handler attribute or script element exists."""
    assert page.evaluate("window.__violations") == []
    assert page.evaluate("window.__ran") == []
    assert page.evaluate("document.scripts.length") == 0
    assert (
        page.evaluate(
            "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
            ".filter(a => a.name.startsWith('on') || a.value.trim().startsWith('javascript:'))"
            ".map(a => a.name)"
        )
        == []
    )
    assert (
        page.evaluate(
            "document.querySelectorAll('iframe, svg, img, style, form[action^=http]').length"
        )
        == 0
    )


def test_search_a_fact_and_open_its_page(console: str, demo: DemoMemory) -> None:
    with browser_page() as page:
        log_in(page, console)
        page.click("nav >> text=Search")
        page.fill("input[name=q]", "how do we deploy make ship")
        page.click("form.filters button")
        row = page.locator("#hits tbody tr").first
        assert "make ship" in row.inner_text()
        assert "BM25" in row.inner_text()
        row.locator(f"a:has-text('{demo.deploy_fact}')").click()
        page.wait_for_url(f"**/facts/{demo.deploy_fact}")
        assert "Deploys run with make ship" in page.inner_text("main")
        assert SESSION in page.inner_text("main")
        _inert(page)


def test_follow_a_proof_to_the_tool_call(console: str, demo: DemoMemory) -> None:
    with browser_page() as page:
        log_in(page, console)
        page.click("nav >> text=Continuity")
        page.click(f".proof a:has-text('{demo.proof_tool}')")
        page.wait_for_url(f"**/sessions/{SESSION}#tool-{demo.proof_tool}")
        call = page.locator(f"#tool-{demo.proof_tool}")
        assert call.is_visible() and "make test" in call.inner_text()
        assert page.evaluate("document.querySelector(':target').id") == f"tool-{demo.proof_tool}"
        assert "42 passed" in page.inner_text("#timeline")
        _inert(page)


def test_release_a_held_write_and_see_it_recalled(console: str, demo: DemoMemory) -> None:
    with browser_page() as page:
        log_in(page, console)
        page.goto(f"{console}/search?q=previous+instructions+ssh")
        assert HELD_TEXT not in page.inner_text("main")
        page.click("nav >> text=Quarantine")
        page.click(f"a[href$='/quarantine/{demo.held_fact}/release']")
        assert HELD_TEXT in page.inner_text("main")  # the confirm page shows what changes
        page.click("form.confirm button")
        assert "Released as" in page.inner_text("main")
        page.goto(f"{console}/search?q=previous+instructions+ssh")
        assert HELD_TEXT in page.inner_text("#hits")
        _inert(page)


def test_erase_a_subject_and_read_the_receipt(console: str, demo: DemoMemory) -> None:
    with browser_page() as page:
        log_in(page, console)
        page.click("nav >> text=Erase")
        page.select_option("select[name=kind]", "subject")
        page.fill("input[name=value]", "Dana Whitfield")
        page.click("form.filters button")
        assert "facts/helper.sqlite3" in page.inner_text("#preview")
        page.click("form.confirm button")
        text = page.inner_text("main")
        assert "Erasure receipt" in text and "clean: 0 occurrences" in text
        page.goto(f"{console}/?status=all&text=Whitfield")
        assert "no facts match" in page.inner_text("main")
        _inert(page)


class _Attacker(BaseHTTPRequestHandler):
    """Another origin's page: a form posting to the console (what a malicious site would do
    in the owner's browser)."""

    target = ""

    def do_GET(self) -> None:  # noqa: N802
        body = (
            f'<form method="post" action="{self.target}">'
            '<input name="csrf" value="guessed"><button id="go">win a prize</button></form>'
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_refused_without_the_token_and_on_a_cross_site_post(console: str, demo: DemoMemory) -> None:
    with browser_page() as page:
        page.goto(console + "/")
        assert page.url.endswith("/login")
        page.goto(f"{console}/facts/{demo.deploy_fact}")
        assert page.url.endswith("/login") and "make ship" not in page.content()
        log_in(page, console, token="not-the-owner-token-at-all")
        assert page.url.endswith("/login?failed=1")
        log_in(page, console)
        assert page.url.endswith("/")
        _Attacker.target = f"{console}/quarantine/{demo.held_fact}/delete"
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            # localhost vs 127.0.0.1: another site's origin, in the same logged-in browser.
            page.goto(f"http://localhost:{server.server_address[1]}/")
            with page.expect_navigation():
                page.click("#go")
            assert "log in first" in page.content() or "own pages" in page.content()
        finally:
            server.shutdown()
            server.server_close()
    with FactStore.open(demo.layout.facts_db) as store:
        assert store.quarantined_by_id(demo.held_fact) is not None


def test_every_corpus_item_renders_as_inert_text(console: str, demo: DemoMemory) -> None:
    shown: list[str] = []
    with browser_page() as page:
        log_in(page, console)
        url = f"{console}/?tag=corpus"
        while True:
            page.goto(url)
            _inert(page)
            shown += page.locator("#facts tbody td:last-child").all_inner_texts()
            following = page.locator(".pager a:has-text('next page')")
            if following.count() == 0:
                break
            url = console + following.get_attribute("href")
        page.goto(f"{console}/quarantine")
        _inert(page)
        shown += page.locator("#held tbody tr td:nth-child(5)").all_inner_texts()
        page.goto(f"{console}/sessions/{CORPUS_SESSION}")
        _inert(page)
        typed = page.locator(".event-user_message .text").all_inner_texts()
    rendered = {_squash(text) for text in shown}
    missing = [item for item in CORPUS if _squash(item) not in rendered]
    assert missing == []
    assert [_squash(text) for text in typed] == [_squash(item) for item in CORPUS]


def test_eval_and_dream_plots_draw_within_the_policy(console: str) -> None:
    with browser_page() as page:
        log_in(page, console)
        page.click("nav >> text=Evals & dream")
        assert page.locator("figure.chart svg").count() >= 2  # scores and memory growth
        assert "deploy-recall" in page.inner_text("main")
        assert page.evaluate("window.__violations") == []
        assert page.evaluate("document.scripts.length") == 0

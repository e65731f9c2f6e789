"""The HTML report in a real browser (Debian's Chromium driven by Playwright): every hostile text
of the injection corpus renders as text, nothing runs, nothing breaks the page's policy.

Skipped where Playwright or Chromium is not installed (``.ci/run`` installs both).
"""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.evals.history import history_record
from specwire.runtime.evals.report_html import (
    dream_section_html,
    eval_section_html,
    report_page_html,
)
from tests.runtime.evals.eval_data import mode_results
from tests.runtime.evals.html_inert import hostile_texts, shown_as

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
# Recorded before any of the page's own content loads; runs in Playwright's injected script,
# which the page's policy does not govern.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def hostile_page(texts: list[str]) -> str:
    record = history_record(mode_results(), T0)
    results: list[dict[str, Any]] = list(record["results"])
    for text in texts:
        results.append(
            {
                "scenario": text,
                "memory": "on",
                "file": text,
                "graders": {"reAskRate": {"value": 0.5}},
            }
        )
    state = {"status": texts[0], "lastRunAt": texts[1], "windowKey": texts[2],
             "lastOutcome": {"errors": texts, "facts": {"swept": 3}},
             "stale": {"facts": texts[:20]}}  # fmt: skip
    sections = [
        eval_section_html(
            results,
            history=[record],
            recall_ms=[0.5, 1.5, 40.0],
            fact_created=[T0, T0 + timedelta(days=3)],
        ),
        dream_section_html(state, runs=[state["lastOutcome"]]),
    ]
    return report_page_html(texts[3], sections, note=texts[4])


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", shown_as(text)).strip()


def test_the_injection_corpus_renders_as_text_and_nothing_runs(tmp_path: Path) -> None:
    texts = hostile_texts()
    page_file = tmp_path / "report.html"
    page_file.write_text(hostile_page(texts), encoding="utf-8")
    dialogs: list[str] = []
    console: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.on("console", lambda message: console.append(message.text))
            page.add_init_script(RECORD_VIOLATIONS)
            page.goto(page_file.as_uri(), wait_until="load", timeout=60_000)
            violations = page.evaluate("window.__violations")
            found = page.evaluate(
                "({runnable: document.querySelectorAll("
                "'script, iframe, object, embed, img, image, use, a, link, foreignObject').length,"
                " handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
                "   .filter(a => a.name.startsWith('on')).length,"
                " charts: document.querySelectorAll('svg[role=img]').length,"
                " figures: document.querySelectorAll('figure.chart').length,"
                " text: document.body.textContent,"
                " title: document.title})"
            )
        finally:
            browser.close()
    assert dialogs == [] and violations == []
    assert not [line for line in console if "Content Security Policy" in line]
    assert found["runnable"] == 0 and found["handlers"] == 0
    assert found["charts"] == found["figures"] > 5
    assert found["title"] == flat(texts[3])
    shown = re.sub(r"\s+", " ", found["text"])
    missing = [text for text in texts if flat(text) not in shown]
    assert missing == []

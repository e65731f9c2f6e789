"""``codegen eval --html`` end to end: a shipped spec run with the scripted model, memory on and
off, twice; the report read back with ``html.parser``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner, Result

from specwire.emitters.command import codegen
from specwire.runtime.evals.history import read_history
from specwire.runtime.evals.report_html import CSP
from specwire.runtime.facts.store import FactStore
from tests.runtime.evals.html_inert import MARKUP_ATTACKS, Element, assert_inert, shown_as
from tests.runtime.safety.injection_corpus import BENIGN, MALICIOUS

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_NAME = MARKUP_ATTACKS[1]  # '"><img src=x onerror=alert(1)>'


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(codegen, ["eval", *(str(a) for a in args)])


def scenario_file(tmp_path: Path) -> Path:
    """The shipped ops-notes scenario, in a folder with a hostile name (scenario names are
    checked; file paths are whatever the file system allows)."""
    source = (ROOT / "examples" / "evals" / "ops-notes-recall.yaml").read_text(encoding="utf-8")
    body = source.replace(
        "spec: ../ops-notes.yaml", f"spec: {ROOT / 'examples' / 'ops-notes.yaml'}"
    )
    folder = tmp_path / HOSTILE_NAME
    folder.mkdir()
    path = folder / "ops-notes-recall.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def seeded_store(path: Path) -> None:
    """Benign facts written on three days (one day empty between), injection attempts too
    (held in quarantine, so not counted as facts)."""
    day = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
    for offset, texts in ((0, BENIGN[:3]), (2, BENIGN[3:5]), (3, MALICIOUS[:4])):
        moment = day + timedelta(days=offset)
        with FactStore.open(path, now=lambda moment=moment: moment) as store:
            for text in texts:
                store.remember(text)


def figure(tree_root: Element, element_id: str) -> Element:
    [found] = [f for f in tree_root.find_all("figure") if f.attrs.get("id") == element_id]
    return found


def rows(table: Element) -> list[list[str]]:
    return [[cell.all_text() for cell in row.children] for row in table.find_all("tr")]


def test_the_html_report_plots_the_run_the_history_and_the_store(tmp_path: Path) -> None:
    scenario = scenario_file(tmp_path)
    store = tmp_path / "facts.sqlite3"
    seeded_store(store)
    report = tmp_path / "out" / "eval.html"
    report.parent.mkdir()

    first = invoke(scenario, "--json", "--html", report, "--store", store)
    assert first.exit_code == 0, first.output
    second = invoke(scenario, "--html", report, "--store", store)
    assert second.exit_code == 0, second.output
    assert f"report written to {report}" in second.stderr

    history = read_history(report.parent / "eval.history.jsonl")
    assert len(history) == 2
    # The history keeps exactly what --json printed.
    assert history[0]["results"] == json.loads(first.stdout)["results"]

    page = report.read_text(encoding="utf-8")
    tree = assert_inert(page)  # no script, handler, javascript: URL or outside reference
    root = tree.root
    [meta] = [m for m in root.find_all("meta") if "http-equiv" in m.attrs]
    assert meta.attrs["content"] == CSP
    [section] = root.find_all("section")
    assert [h.all_text() for h in section.find_all("h3")] == [
        "Scores per scenario",
        "Recall latency",
        "Scores over runs",
        "Memory growth",
    ]
    # The scores table: the hostile file path is text, the values are the run's.
    scores = rows(section.find_all("table")[0])
    assert [row[:2] for row in scores[1:]] == [
        ["ops-notes-recall", "on"],
        ["ops-notes-recall", "off"],
    ]
    assert scores[1][-1] == str(scenario)
    on = history[1]["results"][0]["graders"]
    assert scores[1][2] == f"{on['reAskRate']['value']:.2f} (0/1)"
    assert scores[2][3] == "0.00 (0/1)"  # memory off keeps no requirement
    assert shown_as(HOSTILE_NAME) in root.all_text()
    assert "onerror" not in {name for _, name, _ in tree.attributes}

    # Recall latency: the recalls of memory on, timed by the loop and summed up.
    timed = history[1]["recallMs"]
    assert timed and all(ms >= 0 for ms in timed)
    assert f"{len(timed)} recalls: median" in section.all_text()
    latency = rows(figure(section, "chart-eval-recall-latency").find_all("table")[0])
    assert sum(int(row[1]) for row in latency[1:]) == len(timed)

    # Scores over runs: both runs, one line per rate.
    runs = rows(figure(section, "chart-eval-runs-on").find_all("table")[0])
    assert runs[0] == ["run", "pick-up", "proof honesty", "re-ask", "retention"]
    assert len(runs) == 3 and [row[4] for row in runs[1:]] == ["1.00", "1.00"]

    # Memory growth: 5 benign facts over four days, the quarantined writes not among them.
    assert "5 facts written" in section.all_text()
    per_day = rows(figure(section, "chart-eval-growth-per-period").find_all("table")[0])
    assert per_day[1:] == [["2026-11-27", "3"], ["2026-11-28", "0"], ["2026-11-29", "2"]]

"""The eval and dream sections and the report page, read back with ``html.parser``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from specwire.runtime.dream.outcome import ContinuityCounts, DreamOutcome, FactCounts, ModelPhase
from specwire.runtime.dream.state import state_record, window_of
from specwire.runtime.evals.history import history_record
from specwire.runtime.evals.report import json_text
from specwire.runtime.evals.report_html import (
    CSP,
    dream_section_html,
    eval_section_html,
    facts_per_period,
    percentile,
    report_page_html,
)
from specwire.runtime.evals.runner import ModeResult
from tests.runtime.evals.eval_data import mode_results
from tests.runtime.evals.html_inert import MARKUP_ATTACKS, Element, assert_inert, shown_as

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def as_json(results: list[ModeResult]) -> list[dict[str, Any]]:
    """What ``codegen eval --json`` prints, read back."""
    data: list[dict[str, Any]] = json.loads(json_text(results))["results"]
    return data


def section(markup: str) -> Element:
    [found] = assert_inert(markup).root.find_all("section")
    return found


def rows(table: Element) -> list[list[str]]:
    return [[cell.all_text() for cell in row.children] for row in table.find_all("tr")]


def test_the_eval_section_holds_the_scores_table_and_a_chart_per_rate() -> None:
    results = mode_results()
    history = [history_record(results, T0)]
    found = section(eval_section_html(as_json(results), history=history, recall_ms=[0.4, 2.5]))
    assert found.attrs["aria-labelledby"] == "eval-heading"
    headings = [h.all_text() for h in found.find_all("h2") + found.find_all("h3")]
    assert headings == [
        "Eval results",
        "Scores per scenario",
        "Recall latency",
        "Scores over runs",
    ]
    table = found.children[1]
    assert table.tag == "table"
    assert rows(table)[1:] == [
        ["plan-pickup", "on", "0.00 (0/2)", "0.75 (3/4)", "1.00 (2/2)", "1.00 (1/1)",
         "600 (1200 tok, 2 proven)", "evals/plan-pickup.yaml"],
        ["plan-pickup", "off", "0.50 (1/2)", "0.00 (0/4)", "–", "0.00 (0/1)",
         "– (300 tok, 0 proven)", "evals/plan-pickup.yaml"],
    ]  # fmt: skip
    figures = {figure.attrs["id"] for figure in found.find_all("figure")}
    assert figures == {
        "chart-eval-rate-reaskrate",
        "chart-eval-rate-requirementretention",
        "chart-eval-rate-proofhonesty",
        "chart-eval-rate-pickupsuccess",
        "chart-eval-recall-latency",
        "chart-eval-runs-off",
        "chart-eval-runs-on",
    }
    # Proof honesty has no value with memory off: one bar only.
    [honesty] = [f for f in found.find_all("figure") if f.attrs["id"].endswith("proofhonesty")]
    bars = [rect for rect in honesty.find_all("rect") if rect.find_all("title")]
    assert [bar.find_all("title")[0].all_text() for bar in bars] == ["plan-pickup: memory on: 1.00"]
    assert rows(honesty.find_all("table")[0])[1:] == [["plan-pickup", "–", "1.00"]]
    labelled = found.find_all("title") + found.find_all("desc")
    ids = [el.attrs["id"] for el in labelled if "id" in el.attrs]
    assert len(ids) == 2 * 7
    assert len(ids) == len(set(ids))  # every chart's ids are its own


def test_latency_summary_is_nearest_rank() -> None:
    found = section(eval_section_html([], recall_ms=[3.0, 1.0, 2.0, 10.0]))
    notes = [p.all_text() for p in found.find_all("p")]
    assert "4 recalls: median 2.000 ms, p95 10.000 ms, max 10.000 ms." in notes
    assert percentile([5.0], 0.95) == 5.0 and percentile([1.0, 2.0], 0.5) == 1.0
    empty = section(eval_section_html([], recall_ms=[]))
    assert "No recall was timed in this run." in [p.all_text() for p in empty.find_all("p")]


def test_scores_over_runs_plot_only_runs_of_the_same_scenarios() -> None:
    first = history_record(mode_results(reasked=2), T0)
    other = history_record(mode_results("returning-customer"), T0 + timedelta(hours=1))
    last = history_record(mode_results(reasked=1), T0 + timedelta(hours=2))
    found = section(eval_section_html(last["results"], history=[first, other, last]))
    assert "2 recorded run(s) of these scenarios" in found.all_text()
    [on] = [f for f in found.find_all("figure") if f.attrs["id"] == "chart-eval-runs-on"]
    table = rows(on.find_all("table")[0])
    assert table[0] == ["run", "pick-up", "proof honesty", "re-ask", "retention"]
    assert table[1:] == [
        ["2026-11-30 09:00", "1.00", "1.00", "1.00", "0.75"],
        ["2026-11-30 11:00", "1.00", "1.00", "0.50", "0.75"],
    ]


def test_hostile_names_and_malformed_history_render_as_inert_text() -> None:
    results = as_json(mode_results())
    for attack in MARKUP_ATTACKS:
        results.append({"scenario": attack, "memory": attack, "graders": {"reAskRate": attack}})
    broken: list[dict[str, Any]] = [
        {"at": MARKUP_ATTACKS[0], "results": results},
        {"at": 5, "results": [{"graders": {"reAskRate": {"value": "x", "reasked": -1}}}]},
        {"results": "not a list"},
    ]
    markup = eval_section_html(
        results,
        history=broken,
        recall_ms=[1.0, float("nan"), -3.0, 1e300, "7"],  # type: ignore[list-item]
        id_prefix='x" onload="alert(1)',
    )
    found = section(markup)
    shown = found.all_text()
    for attack in MARKUP_ATTACKS:
        assert shown_as(attack) in shown
    assert "1 recalls: median 1.000 ms" in shown  # the values that are not timings are left out
    assert found.attrs["id"] == "x-onload-alert-1"


def test_memory_growth_counts_facts_per_day_with_empty_days() -> None:
    created = [T0, T0 + timedelta(hours=5), T0 + timedelta(days=2), T0.replace(tzinfo=None)]
    assert facts_per_period(created) == [("2026-11-30", 3), ("2026-12-01", 0), ("2026-12-02", 1)]
    found = section(eval_section_html([], fact_created=created))
    assert "4 facts written" in found.all_text()
    [bars] = [f for f in found.find_all("figure") if f.attrs["id"].endswith("growth-per-period")]
    assert [float(r.attrs["height"]) > 0 for r in bars.find_all("rect")] == [True, False, True]
    [total] = [f for f in found.find_all("figure") if f.attrs["id"].endswith("growth-total")]
    assert rows(total.find_all("table")[0])[1:] == [
        ["2026-11-30", "3"],
        ["2026-12-01", "3"],
        ["2026-12-02", "4"],
    ]
    # Without a store there is no growth part; with an empty one, a chart that says so.
    assert "Memory growth" not in section(eval_section_html([])).all_text()
    assert "no data yet" in section(eval_section_html([], fact_created=[])).all_text()


def test_long_spans_count_per_week_then_per_month() -> None:
    weekly = facts_per_period([T0, T0 + timedelta(days=100)])
    assert weekly[0] == ("week of 2026-11-30", 1) and weekly[-1] == ("week of 2027-03-08", 1)
    assert len(weekly) == 15 and sum(count for _, count in weekly) == 2
    monthly = facts_per_period([T0, T0 + timedelta(days=800)])
    assert monthly[0] == ("2026-11", 1) and monthly[-1] == ("2029-02", 1)
    assert len(monthly) == 28


def dream_outcome(ran_at: datetime, live: int, *, errors: tuple[str, ...] = ()) -> DreamOutcome:
    window = window_of("support-bot", ran_at, 86_400)
    return DreamOutcome(
        status="partial" if errors else "ok",
        spec="support-bot",
        window_key=window.key,
        window_start=window.start.isoformat(),
        ran_at=ran_at.isoformat(),
        mode="deterministic",
        facts=FactCounts(swept=2, duplicate_groups=1, superseded=3, live=live),
        continuity=ContinuityCounts(proofs_checked=4, steps_demoted=1),
        model=ModelPhase(ran=False, reason="mode is deterministic"),
        errors=errors,
    )


def dream_state(outcome: DreamOutcome, stale: tuple[str, ...] = ()) -> dict[str, Any]:
    ran_at = datetime.fromisoformat(outcome.ran_at)
    return state_record(
        spec="support-bot",
        window=window_of("support-bot", ran_at, 86_400),
        every_s=86_400,
        ran_at=ran_at,
        outcome=outcome.to_data(),
        phase1_counts=outcome.counts(),
        stale_facts=stale,
        stale_articles=(),
    )


def test_the_dream_section_shows_the_last_run_and_the_runs_before() -> None:
    outcomes = [dream_outcome(T0 + timedelta(days=day), 40 + day) for day in range(3)]
    state = dream_state(outcomes[-1], stale=("mem_1", "mem_2"))
    found = section(dream_section_html(state, runs=[o.to_data() for o in outcomes]))
    assert found.attrs["id"] == "dream"
    tables = found.find_all("table")
    assert rows(tables[0])[1:4] == [
        ["status", "ok"],
        ["last run", "2026-12-02T09:00:00.000Z"],
        ["window", "dream:support-bot:20789"],
    ]
    counts = rows(tables[1])
    assert ["facts.swept", "2"] in counts and ["continuity.steps_demoted", "1"] in counts
    assert ["facts.live", "42"] in counts
    assert "Stale facts:" in found.all_text() and "mem_2" in found.all_text()
    [live] = [f for f in found.find_all("figure") if f.attrs["id"] == "chart-dream-runs-live"]
    assert [row[1] for row in rows(live.find_all("table")[0])[1:]] == ["40", "41", "42"]
    assert {f.attrs["id"] for f in found.find_all("figure")} == {
        "chart-dream-last-counts",
        "chart-dream-runs-live",
        "chart-dream-runs-changes",
    }


def test_a_dream_never_run_and_a_hostile_state_file() -> None:
    assert "No dream run recorded yet." in section(dream_section_html(None)).all_text()
    outcome = dream_outcome(T0, 3, errors=MARKUP_ATTACKS)
    state = dream_state(outcome, stale=MARKUP_ATTACKS)
    state["status"] = MARKUP_ATTACKS[1]
    state["lastOutcome"]["facts"]["swept"] = -4  # a count that cannot be: left out
    state["lastOutcome"]["wiki"] = {MARKUP_ATTACKS[0]: "x"}
    state["everyS"] = "daily"
    found = section(dream_section_html(state, runs=[state["lastOutcome"], {"facts": 7}]))
    shown = found.all_text()
    for attack in MARKUP_ATTACKS:
        assert shown_as(attack) in shown
    [last] = [f for f in found.find_all("figure") if f.attrs["id"] == "chart-dream-last-counts"]
    assert "facts.swept" not in last.all_text() and "facts.superseded" in last.all_text()


def test_the_page_is_self_contained_with_a_strict_policy() -> None:
    sections = [eval_section_html(as_json(mode_results())), dream_section_html(None)]
    page = report_page_html(MARKUP_ATTACKS[0], sections, note=MARKUP_ATTACKS[1])
    tree = assert_inert(page)
    assert tree.doctype == "DOCTYPE html"
    [meta] = [m for m in tree.root.find_all("meta") if "http-equiv" in m.attrs]
    assert meta.attrs == {"http-equiv": "Content-Security-Policy", "content": CSP}
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    [head] = tree.root.find_all("head")
    assert head.find_all("title")[0].all_text() == MARKUP_ATTACKS[0]
    assert [s.attrs["id"] for s in tree.root.find_all("section")] == ["eval", "dream"]
    assert page == report_page_html(MARKUP_ATTACKS[0], sections, note=MARKUP_ATTACKS[1])


def test_the_totals_close_the_scores_table_but_are_not_plotted() -> None:
    record = history_record([*mode_results(), *mode_results("returning-customer")], T0)
    found = section(eval_section_html(record["results"], totals=record["totals"]))
    table = rows(found.find_all("table")[0])
    assert [row[:2] for row in table[-2:]] == [["(all)", "on"], ["(all)", "off"]]
    assert table[-2][2] == "0.00 (0/4)" and table[-1][3] == "0.00 (0/8)"
    [reask] = [f for f in found.find_all("figure") if f.attrs["id"].endswith("reaskrate")]
    assert [row[0] for row in rows(reask.find_all("table")[0])[1:]] == [
        "plan-pickup",
        "returning-customer",
    ]


def test_dream_runs_read_from_dream_run_events_plot_the_same() -> None:
    outcomes = [dream_outcome(T0 + timedelta(days=day), 40 + day) for day in range(2)]
    as_events = [
        {"at": o.ran_at, "spec": o.spec, "status": o.status, "counts": o.counts()} for o in outcomes
    ]
    from_events = section(dream_section_html(None, runs=as_events))
    from_outcomes = section(dream_section_html(None, runs=[o.to_data() for o in outcomes]))
    for found in (from_events, from_outcomes):
        [live] = [f for f in found.find_all("figure") if f.attrs["id"] == "chart-dream-runs-live"]
        assert rows(live.find_all("table")[0])[1:] == [
            ["2026-11-30 09:00", "40"],
            ["2026-12-01 09:00", "41"],
        ]

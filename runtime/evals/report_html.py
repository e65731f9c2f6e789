"""Eval and dream results as HTML sections with their plots, and the self-contained page
``codegen eval --html`` writes. The memory console renders the same sections.

Plain data in (what ``codegen eval --json`` prints, the records of the eval history, a dream
state file's object, dream outcomes, fact creation times), escaped HTML out: every text taken
from the data goes through ``charts.text``, so a hostile scenario name, history line or dream
state renders as inert text. Malformed parts of the data (a missing count, a string where a
number belongs) show as ``–`` rather than failing the page. No script, no external reference:
the page's Content-Security-Policy (``CSP``) allows inline styles and ``data:`` images only.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from specwire.runtime.evals.charts import (
    MAX_VALUE,
    Chart,
    bar_chart,
    chart_id,
    grouped_bar_chart,
    histogram,
    line_chart,
    table_html,
    text,
    value_label,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
REPORT_CSS = """
body{font-family:sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1rem}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}
caption{text-align:left;font-weight:bold;padding:.2rem 0}
figure.chart{margin:1rem 0}
figure.chart svg{max-width:100%;height:auto}
details summary{cursor:pointer;color:#555}
.note{color:#555}
"""
# (key in the JSON, label, hits key, total key): the four rates, in the table's order.
RATES = (
    ("reAskRate", "re-ask rate", "reasked", "questions"),
    ("requirementRetention", "requirement retention", "visible", "pairs"),
    ("proofHonesty", "proof honesty", "backed", "proven"),
    ("pickupSuccess", "pick-up", "pickedUp", "samples"),
)
SHORT = {
    "reAskRate": "re-ask",
    "requirementRetention": "retention",
    "proofHonesty": "proof honesty",
    "pickupSuccess": "pick-up",
}
NONE = "–"
MAX_LISTED = 20
# Day bars up to this many; beyond, weeks, then months.
MAX_PERIODS = 62
DREAM_GROUPS = ("facts", "wiki", "continuity")
# Counts of what there is rather than of what a run did: kept out of the "changed" bars.
LEVELS = frozenset({"facts.live", "wiki.articles"})


# -- reading plain data defensively ------------------------------------------------------------


def _get(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number >= 0 and number == int(number) else None


def _string(value: object) -> str:
    return value if isinstance(value, str) else NONE


def _moment(value: object) -> str:
    """An ISO time as a short label: ``2026-12-02 07:10``."""
    return _string(value)[:16].replace("T", " ")


def _records(data: object) -> list[Mapping[str, Any]]:
    if not isinstance(data, Sequence) or isinstance(data, str | bytes):
        return []
    return [item for item in data if isinstance(item, Mapping)]


def _heading(level: int, element_id: str, title: str) -> str:
    level = min(6, max(1, level))
    return f'<h{level} id="{element_id}">{text(title)}</h{level}>'


def _prefix(value: str) -> str:
    return chart_id(value).removeprefix("chart-")


# -- eval ---------------------------------------------------------------------------------------


def eval_section_html(
    results: Sequence[Mapping[str, Any]],
    *,
    totals: Sequence[Mapping[str, Any]] = (),
    history: Sequence[Mapping[str, Any]] = (),
    recall_ms: Sequence[float] = (),
    fact_created: Sequence[datetime] | None = None,
    heading_level: int = 2,
    id_prefix: str = "eval",
) -> str:
    """One ``<section>``: the scores table, a bar chart per rate (a group of bars per scenario,
    one per memory mode), the recall latency distribution, the scores over the recorded runs
    and, when ``fact_created`` is given, the memory's growth. Ids inside start with
    ``id_prefix`` (sanitized), so several sections can share a page.

    ``results``: the ``results`` list of ``codegen eval --json`` (a history record's too);
    ``totals``: its ``totals`` (the ``(all)`` rows, shown in the table only);
    ``history``: the eval history's records, oldest first (``runtime.evals.history``; runs of
    another set of scenarios than ``results`` are left out of the plot); ``recall_ms``: how long
    each recall took, in milliseconds (a record's ``recallMs``); ``fact_created``: the creation
    time of every fact of a store (aware datetimes; naive ones are taken as UTC).
    """
    prefix = _prefix(id_prefix)
    rows = _records(results)
    sub = heading_level + 1
    parts = [
        f'<section class="report-section" id="{prefix}" aria-labelledby="{prefix}-heading">',
        _heading(heading_level, f"{prefix}-heading", "Eval results"),
        _scores_table([*rows, *_records(totals)]),
        _heading(sub, f"{prefix}-per-scenario", "Scores per scenario"),
        *(chart.figure() for chart in _rate_charts(rows, prefix)),
        _heading(sub, f"{prefix}-latency", "Recall latency"),
        _latency(recall_ms, prefix),
        _heading(sub, f"{prefix}-runs", "Scores over runs"),
        *_over_runs(rows, _records(history), prefix),
    ]
    if fact_created is not None:
        parts += [
            _heading(sub, f"{prefix}-growth", "Memory growth"),
            *_growth(fact_created, prefix),
        ]
    parts.append("</section>")
    return "".join(parts)


def _rate_cell(result: Mapping[str, Any], key: str, hits: str, total: str) -> str:
    grader = _get(result, "graders", key)
    value = _number(_get(grader, "value"))
    shown = NONE if value is None else value_label(value)
    got, out_of = _count(_get(grader, hits)), _count(_get(grader, total))
    if got is None or not out_of:
        return shown
    return f"{shown} ({got}/{out_of})"


def _cost_cell(result: Mapping[str, Any]) -> str:
    cost = _get(result, "graders", "costPerProvenOutcome")
    value, tokens = _number(_get(cost, "value")), _count(_get(cost, "tokens"))
    proven = _count(_get(cost, "provenSteps"))
    shown = NONE if value is None else value_label(value, 0)
    return f"{shown} ({NONE if tokens is None else tokens} tok, {proven or 0} proven)"


def _scores_table(results: Sequence[Mapping[str, Any]]) -> str:
    header = [
        "scenario",
        "memory",
        *(label for _, label, _, _ in RATES),
        "tokens/proven",
        "file",
    ]
    rows = [
        [
            _string(result.get("scenario")),
            _string(result.get("memory")),
            *(_rate_cell(result, key, hits, total) for key, _, hits, total in RATES),
            _cost_cell(result),
            _string(result.get("file")),
        ]
        for result in results
    ]
    return table_html("Scores per scenario and memory mode", header, rows)


def _rate_charts(results: Sequence[Mapping[str, Any]], prefix: str) -> list[Chart]:
    scenarios = list(dict.fromkeys(_string(result.get("scenario")) for result in results))
    charts: list[Chart] = []
    for key, label, _, _ in RATES:
        values: dict[str, dict[str, float | None]] = {name: {} for name in scenarios}
        for result in results:
            value = _number(_get(result, "graders", key, "value"))
            series = f"memory {_string(result.get('memory'))}"
            values[_string(result.get("scenario"))][series] = (
                value if value is not None and 0 <= value <= 1 else None
            )
        if all(value is None for row in values.values() for value in row.values()):
            continue
        charts.append(
            grouped_bar_chart(
                label.capitalize(),
                list(values.items()),
                x_title="scenario",
                y_title=label,
                y_range=(0.0, 1.0),
                element_id=chart_id(f"{prefix}-rate-{key}"),
            )
        )
    if not charts:
        return [bar_chart("Scores", [], element_id=chart_id(f"{prefix}-rates"))]
    return charts


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile of ``values`` (not empty), ``share`` in (0, 1]."""
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def _latency(recall_ms: Sequence[float], prefix: str) -> str:
    values = [
        v for v in (_number(item) for item in recall_ms) if v is not None and 0 <= v <= MAX_VALUE
    ]
    chart = histogram(
        "Recall latency",
        values,
        unit="ms",
        x_title="milliseconds",
        element_id=chart_id(f"{prefix}-recall-latency"),
    )
    if not values:
        return '<p class="note">No recall was timed in this run.</p>' + chart.figure()
    summary = (
        f"{len(values)} recalls: median {value_label(percentile(values, 0.5), 3)} ms, "
        f"p95 {value_label(percentile(values, 0.95), 3)} ms, "
        f"max {value_label(max(values), 3)} ms."
    )
    return f'<p class="note">{text(summary)}</p>' + chart.figure()


def _scenario_set(results: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    return frozenset(
        (_string(result.get("scenario")), _string(result.get("memory"))) for result in results
    )


def _run_rates(results: Sequence[Mapping[str, Any]], memory: str) -> dict[str, float | None]:
    rates: dict[str, float | None] = {}
    for key, _, hits, total in RATES:
        got = out_of = 0
        for result in results:
            if result.get("memory") != memory:
                continue
            grader = _get(result, "graders", key)
            got += _count(_get(grader, hits)) or 0
            out_of += _count(_get(grader, total)) or 0
        rates[SHORT[key]] = got / out_of if out_of and got <= out_of else None
    return rates


def _over_runs(
    results: Sequence[Mapping[str, Any]], history: Sequence[Mapping[str, Any]], prefix: str
) -> list[str]:
    wanted = _scenario_set(results)
    runs = [
        (record, rows)
        for record in history
        if (rows := _records(record.get("results"))) and _scenario_set(rows) == wanted
    ]
    memories = sorted({memory for _, memory in wanted})
    note = (
        f"{len(runs)} recorded run(s) of these scenarios (every scenario's counts summed per "
        "memory mode)."
    )
    parts = [f'<p class="note">{text(note)}</p>']
    labels = {float(i): _moment(record.get("at")) for i, (record, _) in enumerate(runs, 1)}
    for memory in memories or [""]:
        series: dict[str, list[tuple[float, float | None]]] = {SHORT[k]: [] for k, *_ in RATES}
        for index, (_, rows) in enumerate(runs, 1):
            for name, rate in _run_rates(rows, memory).items():
                series[name].append((float(index), rate))
        chart = line_chart(
            f"Scores over runs, memory {memory}" if memory else "Scores over runs",
            series if runs else {},
            x_labels=labels,
            x_title="run",
            y_title="rate",
            y_range=(0.0, 1.0),
            element_id=chart_id(f"{prefix}-runs-{memory}"),
        )
        parts.append(chart.figure())
    return parts


def facts_per_period(created: Sequence[datetime]) -> list[tuple[str, int]]:
    """Facts written per day (UTC), from the first to the last (days without one count 0); per
    week (Mondays) or month when that would be more than ``MAX_PERIODS`` bars."""
    per_day: dict[int, int] = {}
    for moment in created:
        zone = moment.tzinfo
        # Stores hand out UTC times: their date is the UTC date, no conversion needed.
        day = moment.toordinal() if zone is None or zone is UTC else _utc_ordinal(moment)
        per_day[day] = per_day.get(day, 0) + 1
    if not per_day:
        return []
    days = {date.fromordinal(number): count for number, count in per_day.items()}
    first, last = min(days), max(days)
    if (last - first).days + 1 <= MAX_PERIODS:
        return _filled(days, lambda day: day, lambda day: day + timedelta(days=1), "%Y-%m-%d")
    if (last - first).days + 1 <= MAX_PERIODS * 7:
        return _filled(
            days,
            lambda day: day - timedelta(days=day.weekday()),
            lambda day: day + timedelta(days=7),
            "week of %Y-%m-%d",
        )
    return _filled(days, lambda day: day.replace(day=1), _next_month, "%Y-%m")


def _utc_ordinal(moment: datetime) -> int:
    return moment.astimezone(UTC).toordinal()


def _next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _filled(
    days: Mapping[date, int],
    start_of: Callable[[date], date],
    after: Callable[[date], date],
    label: str,
) -> list[tuple[str, int]]:
    counts: Counter[date] = Counter()
    for day, count in days.items():
        counts[start_of(day)] += count
    out: list[tuple[str, int]] = []
    period, last = start_of(min(days)), start_of(max(days))
    while period <= last:
        out.append((period.strftime(label), counts[period]))
        period = after(period)
    return out


def _growth(created: Sequence[datetime], prefix: str) -> list[str]:
    periods = facts_per_period([moment for moment in created if isinstance(moment, datetime)])
    total = sum(count for _, count in periods)
    note = f"{total} facts written (every fact the store holds, live or not), by creation time."
    bars = bar_chart(
        "Facts written per period",
        [(label, float(count)) for label, count in periods],
        x_title="period",
        y_title="facts",
        decimals=0,
        element_id=chart_id(f"{prefix}-growth-per-period"),
    )
    running = 0
    cumulative: list[tuple[float, float | None]] = []
    for index, (_, count) in enumerate(periods, 1):
        running += count
        cumulative.append((float(index), float(running)))
    line = line_chart(
        "Facts written, cumulative",
        {"facts": cumulative} if periods else {},
        x_labels={float(i): label for i, (label, _) in enumerate(periods, 1)},
        x_title="period",
        y_title="facts",
        decimals=0,
        element_id=chart_id(f"{prefix}-growth-total"),
    )
    return [f'<p class="note">{text(note)}</p>', bars.figure(), line.figure()]


# -- dream --------------------------------------------------------------------------------------


def dream_section_html(
    state: Mapping[str, Any] | None,
    *,
    runs: Sequence[Mapping[str, Any]] = (),
    heading_level: int = 2,
    id_prefix: str = "dream",
) -> str:
    """One ``<section>``: the last dream run (status, window, the model phase, each step's
    count as a table and a bar chart, errors, stale facts and articles) and, given ``runs``,
    live facts and each run's changes over the runs.

    ``state``: the object of a spec's dream state file (``codegen dream status --json``; None:
    no run recorded); ``runs``: dream runs oldest first, each either an outcome as the state's
    ``lastOutcome`` holds it (``DreamOutcome.to_data()``: counts per group, ``ran_at``) or a
    ``dream_run`` event's payload with the event's ``at`` added (flat ``counts``).
    """
    prefix = _prefix(id_prefix)
    parts = [
        f'<section class="report-section" id="{prefix}" aria-labelledby="{prefix}-heading">',
        _heading(heading_level, f"{prefix}-heading", "Dream"),
    ]
    if state is None or not isinstance(state, Mapping):
        parts.append('<p class="note">No dream run recorded yet.</p>')
    else:
        parts += _last_dream(state, prefix)
    records = _records(runs)
    if records:
        parts += [
            _heading(heading_level + 1, f"{prefix}-runs", "Over the runs"),
            *(chart.figure() for chart in _dream_runs(records, prefix)),
        ]
    parts.append("</section>")
    return "".join(parts)


def dream_counts(outcome: object) -> list[tuple[str, int]]:
    """An outcome's counts, flat (``facts.swept`` …), in its groups' order; malformed ones out.
    Reads a ``DreamOutcome.to_data()`` (counts per group) or a ``dream_run`` event's payload
    (``counts`` already flat)."""
    flat = _get(outcome, "counts")
    if isinstance(flat, Mapping):
        return [
            (key, count)
            for key, value in flat.items()
            if isinstance(key, str) and (count := _count(value)) is not None
        ]
    counts: list[tuple[str, int]] = []
    for group in DREAM_GROUPS:
        values = _get(outcome, group)
        if not isinstance(values, Mapping):
            continue
        for key in values:
            count = _count(values[key])
            if count is not None and isinstance(key, str):
                counts.append((f"{group}.{key}", count))
    return counts


def _last_dream(state: Mapping[str, Any], prefix: str) -> list[str]:
    outcome = state.get("lastOutcome")
    model = _get(outcome, "model")
    every = _count(state.get("everyS"))
    reason = _get(model, "reason")
    spent = _number(_get(model, "spent_usd"))
    facts = [
        ["status", _string(state.get("status"))],
        ["last run", _string(state.get("lastRunAt"))],
        ["window", _string(state.get("windowKey"))],
        ["every", NONE if every is None else f"{every} s"],
        ["mode", _string(_get(outcome, "mode"))],
        [
            "model phase",
            (reason if isinstance(reason, str) else "ran" if _get(model, "ran") is True else NONE)
            + ("" if not spent else f" (${value_label(spent, 4)} spent)"),
        ],
    ]
    counts = dream_counts(outcome)
    changed = [(name, float(n)) for name, n in counts if n and name not in LEVELS]
    parts = [
        table_html("Last dream run", ["", ""], facts),
        table_html("Each step's count", ["step", "count"], [[n, str(c)] for n, c in counts]),
    ]
    if changed:
        chart = bar_chart(
            "Last dream run: what each step changed",
            changed,
            x_title="step",
            y_title="count",
            decimals=0,
            element_id=chart_id(f"{prefix}-last-counts"),
            cut_labels=True,
        )
        parts.append(chart.figure())
    else:
        parts.append('<p class="note">Every step of the last run counted 0.</p>')
    errors = _get(outcome, "errors")
    if isinstance(errors, list) and errors:
        parts.append(_listing("Errors", [str(error) for error in errors]))
    for kind in ("facts", "articles"):
        stale = _get(state, "stale", kind)
        if isinstance(stale, list) and stale:
            parts.append(_listing(f"Stale {kind}", [str(item) for item in stale]))
    return parts


def _listing(title: str, items: Sequence[str]) -> str:
    shown = "".join(f"<li>{text(item)}</li>" for item in items[:MAX_LISTED])
    more = (
        f'<p class="note">and {len(items) - MAX_LISTED} more</p>' if len(items) > MAX_LISTED else ""
    )
    return f"<p>{text(title)}:</p><ul>{shown}</ul>{more}"


def _dream_runs(runs: Sequence[Mapping[str, Any]], prefix: str) -> list[Chart]:
    labels = {float(i): _moment(run.get("ran_at", run.get("at"))) for i, run in enumerate(runs, 1)}
    changes = ("facts.swept", "facts.superseded", "continuity.steps_demoted", "facts.stale")
    per_run = [dict(dream_counts(run)) for run in runs]
    live = {
        "live facts": [
            (float(i), None if (n := counts.get("facts.live")) is None else float(n))
            for i, counts in enumerate(per_run, 1)
        ]
    }
    moved = {
        name: [
            (float(i), None if (n := counts.get(name)) is None else float(n))
            for i, counts in enumerate(per_run, 1)
        ]
        for name in changes
    }
    return [
        line_chart(
            "Live facts after each dream run",
            live,
            x_labels=labels,
            x_title="run",
            y_title="facts",
            decimals=0,
            element_id=chart_id(f"{prefix}-runs-live"),
        ),
        line_chart(
            "What each dream run changed",
            moved,
            x_labels=labels,
            x_title="run",
            y_title="count",
            decimals=0,
            element_id=chart_id(f"{prefix}-runs-changes"),
        ),
    ]


# -- the page -----------------------------------------------------------------------------------


def report_page_html(title: str, sections: Sequence[str], *, note: str = "") -> str:
    """A self-contained HTML page around ``sections`` (already escaped HTML, from the functions
    above): inline CSS, no script, the strict ``CSP`` as a meta tag, no referrer."""
    lead = f'<p class="note">{text(note)}</p>' if note else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{REPORT_CSS}</style></head>"
        f"<body><main><h1>{text(title)}</h1>{lead}{''.join(sections)}</main></body></html>\n"
    )

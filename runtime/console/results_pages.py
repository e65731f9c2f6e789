"""Eval results and the dream's last run, with their plots: the sections ``codegen eval
--html`` writes (``runtime.evals.report_html``: escaped tables and SVG charts, no script).

The eval runs are read from the console's evals folder (``--evals``, default
``<state>/evals``): ``codegen eval --json`` outputs (``*.json``) and the eval history a
``codegen eval --html`` run appends (``*.history.jsonl``), oldest first. Memory growth is
drawn from the creation time of every fact (the file store only: other backends list no
times cheaply).
"""

from __future__ import annotations

from typing import Any

from specwire.runtime.console.html import Markup, tag
from specwire.runtime.console.view import View
from specwire.runtime.evals.report_html import dream_section_html, eval_section_html


def results(view: View) -> tuple[str, Markup]:
    runs = view.data.eval_runs(view.evals_dir)
    latest: dict[str, Any] = runs[-1][1] if runs else {}
    with view.data.facts() as facts:
        created = facts.store.created_times() if facts.store is not None else None
    recall_ms = latest.get("recallMs")
    evals = eval_section_html(
        latest.get("results") or [],
        totals=latest.get("totals") or [],
        history=[data for _, data in runs],
        recall_ms=recall_ms if isinstance(recall_ms, list) else [],
        fact_created=created,
        id_prefix="eval",
    )
    note = (
        None
        if runs
        else "no eval results: save `codegen eval --json` output as <state>/evals/<run>.json, "
        "or point --evals at a folder with a `codegen eval --html` history"
    )
    dream = dream_section_html(view.data.dream_state(), id_prefix="dream")
    body = [tag("p", note, class_="note"), Markup(evals), Markup(dream)]
    return "Evals & dream", Markup("".join(str(part) for part in body))

"""``report.md`` of a research run, assembled by the host from what it recorded.

Everything but the synthesis text comes from the sealed session logs and the plan file, never
from what a model says it did: the sources are the successful ``fetch`` calls, the facts are the
texts the run's Remember results (with their ids), Recall results and auto-recall gave the model,
the proven steps are the active plan's steps with their frozen proofs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from specwire.runtime.continuity.plans import Plan
from specwire.runtime.hosts.research_run import ResearchRun, SessionOutcome, first_line
from specwire.runtime.sessions.store import LogSource, events_of

FETCH = "fetch"
# "remembered (mem_…) [tags] (expires …): <text>" (tags and expiry optional).
_REMEMBERED = re.compile(
    r"^remembered \((mem_[0-9a-f]{16})\)(?: \[[^\]]*\])?(?: \(expires [^)]*\))?: (.+)$"
)
# One hit of a Recall result: "  • (0.87) <text> [tags] — source mem_… (scope …)".
_RECALLED = re.compile(
    r"^\s*• \((?:\d+\.\d+|<0\.01)\) (.+?)(?: — source mem_[0-9a-f]{16}(?: \([^()]*\))?)?$"
)
_FETCHED = re.compile(r"^fetched (\S+) \(HTTP (\d+)")


@dataclass(frozen=True)
class Source:
    url: str
    status: str
    session_id: str
    tool_use_id: str
    label: str


@dataclass(frozen=True)
class FactUse:
    text: str
    label: str  # the first session that used it ("branch 1/2", "synthesis")
    fact_id: str | None = None  # known when the run remembered it

    def line(self) -> str:
        how = f"remembered as `{self.fact_id}`" if self.fact_id else "recalled"
        return f"- {self.text} ({self.label}: {how})"


def collect(run: ResearchRun, sessions: LogSource) -> tuple[list[Source], list[FactUse]]:
    sources: list[Source] = []
    facts: dict[str, FactUse] = {}
    for outcome in run.sessions:
        uses: dict[str, dict[str, Any]] = {}
        for event in events_of(sessions, outcome.session_id):
            payload = event.payload
            if event.type == "tool_use":
                uses[str(payload.get("id"))] = payload
            elif event.type == "tool_result":
                _tool_result(outcome, payload, uses, sources, facts)
            elif event.type == "recall":
                for line in payload.get("lines") or []:
                    _note_fact(str(line), outcome.label, facts)
    return sources, sorted(facts.values(), key=lambda use: (use.text.casefold(), use.text))


def _tool_result(
    outcome: SessionOutcome,
    payload: dict[str, Any],
    uses: dict[str, dict[str, Any]],
    sources: list[Source],
    facts: dict[str, FactUse],
) -> None:
    text = str(payload.get("text") or "")
    name = payload.get("name")
    if payload.get("isError"):
        return
    if name == FETCH:
        found = _FETCHED.match(text)
        use = uses.get(str(payload.get("toolUseId")), {})
        url = found.group(1) if found else str((use.get("input") or {}).get("url", "?"))
        status = found.group(2) if found else "?"
        sources.append(
            Source(url, status, outcome.session_id, str(payload.get("toolUseId")), outcome.label)
        )
    elif name == "Remember":
        remembered = _REMEMBERED.match(text.strip())
        if remembered is not None:
            _note_fact(remembered.group(2), outcome.label, facts, remembered.group(1))
    elif name == "Recall":
        for line in text.splitlines()[1:]:
            hit = _RECALLED.match(line)
            if hit is not None:
                _note_fact(hit.group(1), outcome.label, facts)


def _note_fact(
    text: str, label: str, facts: dict[str, FactUse], fact_id: str | None = None
) -> None:
    """Record a fact the run used, once per text (the first use's label; an id when known)."""
    shown = " ".join(text.split())
    if not shown:
        return
    key = shown.casefold()
    known = facts.get(key)
    if known is None:
        facts[key] = FactUse(shown, label, fact_id)
    elif known.fact_id is None and fact_id is not None:
        facts[key] = FactUse(known.text, known.label, fact_id)


def render(
    run: ResearchRun,
    sessions: LogSource,
    plan: Plan | None,
    *,
    now: datetime | None = None,
) -> str:
    sources, facts = collect(run, sessions)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds").replace("+00:00", "Z")
    status = "complete" if run.complete else "partial"
    lines = [
        f"# Research report: {first_line(run.goal) or '(no goal)'}",
        "",
        f"- status: **{status}**{_why_partial(run)}",
        f"- run: `{run.run_id}` · {len(run.branches)} branch(es) · deadline "
        f"{run.max_duration_ms} ms · written {stamp}",
        "",
        "## Synthesis",
        "",
    ]
    synthesis = run.synthesis
    if synthesis is None:
        lines.append("(not written: the deadline passed before the synthesis could start)")
    else:
        lines.append(synthesis.reply.strip() or f"(no answer: {synthesis.stop_reason})")
        lines.append("")
        lines.append(f"Session `{synthesis.session_id}` · {synthesis.stop_reason}")
    lines += ["", "## Branches", ""]
    for branch in run.branches:
        lines += [
            f"### {branch.label.capitalize()}: {first_line(branch.task)}",
            "",
            f"- session `{branch.session_id}` · {branch.stop_reason}"
            + (f" ({branch.error})" if branch.error else ""),
            "",
            branch.reply.strip() or "(no findings)",
            "",
        ]
    lines += ["## Sources fetched", ""]
    lines += [
        f"- {source.url} (HTTP {source.status}; {source.label}, tool use "
        f"`{source.tool_use_id}` in `{source.session_id}`)"
        for source in sources
    ] or ["(none)"]
    lines += ["", "## Facts used", ""]
    lines += [use.line() for use in facts] or ["(none)"]
    lines += ["", "## Proven plan steps", ""]
    lines += _proven_steps(plan) or ["(none)"]
    return "\n".join(lines).rstrip() + "\n"


def _why_partial(run: ResearchRun) -> str:
    if run.complete:
        return ""
    unfinished = [b.label for b in run.branches if b.stop_reason != "complete"]
    reasons = []
    if unfinished:
        reasons.append("unfinished: " + ", ".join(unfinished))
    if run.synthesis is None:
        reasons.append("no synthesis")
    elif run.synthesis.stop_reason != "complete":
        reasons.append(f"synthesis {run.synthesis.stop_reason}")
    return f" ({'; '.join(reasons)})" if reasons else ""


def _proven_steps(plan: Plan | None) -> list[str]:
    if plan is None:
        return []
    lines: list[str] = []
    for number, step in enumerate(plan.steps, start=1):
        if step.status != "proven":
            continue
        proofs = plan.proofs.get(number, ())
        cited = "; ".join(
            f"{proof.tool_name or 'tool'} `{proof.tool_use_id}` in `{proof.session_id}`"
            for proof in proofs
        )
        lines.append(f"- {plan.id} step {number}: {step.text} — proven by {cited or '(no proof)'}")
    return lines

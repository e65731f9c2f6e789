"""``DreamOutcome``: what one dream run did, step by step, as counts.

Also the shape of ``lastOutcome`` in the state file and of the ``dream_run`` event payload
(``to_data``), so the three never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# ok: every step ran; partial: a step failed (named in ``errors``; the next run in the same
# window retries); skipped: a run already completed in this window, nothing was done.
RunStatus = Literal["ok", "partial", "skipped"]


@dataclass(frozen=True)
class FactCounts:
    swept: int = 0  # expired facts tombstoned
    duplicate_groups: int = 0  # groups of near-duplicates folded into one fact
    superseded: int = 0  # duplicates superseded by their group's survivor
    merged: int = 0  # groups whose survivor was replaced by one carrying the group's tags/evidence
    compacted_frames: int = 0  # WAL frames checkpointed by the compaction
    stale: int = 0  # live facts older than the staleness age
    live: int = 0  # live facts after the run


@dataclass(frozen=True)
class WikiCounts:
    articles: int = 0
    stale: int = 0  # articles not updated within the staleness age
    damaged: int = 0  # article files that could not be read (reported, never touched)


@dataclass(frozen=True)
class ContinuityCounts:
    proofs_checked: int = 0  # frozen proofs of proven steps checked against the session logs
    steps_demoted: int = 0  # proven steps whose evidence no longer verifies (back to claimed)
    proofs_unverifiable: int = 0  # proofs whose session log is gone (kept: the frozen record)
    sessions_pinned: int = 0  # cited session logs newly pinned in retention.json
    handoffs_refreshed: int = 0  # handoff notes re-rendered (next actions) from the plans
    trash_purged: int = 0  # trash snapshots whose files for this spec were deleted


@dataclass(frozen=True)
class ModelPhase:
    ran: bool = False
    reason: str | None = None  # why it did not run (refused, not wired), or why it stopped
    spent_usd: float = 0.0
    # What the session used, as the model reported it (tokens summed over its calls).
    model: str | None = None
    budget_usd: float | None = None
    calls: int = 0
    input_tokens: int = 0  # every prompt token, cached ones included
    output_tokens: int = 0
    cached_tokens: int = 0
    unmetered_calls: int = 0  # calls whose model reported no usage (each spent the whole budget)


class ModelPhaseFailed(Exception):
    """A model phase that failed after its session began (a provider error on a later call):
    ``phase`` is what it used until then, calls, tokens and cost the provider bills, so the
    run's record and the state's ``modelLedger`` keep them."""

    def __init__(self, message: str, phase: ModelPhase) -> None:
        super().__init__(message)
        self.phase = phase


@dataclass(frozen=True)
class DreamOutcome:
    status: RunStatus
    spec: str
    window_key: str
    window_start: str
    ran_at: str
    mode: str
    facts: FactCounts = field(default_factory=FactCounts)
    wiki: WikiCounts = field(default_factory=WikiCounts)
    continuity: ContinuityCounts = field(default_factory=ContinuityCounts)
    model: ModelPhase = field(default_factory=ModelPhase)
    errors: tuple[str, ...] = ()
    note: str | None = None  # for a skipped run: which run of the window it deferred to

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)
        data["errors"] = list(self.errors)
        return data

    def counts(self) -> dict[str, int]:
        """Every count, flat (``facts.swept`` …), in a stable order: the table the CLI prints
        and the ``dream_run`` event's counts."""
        out: dict[str, int] = {}
        for group, counts in (
            ("facts", self.facts),
            ("wiki", self.wiki),
            ("continuity", self.continuity),
        ):
            for key, value in asdict(counts).items():
                out[f"{group}.{key}"] = int(value)
        return out


def model_phase_line(model: Mapping[str, Any]) -> str:
    """A model phase (``ModelPhase`` as data, as the state file holds it) in one line: why it
    did not run, or ``ran — 3 call(s), 1200 input (0 cached) / 80 output tokens, $0.004800 of
    $0.005``."""
    if not model.get("ran"):
        return str(model.get("reason") or "not run")
    head = "ran" + (f" ({model['reason']})" if model.get("reason") else "")
    budget = model.get("budget_usd")
    of = f" of ${budget:g}" if isinstance(budget, int | float) else ""
    spent = model.get("spent_usd")
    cost = float(spent) if isinstance(spent, int | float) else 0.0
    return (
        f"{head} — {model.get('calls', 0)} call(s), {model.get('input_tokens', 0)} input "
        f"({model.get('cached_tokens', 0)} cached) / {model.get('output_tokens', 0)} output "
        f"tokens, ${cost:.6f}{of}"
    )


def model_ledger_line(ledger: Mapping[str, Any]) -> str:
    """A state file's ``modelLedger`` in one line: ``3 run(s) since …: 7 call(s), 21000 input
    (0 cached) / 90 output tokens, $0.064000``."""
    spent = ledger.get("spentUsd")
    cost = float(spent) if isinstance(spent, int | float) else 0.0
    return (
        f"{ledger.get('runs', 0)} run(s) since {ledger.get('since')}: {ledger.get('calls', 0)} "
        f"call(s), {ledger.get('inputTokens', 0)} input ({ledger.get('cachedTokens', 0)} "
        f"cached) / {ledger.get('outputTokens', 0)} output tokens, ${cost:.6f}"
    )

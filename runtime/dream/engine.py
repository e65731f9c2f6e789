"""``run_dream``: one dream run over a spec's stores, idempotent per window.

The deterministic phase, in order (each step's counts land in ``DreamOutcome``; a step that
fails is named in ``errors`` and the others still run):

1. facts (``fact_steps``): TTL sweep, near-duplicates folded into a survivor, compaction,
   staleness;
2. wiki (``wiki_steps``): staleness;
3. continuity, per scope folder of the spec (``proof_steps``, ``handoff_refresh``): proofs
   re-checked (a step whose evidence no longer verifies is demoted), the sessions standing
   proofs cite pinned, the handoff's next actions refreshed;
4. trash: this spec's files in snapshots older than the retention are deleted.

Then the model phase (``model_phase``: refused unless ``mode: full`` with a budget and a priced
model; ``price_of`` defaults to the list-price table), at most once per window (``ModelClaim``:
a retried run of the window, or one after a host was stopped mid-session, does not spend the
budget again). The run is recorded in the state file
and announced as a ``dream_run`` event; a run in a window that already holds a completed run
does nothing and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment import ProofMode
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import EventSink
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.dream.fact_steps import DreamFacts, FactSteps, run_fact_steps
from specwire.runtime.dream.handoff_refresh import refresh_handoff
from specwire.runtime.dream.model_phase import (
    ModelSession,
    PriceLookup,
    list_prices,
    model_phase,
)
from specwire.runtime.dream.outcome import (
    ContinuityCounts,
    DreamOutcome,
    FactCounts,
    ModelPhase,
    ModelPhaseFailed,
    WikiCounts,
)
from specwire.runtime.dream.proof_steps import refresh_pins, revalidate_proofs
from specwire.runtime.dream.settings import DreamSettings
from specwire.runtime.dream.state import (
    MODEL_WINDOW,
    Window,
    completed_in,
    make_dream_dir,
    model_ledger,
    read_state,
    run_lock,
    state_record,
    window_of,
    write_state,
)
from specwire.runtime.dream.wiki_steps import WikiSteps, run_wiki_steps
from specwire.runtime.facts.providers.local_admin import LocalFactAdmin
from specwire.runtime.facts.store import FactStore
from specwire.runtime.wiki.store import WikiStore

EVENT = "dream_run"
_FAILURES = (StoreError, MemoryServiceError, OSError, ValueError)
# Opens the backend the fact steps run on (default: the spec's file store).
FactsOpener = Callable[[], AbstractContextManager[DreamFacts]]


def _drop(line: str) -> None:
    return None


def run_dream(
    layout: StoreLayout,
    settings: DreamSettings,
    *,
    now: Clock = utc_now,
    log: Callable[[str], None] = _drop,
    emit: EventSink | None = None,
    proof_mode: ProofMode = "ladder",
    model_id: str | None = None,
    price_of: PriceLookup = list_prices,
    force: bool = False,
    model_session: ModelSession | None = None,
    facts: FactsOpener | None = None,
    volume: DocumentVolume | None = None,
) -> DreamOutcome:
    """Run the dream phases over ``layout``'s stores unless this window already had a run.

    ``force`` runs even then. ``model_session`` is the bounded session of ``mode: full``
    (``runtime.hosts.dream_session.memory_session``), run only when the phase is allowed.
    ``facts`` opens the fact backend (default: ``layout``'s file store). ``volume``: where
    continuity, the wiki and the dream state live (None: files under ``layout``'s root).
    Raises ``StoreError`` only when the run cannot start (another run holds the lock, the
    state file is damaged); a failing step is reported in the outcome.
    """
    started = now()
    window = window_of(layout.spec_name, started, settings.every_s)
    if volume is None or volume.on_files:
        volume = None
        make_dream_dir(layout)
    with run_lock(layout, now, volume):
        previous = read_state(layout, volume)
        if completed_in(previous, window) and not force:
            assert previous is not None
            note = f"already ran in this window (at {previous.get('lastRunAt')}); nothing done"
            log(f"[dream] {layout.spec_name}: {note}\n")
            return _skipped(layout, settings, window, iso(started), note)
        claim = ModelClaim(layout, previous, window, volume, force)
        outcome, stale_facts, stale_articles = _run(
            layout,
            settings,
            window,
            now,
            log,
            proof_mode,
            model_id,
            price_of,
            model_session,
            facts or _file_store(layout, now),
            volume,
            claim,
        )
        data = outcome.to_data()
        record = state_record(
            spec=layout.spec_name,
            window=window,
            every_s=settings.every_s,
            ran_at=started,
            outcome=data,
            phase1_counts=outcome.counts(),
            stale_facts=stale_facts,
            stale_articles=stale_articles,
            ledger=model_ledger(previous, data["model"], started),
            model_window=claim.window_key,
        )
        write_state(layout, record, volume)
    if emit is not None:
        emit(EVENT, _event_payload(outcome))
    return outcome


def _run(
    layout: StoreLayout,
    settings: DreamSettings,
    window: Window,
    now: Clock,
    log: Callable[[str], None],
    proof_mode: ProofMode,
    model_id: str | None,
    price_of: PriceLookup,
    model_session: ModelSession | None,
    open_facts: FactsOpener,
    volume: DocumentVolume | None,
    claim: ModelClaim,
) -> tuple[DreamOutcome, tuple[str, ...], tuple[str, ...]]:
    errors: list[str] = []
    moment = now()

    facts = FactSteps(FactCounts(), ())
    try:
        with open_facts() as store:
            facts = run_fact_steps(store, settings, moment)
    except _FAILURES as exc:
        errors.append(f"facts: {exc}")

    wiki = WikiSteps(WikiCounts(), ())
    try:
        if _is_dir(volume, layout.wiki_dir):
            days = settings.article_stale_after_days
            wiki = run_wiki_steps(WikiStore(layout, now=now, volume=volume), moment, days)
    except _FAILURES as exc:
        errors.append(f"wiki: {exc}")

    continuity = ContinuityCounts()
    try:
        continuity = _continuity(layout, settings, now, log, proof_mode, volume)
    except _FAILURES as exc:
        errors.append(f"continuity: {exc}")

    model = ModelPhase()
    try:
        if claim.taken:
            model = ModelPhase(ran=False, reason=ALREADY_STARTED)
        else:
            model = model_phase(settings, model_id, price_of, model_session, claim.claim)
    except ModelPhaseFailed as exc:  # failed mid-session: what it spent is kept
        errors.append(f"model phase: {exc}")
        model = exc.phase
    except Exception as exc:  # a model or provider failure must not lose the phase's record
        errors.append(f"model phase: {exc}")
        model = ModelPhase(ran=False, reason=f"failed: {exc}")
    outcome = DreamOutcome(
        status="partial" if errors else "ok",
        spec=layout.spec_name,
        window_key=window.key,
        window_start=iso(window.start),
        ran_at=iso(moment),
        mode=settings.mode,
        facts=facts.counts,
        wiki=wiki.counts,
        continuity=continuity,
        model=model,
        errors=tuple(errors),
    )
    for error in errors:
        log(f"[dream] {layout.spec_name}: {error}\n")
    return outcome, facts.stale_ids, wiki.stale_slugs


ALREADY_STARTED = (
    "not run: this window's model phase already started (at most one per window; "
    "a forced run runs it again)"
)


@dataclass
class ModelClaim:
    """At most one model phase per window: ``taken`` when an earlier run of this window started
    one (``state.MODEL_WINDOW``; ``force`` ignores it), ``claim`` records that this run starts
    one, before its session runs."""

    layout: StoreLayout
    previous: dict[str, Any] | None
    window: Window
    volume: DocumentVolume | None
    force: bool
    claimed: bool = False

    @property
    def taken(self) -> bool:
        previous = self.previous
        return (
            not self.force
            and previous is not None
            and previous.get(MODEL_WINDOW) == self.window.key
        )

    def claim(self) -> None:
        record = dict(self.previous) if self.previous is not None else {}
        record.setdefault("spec", self.layout.spec_name)
        record[MODEL_WINDOW] = self.window.key
        write_state(self.layout, record, self.volume)
        self.claimed = True

    @property
    def window_key(self) -> str | None:
        """What the run's record keeps: this window's key once its model phase started."""
        return self.window.key if self.claimed or self.taken else None


def _file_store(layout: StoreLayout, now: Clock) -> FactsOpener:
    @contextmanager
    def opened() -> Iterator[DreamFacts]:
        with FactStore.open(layout.facts_db, now=now) as store:
            yield LocalFactAdmin(store)

    return opened


def _is_dir(volume: DocumentVolume | None, path: Path) -> bool:
    return volume.is_dir(path) if volume is not None else path.is_dir()


def _scope_dirs(layout: StoreLayout, volume: DocumentVolume | None) -> Iterator[Path]:
    """The spec's continuity folder, then each session-scoped folder under it."""
    state = layout.state_dir
    if volume is not None:
        if volume.is_dir(state):
            yield state
            sessions = state / "sessions"
            yield from (sessions / n for n in volume.names(sessions) if volume.is_dir(sessions / n))
        return
    if not state.is_dir():
        return
    yield state
    sessions = state / "sessions"
    if sessions.is_dir() and not sessions.is_symlink():
        for entry in sorted(sessions.iterdir(), key=lambda p: p.name):
            if entry.is_dir() and not entry.is_symlink():
                yield entry


def _continuity(
    layout: StoreLayout,
    settings: DreamSettings,
    now: Clock,
    log: Callable[[str], None],
    proof_mode: ProofMode,
    volume: DocumentVolume | None,
) -> ContinuityCounts:
    counts = ContinuityCounts()
    spec_store: ContinuityStore | None = None
    for scope in _scope_dirs(layout, volume):
        store = ContinuityStore(
            layout, scope_dir=scope, proof_mode=proof_mode, now=now, log=log, volume=volume
        )
        spec_store = spec_store or store
        tally = revalidate_proofs(store, now())
        pinned = refresh_pins(store, tally.standing_sessions, now, log)
        refreshed = refresh_handoff(store)
        counts = replace(
            counts,
            proofs_checked=counts.proofs_checked + tally.checked,
            steps_demoted=counts.steps_demoted + tally.demoted,
            proofs_unverifiable=counts.proofs_unverifiable + tally.unverifiable,
            sessions_pinned=counts.sessions_pinned + pinned,
            handoffs_refreshed=counts.handoffs_refreshed + int(refreshed),
        )
    if _is_dir(volume, layout.trash_dir):
        store = spec_store or ContinuityStore(
            layout, proof_mode=proof_mode, now=now, log=log, volume=volume
        )
        cutoff = now() - timedelta(days=settings.trash_retention_days)
        counts = replace(counts, trash_purged=len(store.purge_trash(cutoff)))
    return counts


def _skipped(
    layout: StoreLayout, settings: DreamSettings, window: Window, at: str, note: str
) -> DreamOutcome:
    return DreamOutcome(
        status="skipped",
        spec=layout.spec_name,
        window_key=window.key,
        window_start=iso(window.start),
        ran_at=at,
        mode=settings.mode,
        note=note,
    )


def _event_payload(outcome: DreamOutcome) -> dict[str, object]:
    return {
        "spec": outcome.spec,
        "window": outcome.window_key,
        "status": outcome.status,
        "counts": outcome.counts(),
        "modelPhase": {"ran": outcome.model.ran, "reason": outcome.model.reason},
        "errors": list(outcome.errors),
    }

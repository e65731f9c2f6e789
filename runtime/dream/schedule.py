"""The spec's dream (``memory.dream``) run by a serving host, off the turn path.

``wire_memory`` puts a ``DreamJob``'s ``start_if_due`` on the memory seam (``MemorySeam.dream``);
a per-turn host (channel, managed: ``runtime.hosts.turns.run_turn``) calls it after each turn
with the model's id. When the window (``every``) has no run yet from this process, it starts
``run_dream`` in a background thread and returns at once; a second call in the same window, or
while that run goes on, does nothing. ``run_dream`` itself is idempotent per window across
processes (its state file), so two hosts never run one window twice. Nothing here raises or
blocks a turn: errors are logged (``[dream] …``).

The mode is what the spec says, else CrewHaus's default ``full``: its model phase runs only with
a ``budget_usd`` above 0 and a priced model, and otherwise is refused with the reason in the
run's outcome. The host passes the model session with the model id (the channel and managed
hosts: ``runtime.hosts.dream_session.memory_session`` over the model their turns use, per
tenant on managed); a caller that passes none gets the deterministic phase and an outcome that
says the model phase was not given a session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.fragment import DEFAULT_DREAM_MODE, ProofMode
from specwire.runtime.core.fragment_data import DreamData
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import EventSink
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.dream.engine import FactsOpener, run_dream
from specwire.runtime.dream.model_phase import ModelSession
from specwire.runtime.dream.settings import DreamSettings
from specwire.runtime.dream.state import window_of
from specwire.runtime.models.prices import ModelPrice, price_lookup

_lock = threading.Lock()
# (root, spec) → the thread running that layout's dream now.
_running: dict[tuple[str, str], threading.Thread] = {}
# (root, spec) → the key of the last window this process ran (or tried) a dream in.
_ran: dict[tuple[str, str], str] = {}


def dream_settings(dream: DreamData) -> DreamSettings:
    """The fragment's ``memory.dream`` as the engine's settings (mode passed explicitly)."""
    return DreamSettings(
        every_s=dream.every_ms // 1000,
        mode=dream.mode or DEFAULT_DREAM_MODE,
        budget_usd=dream.budget_usd,
        instructions=dream.instructions,
    )


@dataclass(frozen=True)
class DreamJob:
    layout: StoreLayout
    settings: DreamSettings
    log: Callable[[str], None]
    proof_mode: ProofMode = "ladder"
    emit: EventSink | None = None
    now: Clock = field(default=utc_now)
    # Where continuity, the wiki and the dream state live (None: files; ``memory.state``).
    volume: DocumentVolume | None = None
    # The spec's ``memory.dream.prices`` (over ``SPECWIRE_PRICES_FILE`` and the list prices).
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    # Opens the fact backend the fact steps run on (None: the spec's file store).
    facts: FactsOpener | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (str(self.layout.root), self.layout.spec_name)

    def start_if_due(
        self, model_id: str | None = None, session: ModelSession | None = None, /
    ) -> threading.Thread | None:
        """Start this window's run in the background unless this process already did;
        ``session`` is where ``mode: full`` runs its model phase (None: it is not run)."""
        try:
            window = window_of(self.layout.spec_name, self.now(), self.settings.every_s).key
            with _lock:
                if self.key in _running or _ran.get(self.key) == window:
                    return None
                _ran[self.key] = window
                thread = threading.Thread(
                    target=self._run,
                    args=(model_id, session),
                    name=f"dream {self.layout.spec_name}",
                    daemon=True,
                )
                _running[self.key] = thread
            thread.start()
        except Exception as exc:  # never fail the turn that asked
            with _lock:
                _running.pop(self.key, None)
            spec = self.layout.spec_name
            self.log(f"[dream] {spec}: not started ({type(exc).__name__}: {exc})\n")
            return None
        return thread

    def _run(self, model_id: str | None, session: ModelSession | None) -> None:
        spec = self.layout.spec_name
        try:
            outcome = run_dream(
                self.layout,
                self.settings,
                now=self.now,
                log=self.log,
                emit=self.emit,
                proof_mode=self.proof_mode,
                model_id=model_id,
                volume=self.volume,
                facts=self.facts,
                price_of=price_lookup(self.prices),
                model_session=session,
            )
            if not outcome.note:
                reason = outcome.model.reason or "ran"
                self.log(f"[dream] {spec}: {outcome.status} (model phase: {reason})\n")
        except Exception as exc:
            self.log(f"[dream] {spec}: failed ({type(exc).__name__}: {exc})\n")
        finally:
            with _lock:
                _running.pop(self.key, None)


def finish_dreams(timeout_s: float, log: Callable[[str], None]) -> None:
    """A host stopping: let the dreams running now finish (a killed run would be retried in
    its window, but a finished one is not redone); say so when one was cut off."""
    with _lock:
        running = len(_running)
    if not running:
        return
    log(f"[dream] stopping: waiting up to {timeout_s:g} s for {running} dream run(s)\n")
    if not wait_for_dreams(timeout_s):
        log("[dream] stopped with a dream run unfinished (its window will retry it)\n")


def wait_for_dreams(timeout_s: float | None = None) -> bool:
    """Wait for the dreams running now (a host shutting down, a test); True when none is left."""
    with _lock:
        threads = list(_running.values())
    for thread in threads:
        thread.join(timeout_s)
    with _lock:
        return not _running

"""The serving hosts' heartbeat: a periodic tick, off the turn path, that runs a study pass of
the spec's ``learning`` sources into its wiki when the spec says ``learning.study.on_heartbeat:
true`` (CrewHaus's channel bot ticks a heartbeat; specwire's channel and managed hosts do).

- Interval: ``$SPECWIRE_HEARTBEAT_S`` seconds (default ``DEFAULT_HEARTBEAT_S``, 30 minutes; at
  least ``MIN_HEARTBEAT_S``), read when the host starts; a bad value stops the start in one line.
- Rate: one thread per host ticks; the next wait starts when a tick has finished, so passes
  never overlap and at most one runs per interval (a slow source delays the next tick, never
  doubles it). The first tick comes one interval after the start, never at the start: a host
  restarted in a loop does not re-read every source each time.
- Never blocks a turn: the tick wires the spec's memory on its own (its own stores, released at
  once) in its own thread, as the agent's own agenda (continuity scoped to the spec: CrewHaus's
  "heartbeat ticks override continuity scope to spec"; a scoped spec's agent-wide facts). A
  failing pass is one ``[heartbeat]`` line; the next tick tries again.
- Stops on shutdown: the host's ``stop`` wakes the thread; a pass in flight may finish within
  ``STOP_WAIT_S`` (a study pass is idempotent: one cut off is redone by the next tick).
- Managed: each tick studies for every tenant this process has served (its own root, sources
  beneath its own workspace), one after the other.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from specwire.runtime.core.errors import ServeConfigError
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.hosts.dream_session import AGENT_ONLY, agent_own
from specwire.runtime.wiring import MemoryDeps, wire_memory

HEARTBEAT_ENV: Final = "SPECWIRE_HEARTBEAT_S"
DEFAULT_HEARTBEAT_S: Final = 1800.0
MIN_HEARTBEAT_S: Final = 1.0
# How long a stopping host waits for a pass in flight.
STOP_WAIT_S: Final = 30.0


def heartbeat_interval(environ: Mapping[str, str] | None = None) -> float:
    """``$SPECWIRE_HEARTBEAT_S`` as seconds (default ``DEFAULT_HEARTBEAT_S``)."""
    env = os.environ if environ is None else environ
    raw = env.get(HEARTBEAT_ENV, "").strip()
    if not raw:
        return DEFAULT_HEARTBEAT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < MIN_HEARTBEAT_S:
        raise ServeConfigError(
            f"{HEARTBEAT_ENV} must be a number of seconds >= {MIN_HEARTBEAT_S:g} (got {raw!r})"
        )
    return value


def heartbeat_on(fragment: FragmentData | None) -> bool:
    return (
        fragment is not None
        and fragment.learning is not None
        and fragment.learning.study_on_heartbeat is True
    )


@dataclass(frozen=True)
class StudyPlace:
    """Where one tick studies: the agent's working directory, and its tenant on managed.
    ``study``: the pass itself when the spec learns into Thredz's wiki (the host's server
    instance for that place: ``HostToolServers.study_pass``); None: the spec's own wiki."""

    cwd: Path
    tenant: Tenant | None = None
    study: Callable[[], str] | None = None


def study_tick(fragment: FragmentData, place: StudyPlace, log: Callable[[str], None]) -> str | None:
    """One study pass for ``place``, wired as the agent's own; its summary (None: the spec's
    memory wired no learning there, e.g. its wiki is off)."""
    if place.study is not None:  # into Thredz's wiki: the bundle wires no wiki of its own
        return place.study()
    parsed = agent_own(fragment)
    scoped = parsed.memory is not None and parsed.memory.scope is not None
    wired = wire_memory(
        parsed,
        MemoryDeps(
            catalog=ToolCatalog(),
            cwd=place.cwd,
            tenant=place.tenant,
            log=log,
            audience=AGENT_ONLY if scoped else None,
        ),
    )
    try:
        return wired.study() if wired.study is not None else None
    finally:
        wired.close()


class Heartbeat:
    """Calls ``tick`` every ``interval_s`` seconds in one background thread until ``stop``."""

    def __init__(
        self,
        interval_s: float,
        tick: Callable[[], None],
        log: Callable[[str], None],
        *,
        name: str = "heartbeat",
    ) -> None:
        self.interval_s = interval_s
        self._tick = tick
        self._log = log
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=name, daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stopping.wait(self.interval_s):
            try:
                self._tick()
            except Exception as exc:  # never stop the host, nor the next tick
                self._log(f"[heartbeat] tick failed ({type(exc).__name__}: {exc})\n")

    def stop(self, timeout_s: float = STOP_WAIT_S) -> bool:
        """Stop ticking; True when no pass is left running after ``timeout_s``."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        alive = self._thread.is_alive()
        if alive:
            self._log(
                "[heartbeat] stopped with a study pass unfinished (the next tick redoes it)\n"
            )
        return not alive


def start_study_heartbeat(
    fragment: FragmentData | None,
    places: Callable[[], Iterable[StudyPlace]],
    log: Callable[[str], None],
    *,
    interval_s: float | None = None,
) -> Heartbeat | None:
    """The heartbeat of a spec with ``study.on_heartbeat: true`` (None otherwise), started;
    each tick studies at every place ``places`` names then. ``interval_s`` defaults to
    ``heartbeat_interval()``."""
    if fragment is None or not heartbeat_on(fragment):
        return None
    every = heartbeat_interval() if interval_s is None else interval_s
    spec = fragment.spec_name

    def tick() -> None:
        for place in places():
            who = f" (tenant {place.tenant.id})" if place.tenant is not None else ""
            try:
                summary = study_tick(fragment, place, log)
            except Exception as exc:
                log(f"[heartbeat] {spec}{who}: study pass failed ({type(exc).__name__}: {exc})\n")
                continue
            if summary is not None:
                log(f"[heartbeat] {spec}{who}: {summary}\n")

    log(f"[heartbeat] {spec}: a study pass every {every:g} s ({HEARTBEAT_ENV})\n")
    return Heartbeat(every, tick, log, name=f"heartbeat {spec}").start()

"""``wire_learning``: the learning loop's tools over the wired wiki, and its dream step.

``wire_memory`` calls it after the wiki tier (tools register after the wiki's, as CrewHaus
orders them). Failed exam samples go to continuity's goals when plans are wired, else to the
wiki's gap notes. With ``study_on_dream`` and a dream, a study pass follows each dream run
(``study_after_dream``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.fragment_data import LearningData
from specwire.runtime.core.seams import DreamStart
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.learning.exam import GapLog, GoalGaps, WikiGaps
from specwire.runtime.learning.tools import LearningContext, learning_tools, study
from specwire.runtime.wiki.store import WikiStore


@dataclass(frozen=True)
class LearningWiring:
    context: LearningContext
    tools: list[Tool]


def wire_learning(
    learning: LearningData,
    store: WikiStore,
    *,
    goals: object | None,
    recall_k: int,
    workspace: Path,
    log: Callable[[str], None],
) -> LearningWiring:
    gaps: GapLog = GoalGaps(goals) if goals is not None else WikiGaps(store)
    context = LearningContext(store, learning, workspace, gaps, recall_k)
    tools = learning_tools(context)
    exam = f", exam {learning.exam.dataset}" if learning.exam is not None else ""
    log(
        f"[learning] {learning.domain}: {len(learning.sources)} source(s){exam} — "
        f"{', '.join(tool.name for tool in tools)} wired\n"
    )
    return LearningWiring(context, tools)


def study_pass_summary(context: LearningContext) -> str:
    """One study pass over the spec's sources, as its summary line (a heartbeat's tick)."""
    return study(context).summary()


def study_after_dream(
    dream: DreamStart, context: LearningContext, log: Callable[[str], None]
) -> DreamStart:
    """``dream`` followed, when it started a run, by a study pass once that run is over (in
    its own thread, off the turn path). The thread is not a daemon: a process that ends
    normally lets the pass finish (its reads are bounded: files by size, URLs by the fetch
    tool's time budget); one killed meanwhile leaves the pass to the next dream (a pass is
    idempotent)."""

    def start(model_id: str | None, session: Any = None, /) -> object:
        started = dream(model_id, session)
        if not isinstance(started, threading.Thread):
            return started

        def after() -> None:
            started.join()
            try:
                log(f"[learning] after the dream: {study(context).summary()}\n")
            except Exception as exc:  # never fail a host over a background pass
                log(f"[learning] study after the dream failed ({type(exc).__name__}: {exc})\n")

        follower = threading.Thread(target=after, name="study after dream", daemon=False)
        follower.start()
        return follower

    return start

"""``learning``: its cross-key rules and its lowering (CrewHaus's semantics).

- The loop learns into a wiki: ``learning`` needs ``memory.wiki`` switched on, or ``thredz``
  (Thredz's wiki, through its server) (``LEARNING_HOMES`` lists what counts as a place to learn
  into; another home is one more entry there).
- A learning wiki takes only cited knowledge: ``memory.wiki.requireSources`` is stamped true, and
  ``requireSources: false`` beside ``learning`` is a contradiction.
- ``learning: {enabled: false}`` is no learning at all (no key in the IR, the spec's bytes).
- ``on_dream`` resolves to true (CrewHaus's default). ``on_heartbeat`` is carried only when it is
  ``true`` on a target whose host has a heartbeat (``HEARTBEAT_TARGETS``: channel and managed,
  ``runtime.hosts.heartbeat``); elsewhere, and when unset, it is dropped (CrewHaus defaults it
  to true, but a heartbeat re-reads every source on a timer: specwire's hosts tick only for a
  spec that asks), so a spec that does not say it keeps its bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from specwire.ir.errors import SpecIssue
from specwire.ir.positions import Locator
from specwire.ir.source import LearningSource
from specwire.runtime.core.fragment import (
    ExamFragment,
    LearningFragment,
    MemoryFactsFragment,
    WikiFragment,
)


def _has_wiki(data: dict[str, Any]) -> bool:
    memory = data.get("memory")
    if not isinstance(memory, dict) or memory.get("enabled") is False:
        return False
    wiki = memory.get("wiki")
    return isinstance(wiki, dict) and wiki.get("enabled") is not False


def _has_thredz(data: dict[str, Any]) -> bool:
    """Thredz's wiki (``thredz:``; a wrong value is the source model's to report). On research
    and crew it is accepted and not wired (CrewHaus's rule still counts it as a home): the
    learning block is then dropped with a warning (``unwired_learning``)."""
    return data.get("thredz") not in (None, False)


def learns_into_unwired_thredz(data: dict[str, Any]) -> bool:
    """``learning`` whose only home is Thredz on a target that does not wire Thredz."""
    return (
        _learning_on(data)
        and data.get("target") in ("research", "crew")
        and _has_thredz(data)
        and not _has_wiki(data)
    )


# Where a spec's learning can be written to: (test on the normalized spec, how to name it).
LEARNING_HOMES: tuple[tuple[Callable[[dict[str, Any]], bool], str], ...] = (
    (_has_wiki, "memory: {wiki: {}}"),
    (_has_thredz, "thredz: true"),
)


def _learning_on(data: dict[str, Any]) -> bool:
    learning = data.get("learning")
    return isinstance(learning, dict) and learning.get("enabled") is not False


def check_learning(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    if not _learning_on(data):
        return
    if not any(has_home(data) for has_home, _ in LEARNING_HOMES):
        homes = " or ".join(f"`{spelt}`" for _, spelt in LEARNING_HOMES)
        yield locator.at_key(
            ("learning",),
            "needs a wiki to learn into — study passes write sourced articles there "
            f"and the exam reads them: add {homes}, or set `enabled: false` here",
        )
        return
    memory = data.get("memory")
    wiki = memory.get("wiki") if isinstance(memory, dict) else None
    if isinstance(wiki, dict) and wiki.get("requireSources") is False:
        yield locator.at_value(
            ("memory", "wiki", "requireSources"),
            "contradicts `learning`: a learning wiki takes only cited knowledge (every article "
            "has a ## Sources section); remove `requireSources: false`",
        )


# The targets whose hosts tick a heartbeat (a long-running host serving turns).
HEARTBEAT_TARGETS: frozenset[str] = frozenset({"channel", "managed"})


def resolve_learning(source: LearningSource | None, target: str) -> LearningFragment | None:
    if source is None or source.enabled is False:
        return None
    exam = source.exam
    study = source.study
    return LearningFragment(
        domain=source.domain,
        curriculum=source.curriculum,
        sources=tuple(source.sources or ()),
        exam=ExamFragment(dataset=exam.dataset, graders=tuple(exam.graders))
        if exam is not None
        else None,
        study_on_dream=study is None or study.on_dream is not False,
        study_on_heartbeat=True
        if study is not None and study.on_heartbeat is True and target in HEARTBEAT_TARGETS
        else None,
    )


def with_learning_governance(
    memory: MemoryFactsFragment | None, learning: LearningFragment | None
) -> MemoryFactsFragment | None:
    """``memory.wiki.requireSources`` stamped true when the spec learns (CrewHaus's
    ``applyLearningWikiGovernance``); unchanged otherwise."""
    if learning is None or memory is None or memory.wiki is None:
        return memory
    wiki: WikiFragment = memory.wiki.model_copy(update={"require_sources": True})
    return memory.model_copy(update={"wiki": wiki})


def unwired_learning(data: dict[str, Any], locator: Locator) -> list[str]:
    """The located warning for ``learning`` that could only learn into Thredz on a target that
    does not wire Thredz: accepted (as CrewHaus accepts it) and dropped from the bundle."""
    if not learns_into_unwired_thredz(data):
        return []
    issue = locator.at_key(
        ("learning",),
        f"warning: learning is accepted but not wired on the {data.get('target')} target: its "
        "only home is Thredz, which this target does not wire (add `memory: {wiki: {}}` to "
        "learn into the agent's own wiki)",
    )
    return [str(issue)]

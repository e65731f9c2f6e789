"""Seams: what the agent loop consumes from the memory tiers, without importing any store.

``wire_memory`` returns a ``LoopOptions`` mapping with keys only for wired features; a host
spreads it into ``run_chat_loop(**options)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypedDict

from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass

# "deadline": the host's deadline passed (a research run); the turn stopped before its next
# model call. "cancelled": a single-turn session whose turn the host's stream sink cancelled
# (the client went away).
StopReason = Literal["complete", "exit", "abort", "deadline", "cancelled"]


# When auto-recall runs: once, at the session's first message, or again every
# ``refresh_every`` user turns (the recalled block is replaced, never stacked).
RecallMode = Literal["session-start", "per-turn"]
MemoryBlockKind = Literal["agent_memory", "crew_memory", "document_memory"]


class DreamStart(Protocol):
    """``MemorySeam.dream``: the session is a ``runtime.dream.model_phase.ModelSession`` (typed
    loosely here: the contract does not import the dream)."""

    def __call__(self, model_id: str | None, session: Any = None, /) -> object: ...


@lazy_methods_dataclass(frozen=True)
class MemorySeam:
    """Facts seam: ``recall`` is set only with auto-recall, ``on_capture`` only with capture."""

    auto_recall: bool = False
    recall_k: int = 5
    # (query, k) -> recalled lines, best first.
    recall: Callable[[str, int], list[str]] | None = None
    auto_capture: bool = False
    capture_threshold: int = 1
    # (completed_turns, session_id) -> number of facts captured.
    on_capture: Callable[[int, str], int] | None = None
    recall_mode: RecallMode = "session-start"
    refresh_every: int = 1
    # (session id, stop reason, the session log's events) -> None: leaves the session's summary
    # record for session recall (``memory.sessionRecall``); runs at teardown, after capture.
    # The events are ``runtime.sessions.log.Event``s, read from either backend.
    on_session_end: Callable[[str, str, Iterable[Any]], None] | None = None
    # (model id, model session) -> None: starts the spec's dream in the background when its
    # window is due (``memory.dream``, ``runtime.dream.schedule``); a per-turn host calls it
    # after a turn, with the session ``mode: full`` runs its model phase in
    # (``runtime.hosts.dream_session.memory_session``; None: the deterministic phase only).
    # Never blocks, never raises.
    dream: DreamStart | None = None
    # () -> (kind, text) system blocks read at the session's first message and put after the
    # instructions: Crewship's ``[AGENT MEMORY]`` and ``[CREW SHARED MEMORY]`` blocks
    # (``memory.tiers``, ``runtime.facts.tiers.prompt``), and the ``<document_memory>`` blocks
    # of the spec's document bindings (``memory.documents``, ``runtime.documents.prompt``). A
    # failure blocks the turn, as a failed recall does.
    memory_blocks: Callable[[], Sequence[tuple[MemoryBlockKind, str]]] | None = None
    # Recall for the current message only, never earlier messages or the instructions: an
    # OpenComputer memory endpoint receives the current input's text, not the conversation.
    current_input_only: bool = False
    # () -> (line, payload) per memory provider that failed since the last call (several
    # providers, ``memory.providers``): the loop calls it once per turn, writes each payload
    # as a ``memory_diagnostic`` event and each line to its log. Never raises.
    diagnostics: Callable[[], Sequence[tuple[str, Mapping[str, str]]]] | None = None


@lazy_dataclass(frozen=True)
class LedgerEntry:
    """One user message as the requirements ledger records it, verbatim."""

    role: str
    text: str
    session_id: str
    turn: int


@lazy_methods_dataclass(frozen=True)
class HandoffInput:
    """What the loop hands continuity when a session ends: why, and the ledger entries."""

    session_id: str
    stop_reason: StopReason
    ledger: Sequence[LedgerEntry] = ()


@lazy_methods_dataclass(frozen=True)
class ContinuitySeam:
    """Continuity seam.

    ``load_plan`` and ``on_plan_dirty`` return the continuity tail exactly as the model sees it,
    already wrapped (``<current_plan>`` and, with the ledger on, ``<requirements_ledger>``), or
    None when there is nothing to show.
    """

    load_plan: Callable[[], str | None]
    on_plan_dirty: Callable[[], str | None]
    ledger: bool
    # Pins user requirements verbatim (called with messages evicted from the context window).
    record_requirements: Callable[[Sequence[LedgerEntry]], None] | None = None
    # Runs once at teardown; writes handoff.md.
    on_handoff: Callable[[HandoffInput], None] | None = None
    # The handoff note left by the previous session (None if there is none), read at start.
    load_handoff: Callable[[], str | None] | None = None


@lazy_methods_dataclass(frozen=True)
class Skill:
    """A skill the prompt lists: its name, description, body and where it was found."""

    name: str
    description: str
    body: str
    source: Literal["builtin", "home", "project"]


@lazy_methods_dataclass(frozen=True)
class SlashCommand:
    """A slash command a person may type: its text template and where it was found."""

    name: str
    description: str
    argument_hint: str
    body: str
    source: Literal["builtin", "home", "project"]

    def render(self, arguments: str) -> str:
        return self.body.replace("$ARGUMENTS", arguments)


class LoopOptions(TypedDict, total=False):
    memory: MemorySeam
    continuity: ContinuitySeam
    skills: list[Skill]
    slash_commands: dict[str, SlashCommand]

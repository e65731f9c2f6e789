"""Deterministic, threshold-gated auto-capture of durable facts from a session log (no model).

A turn starts at each non-synthetic ``user_message``; synthetic user messages and tool results
stay inside the turn they belong to. Each turn yields at most one candidate: the first non-empty
line of the turn's final ``assistant_message``, whitespace collapsed, cut to 240 characters
(none from an answer recorded as ``cancelled``: its stream was stopped before it was finished).
A leading acknowledgement ("Noted:", "OK,", "Got it.") is dropped from it; a line that is only
acknowledgements, a question, or a restatement of the question the person asked is no fact.

Turns about the agent's own memory yield nothing: a turn that called ``Remember`` or
``MemoryForget`` (the fact was stored, or deliberately removed, already: capturing the reply
would duplicate it as "Done: remembered (mem_…): …" or bring a forgotten fact back), and a turn
whose only tool calls are memory or continuity tools
(``runtime.core.tool_types.MEMORY_TOOL_NAMES``: its
reply reports bookkeeping such as "Done: created plan-0001 …", not a fact). Those tools' ids are
never evidence either.

A reply that only restates what the turn was handed is no fact either: the first line of one of
the turn's tool results (the agent's own acknowledgement, "Done: fetched https://… (200)"), or, in
a session the research host started (its ``session_start`` names a ``runId``), the task the host
wrote as the user message (the goal, a sub-goal, the synthesis brief). "Restates" means that once
those words are taken out (compared as below), nothing but acknowledgements is left.

A slash-command turn yields nothing either: its model input was the command's expanded prompt
(the ``synthetic`` user message the loop logs right after the typed one, before any model output),
so its reply restates that template rather than anything learned. A synthetic user message later in
a turn (a nudge after tool results) does not make it a command turn.

A reply that repeats memory is never stored as new memory, or every session that recalls a fact and
quotes it ("Noted: … From memory: <fact>") would store a longer copy, and the copies would nest
further each run. A candidate is skipped when its first line (before the cut to 240 characters)
contains, as a run of whole words, any line recalled into this session's prompt (the ``lines`` of
its ``recall`` events) or the text of any live fact found by recalling the candidate from the store
(up to ``MEMORY_MATCH_K`` hits). Both sides are compared NFKC-casefolded with whitespace collapsed,
and trailing full stops (or a ``…`` cut mark) are dropped from the memory side, so a fact quoted as
"<fact>." or a clipped fact still matches. Facts auto-captured from this same session do not count
as memory (capturing a session again, or after a resume, gives the same result); equal text is still
skipped by the idempotency check.

The newest turns win: candidates are deduplicated case-insensitively and the 8 whose latest
statement is most recent are kept (a long conversation's later turns are captured, not its first
8). A repeated candidate keeps the text it first had and gathers the evidence of every turn that
stated it. Evidence is the tool-use ids of a turn's ``tool_result`` events whose ``isError`` is not
true, memory and continuity tools excluded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.core.tool_types import is_memory_tool
from specwire.runtime.facts.model import (
    MAX_EVIDENCE,
    MAX_TEXT_CHARS,
    InvalidRequestError,
    NewFactItem,
    Provenance,
)
from specwire.runtime.facts.providers.protocol import (
    FactProvider,
    LocalFactProvider,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.text import clip, collapse_whitespace, fold, normalize_text
from specwire.runtime.sessions.log import Event
from specwire.runtime.sessions.store import LogSource, events_of

MAX_FACT_CHARS = 240
MAX_FACTS = 8
AUTO_CAPTURE_TAG = "auto-capture"
# How many store matches a candidate is checked against for containing a live fact's text.
MEMORY_MATCH_K = 20
# The facts tools that store or remove a fact themselves: a turn calling one is never captured.
FACT_WRITING_TOOL_NAMES: frozenset[str] = frozenset({"Remember", "MemoryForget"})
# ``session_start`` of a session whose user messages the research host writes (goal, sub-goal,
# synthesis brief): restating them is no fact.
HOST_TASK_MARK = "runId"
# What a reply opens with when it reports a tool result ("Done: <its first line>").
_TOOL_ACK_PREFIX = re.compile(r"^\s*(done|that failed)\s*[:,.!—–-]\s*", re.IGNORECASE)
# A reply opening with an acknowledgement ("Noted: …") is captured without it; a reply that is
# nothing but acknowledgements ("OK, thanks!") is not captured at all.
_ACK_PREFIX = re.compile(
    r"^\s*(noted|ok|okay|sure|got it|understood|will do|thanks|thank you|alright|great)"
    r"\s*[:,.!—–-]\s*",
    re.IGNORECASE,
)
_ACK_WORDS = frozenset(
    [
        "ok",
        "okay",
        "thanks",
        "thank",
        "you",
        "noted",
        "sure",
        "great",
        "cool",
        "got",
        "it",
        "understood",
        "will",
        "do",
        "done",
        "yes",
        "no",
        "alright",
        "fine",
        "perfect",
        "sounds",
        "good",
    ]
)


@dataclass(frozen=True)
class DurableFact:
    text: str
    evidence: tuple[str, ...] = ()


@dataclass
class Turn:
    final_answer: str | None = None
    evidence: list[str] = field(default_factory=list)
    # Names of the tools called in the turn, in call order (repeats kept).
    tool_names: list[str] = field(default_factory=list)
    # The user message was a slash command, expanded into a synthetic prompt for the model.
    slash_command: bool = False
    # Whether the model produced anything yet (an assistant message, a tool use or result).
    answered: bool = False
    # What the person typed to open the turn.
    user_text: str = ""
    # The first line of each tool result of the turn.
    result_lines: list[str] = field(default_factory=list)

    @property
    def about_memory(self) -> bool:
        """Whether the turn was the agent managing its own memory (see the module docstring)."""
        if any(name in FACT_WRITING_TOOL_NAMES for name in self.tool_names):
            return True
        return bool(self.tool_names) and all(is_memory_tool(name) for name in self.tool_names)


def split_turns(events: Iterable[Event]) -> list[Turn]:
    """Group events into turns; events before the first real user message belong to none."""
    turns: list[Turn] = []
    # Tool name by tool-use id, from the ``tool_use`` events (a result's own name is the fallback).
    names: dict[str, str] = {}
    for event in events:
        payload = event.payload
        if event.type == "user_message" and payload.get("synthetic") is not True:
            turns.append(Turn(user_text=_text(payload.get("text"))))
        elif not turns:
            continue
        elif event.type == "user_message":  # synthetic: before any model output, a command
            if not turns[-1].answered:
                turns[-1].slash_command = True
        elif event.type == "assistant_message":
            text = payload.get("text")
            # A cancelled answer (streamed, then stopped) was never finished: no fact in it.
            whole = isinstance(text, str) and payload.get("cancelled") is not True
            turns[-1].final_answer = text if whole else None
            turns[-1].answered = True
        elif event.type == "tool_use":
            turns[-1].answered = True
            name = _text(payload.get("name"))
            tool_use_id = _text(payload.get("id"))
            turns[-1].tool_names.append(name)
            if tool_use_id:
                names[tool_use_id] = name
        elif event.type == "tool_result":
            turns[-1].answered = True
            tool_use_id = _text(payload.get("toolUseId"))
            known = names.get(tool_use_id) if tool_use_id else None
            name = known if known else _text(payload.get("name"))
            if known is None:  # a result without its use: the call still counts
                turns[-1].tool_names.append(name)
            result_line = first_line(_text(payload.get("text")))
            if result_line:
                turns[-1].result_lines.append(result_line)
            evidence = turns[-1].evidence
            if (
                payload.get("isError") is not True
                and tool_use_id
                and not is_memory_tool(name)
                and tool_use_id not in evidence
            ):
                evidence.append(tool_use_id)
    return turns


def first_line(text: str) -> str | None:
    for line in text.splitlines():
        collapsed = collapse_whitespace(line)
        if collapsed:
            return collapsed
    return None


def without_acknowledgement(line: str) -> str | None:
    """The line after a leading "Noted:" / "OK," / "Got it." …; None when nothing else is said."""
    rest = line
    while (match := _ACK_PREFIX.match(rest)) is not None:
        rest = rest[match.end() :]
    words = re.findall(r"[\w']+", fold(rest))
    if not words or all(word in _ACK_WORDS for word in words):
        return None
    return rest


def echoes_a_question(line: str, user_text: str) -> bool:
    """Whether the line is a question, or restates the question the person asked."""
    if line.rstrip().endswith("?"):
        return True
    question = collapse_whitespace(user_text)
    if not question.endswith("?"):
        return False
    return contains_memory(line, question.rstrip("?"))


def restates(line: str, said: str) -> bool:
    """Whether ``line`` says nothing but ``said`` (as a run of whole words, compared as in
    ``contains_memory``; or its start, when the line was cut with "…") and acknowledgements
    ("Noted:", "Done:", "That failed:")."""
    needle = memory_form(said).rstrip(". ")
    if not any(char.isalnum() for char in needle):
        return False
    if contains_memory(line, said):
        rest = memory_form(line).replace(needle, " ")
        words = re.findall(r"[\w']+", rest)
        return all(word in _ACK_WORDS or word in ("that", "failed") for word in words)
    cut = memory_form(_TOOL_ACK_PREFIX.sub("", line, count=1))
    start = cut.removesuffix("...").rstrip()  # NFKC folds the cut mark "…" to three dots
    return start != cut and any(char.isalnum() for char in start) and needle.startswith(start)


def recalled_lines(events: Iterable[Event]) -> list[str]:
    """Every line the session's ``recall`` events injected into the prompt, in order."""
    lines: list[str] = []
    for event in events:
        if event.type != "recall":
            continue
        payload_lines = event.payload.get("lines")
        if isinstance(payload_lines, list):
            lines.extend(line for line in payload_lines if isinstance(line, str))
    return lines


def memory_form(text: str) -> str:
    """How text is compared for containment: NFKC-casefolded, whitespace collapsed."""
    return collapse_whitespace(fold(text))


def contains_memory(text: str, memory: str) -> bool:
    """Whether ``text`` contains ``memory`` as a run of whole words (see the module docstring).

    Trailing full stops (a ``…`` folds to three) are dropped from ``memory`` first; a memory with
    no letter or digit left never matches.
    """
    needle = memory_form(memory).rstrip(". ")
    if not any(char.isalnum() for char in needle):
        return False
    haystack = memory_form(text)
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        cut_before = start > 0 and haystack[start - 1].isalnum() and needle[0].isalnum()
        cut_after = end < len(haystack) and haystack[end].isalnum() and needle[-1].isalnum()
        if not cut_before and not cut_after:
            return True
        start = haystack.find(needle, start + 1)
    return False


def durable_facts(
    events: Iterable[Event],
    *,
    max_len: int = MAX_FACT_CHARS,
    max_facts: int = MAX_FACTS,
    repeats_memory: Callable[[str], bool] | None = None,
) -> list[DurableFact]:
    """The session's durable facts in order of first statement (see the module docstring).

    A candidate whose first line contains a line recalled into the session is skipped, and so is
    one for which ``repeats_memory(first_line)`` is true (the store check of ``capture_session``).
    Skipped candidates never take one of the ``max_facts`` places.
    """
    logged = list(events)
    recalled = list(dict.fromkeys(recalled_lines(logged)))
    host_tasks = any(
        event.type == "session_start" and HOST_TASK_MARK in event.payload for event in logged
    )
    texts: dict[str, str] = {}  # key -> text as first stated; insertion order = first statement
    evidence: dict[str, dict[str, None]] = {}
    latest: dict[str, int] = {}  # key -> index of the last turn that stated it
    for index, turn in enumerate(split_turns(logged)):
        if turn.about_memory or turn.slash_command:
            continue
        line = first_line(turn.final_answer) if turn.final_answer else None
        line = without_acknowledgement(line) if line is not None else None
        if line is None or echoes_a_question(line, turn.user_text):
            continue
        handed = list(turn.result_lines)
        if host_tasks and (task := first_line(turn.user_text)) is not None:
            handed.append(task)
        if any(restates(line, text) for text in handed):
            continue
        if any(contains_memory(line, memory) for memory in recalled):
            continue
        if repeats_memory is not None and repeats_memory(line):
            continue
        text = clip(line, max_len)
        key = normalize_text(text)
        texts.setdefault(key, text)
        evidence.setdefault(key, {}).update(dict.fromkeys(turn.evidence))
        latest[key] = index
    newest = set(sorted(latest, key=latest.__getitem__, reverse=True)[: max(0, max_facts)])
    return [
        DurableFact(text, tuple(evidence[key])[:MAX_EVIDENCE])
        for key, text in texts.items()
        if key in newest
    ]


def capture_session(
    provider: FactProvider,
    sessions_dir: LogSource,
    session_id: str,
    *,
    ttl_ms: int | None,
    threshold: int,
    completed_turns: int,
    scope: ScopeKey = AGENT,
    visible: tuple[ScopeKey, ...] = (AGENT,),
) -> int:
    """Capture a session's durable facts through ``provider``; returns how many were written.

    They are written in ``scope`` (the wiring's default write key: a fact said in a shared
    conversation is that conversation's); "repeats memory" looks only at ``visible``.

    Nothing happens below the threshold (``completed_turns < max(1, threshold)``). Facts whose
    normalized text is already live are skipped, so capturing a session twice writes nothing.
    Replies that repeat recalled or stored memory are skipped (see the module docstring).
    The embedded store writes them in one transaction (all or none); a remote provider one
    idempotent retain each.
    """
    if completed_turns < max(1, threshold):
        return 0
    _check_session_id(session_id)
    facts = durable_facts(
        events_of(sessions_dir, session_id),
        repeats_memory=_repeats_stored_fact(provider, session_id, visible),
    )
    items = [
        NewFactItem(
            fact.text,
            (AUTO_CAPTURE_TAG, session_id),
            ttl_ms=ttl_ms,
            provenance=Provenance(session_id, fact.evidence),
            scope=scope,
        )
        for fact in facts
    ]
    if isinstance(provider, LocalFactProvider):
        written = provider.store.retain_many(items, if_new=True)
        return sum(fact.quarantined is None for fact in written)
    results = [
        provider.retain(
            RetainRequest(
                item.text, item.tags, item.ttl_ms, item.provenance, if_absent=True, scope=scope
            )
        )
        for item in items
    ]
    return sum(result.created and result.quarantined is None for result in results)


def _repeats_stored_fact(
    provider: FactProvider, session_id: str, visible: tuple[ScopeKey, ...]
) -> Callable[[str], bool]:
    """Whether a line contains the text of a live fact that is not this session's own capture."""
    seen: dict[str, bool] = {}

    def repeats(line: str) -> bool:
        key = memory_form(line)
        if key not in seen:
            request = RecallRequest(clip(line, MAX_TEXT_CHARS), MEMORY_MATCH_K, visible=visible)
            hits = provider.recall(request).hits
            seen[key] = any(
                contains_memory(line, hit.text)
                for hit in hits
                if not _captured_from(hit.tags, session_id)
            )
        return seen[key]

    return repeats


def _captured_from(tags: tuple[str, ...], session_id: str) -> bool:
    # Captured facts carry the capture tag and their session's id as tags.
    return AUTO_CAPTURE_TAG in tags and session_id in tags


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _check_session_id(session_id: str) -> None:
    """The id names a file in ``sessions_dir``: it must be one plain path component."""
    if (
        not session_id
        or session_id in (".", "..")
        or "/" in session_id
        or "\\" in session_id
        or "\x00" in session_id
    ):
        raise InvalidRequestError(f"not a session id: {session_id!r}")

"""Session recall (``memory.sessionRecall``): a summary record per finished session, and a ranker
over them fused into auto-recall.

At teardown each session leaves ``<root>/sessions-index/<spec>/<session id>.json`` (under the
tenant's root on managed, so fenced like every store): its stop reason, outcome (the first line
of its last answer, a leading "Noted:" or "OK," dropped), key facts (what ``Remember`` stored
and the durable statements auto-capture would take), the tools it used and its date. A per-turn
host rewrites the record after each turn of the conversation, so it always summarizes the whole
conversation; recall there leaves out the conversation's own record (its turns are in the
prompt already).

Scopes (``runtime.core.scopes``): a record holds what was said in one conversation and what was
remembered there, so it belongs to the session's write key (``FactScoping.write_key``: the
person's ``user`` key in a direct conversation, the conversation's key in a shared one, the role
in a crew, ``agent`` without ``memory.scope``) and is recalled only where that key is visible, as
a fact written there would be. A record from before scopes names no key: it is an ``agent``
record, as facts from before scopes are ``agent`` facts.

Text the injection scanner (``runtime.safety.injection``) flags is left out of a record when it
is written, and a record that holds some anyway (edited by hand) is never recalled: a session
summary reaches later sessions' prompts, like a fact.

Recall ranks the records by BM25 over ``outcome + key facts + tools used`` (the newest
``MAX_INDEXED`` records) and gives lines the agent can cite, 240 characters at most::

    [session:<id> · <YYYY-MM-DD>] <outcome> · facts: <fact>; <fact> · tools: <tool>, <tool>

``session_recall_seam`` fuses those lines with the fact lines by reciprocal-rank fusion
(``runtime.facts.fusion``), cut at the seam's ``recall_k``: the facts' own two rankings (BM25 and,
with an embedder, cosine) are already fused in the fact lines, so sessions are the third ranker.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import AGENT, ScopeError, ScopeKey
from specwire.runtime.core.seams import MemorySeam
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.facts.capture import (
    durable_facts,
    first_line,
    split_turns,
    without_acknowledgement,
)
from specwire.runtime.facts.fusion import reciprocal_rank_fusion
from specwire.runtime.facts.lexical.ranking import K1, B
from specwire.runtime.facts.text import clip, collapse_whitespace, query_terms, tokenize
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.fs.safe_open import read_regular_text
from specwire.runtime.safety.injection import scan
from specwire.runtime.sessions.log import Event, read_events

RECORD_VERSION: Final = 1
LINE_CHARS: Final = 240
MAX_KEY_FACTS: Final = 8
MAX_TOOLS: Final = 16
# Recall reads at most this many records, the newest first (by file modification time).
MAX_INDEXED: Final = 500


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    date: str  # YYYY-MM-DD (UTC) of the session's end
    ended_at: str
    stop_reason: str
    turns: int
    outcome: str
    key_facts: tuple[str, ...] = ()
    tools_used: tuple[str, ...] = ()
    # Who may recall the record: the scope key the session wrote into.
    scope: ScopeKey = AGENT

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": RECORD_VERSION,
            "sessionId": self.session_id,
            "date": self.date,
            "endedAt": self.ended_at,
            "stopReason": self.stop_reason,
            "turns": self.turns,
            "outcome": self.outcome,
            "keyFacts": list(self.key_facts),
            "toolsUsed": list(self.tools_used),
        }
        if self.scope != AGENT:
            data["scope"] = self.scope.label()
        return data

    @classmethod
    def from_data(cls, data: Any) -> SessionSummary | None:
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            return None
        label = data.get("scope", AGENT.label())
        try:
            # A label that does not parse (edited, or its subject erased oddly) is nobody's.
            scope = ScopeKey.parse(label) if isinstance(label, str) else None
        except ScopeError:
            scope = None
        if scope is None:
            return None
        try:
            return cls(
                session_id=str(data["sessionId"]),
                date=str(data["date"]),
                ended_at=str(data["endedAt"]),
                stop_reason=str(data["stopReason"]),
                turns=int(data["turns"]),
                outcome=str(data["outcome"]),
                key_facts=tuple(str(fact) for fact in data.get("keyFacts", [])),
                tools_used=tuple(str(tool) for tool in data.get("toolsUsed", [])),
                scope=scope,
            )
        except (KeyError, TypeError, ValueError):
            return None

    def search_text(self) -> str:
        return " ".join([self.outcome, *self.key_facts, *self.tools_used])

    def line(self) -> str:
        parts = [self.outcome or f"ended ({self.stop_reason})"]
        if self.key_facts:
            parts.append("facts: " + "; ".join(self.key_facts))
        if self.tools_used:
            parts.append("tools: " + ", ".join(self.tools_used))
        body = collapse_whitespace(" · ".join(parts))
        return clip(f"[session:{self.session_id} · {self.date}] {body}", LINE_CHARS)


def summarize(
    events: Iterable[Event],
    session_id: str,
    stop_reason: str,
    ended: Clock = utc_now,
    scope: ScopeKey = AGENT,
) -> SessionSummary:
    """The summary of one session log (deterministic: no model), kept in ``scope``."""
    logged = list(events)
    turns = split_turns(logged)
    answers = [turn.final_answer for turn in turns if turn.final_answer]
    last = first_line(answers[-1]) if answers else None
    last = without_acknowledgement(last) if last else None
    remembers = [
        event.payload["input"]
        for event in logged
        if event.type == "tool_use"
        and event.payload.get("name") == "Remember"
        and isinstance(event.payload.get("input"), dict)
    ]
    # A Remember naming a scope kept its fact narrower than the session's own key (a person's
    # `user` key under an `agent` default): the record, kept in ``scope``, must not carry that
    # text wider, neither as a key fact nor in an outcome that repeats it.
    kept_narrower = {
        collapse_whitespace(str(args.get("text", "")))
        for args in remembers
        if args.get("scope") is not None
    } - {""}
    remembered = [
        collapse_whitespace(str(args.get("text", "")))
        for args in remembers
        if args.get("scope") is None
    ]
    stated = [fact.text for fact in durable_facts(logged)]
    facts = [
        clip(fact, LINE_CHARS)
        for fact in dict.fromkeys([*remembered, *stated])
        if fact and fact not in kept_narrower and scan(fact) is None
    ]
    if last is not None and scan(last) is not None:
        last = None  # flagged text never reaches a later session's prompt
    if last is not None and any(text in collapse_whitespace(last) for text in kept_narrower):
        last = None
    tools = dict.fromkeys(name for turn in turns for name in turn.tool_names if name)
    moment = ended()
    return SessionSummary(
        session_id=session_id,
        date=moment.date().isoformat(),
        ended_at=iso(moment),
        stop_reason=stop_reason,
        turns=len(turns),
        outcome=clip(collapse_whitespace(last), LINE_CHARS) if last else "",
        key_facts=tuple(facts[:MAX_KEY_FACTS]),
        tools_used=tuple(list(tools)[:MAX_TOOLS]),
        scope=scope,
    )


class SessionIndex:
    """One spec's session summaries (``layout.sessions_index_dir``): files, or documents of the
    state volume (``memory.state: postgres``: every worker's sessions, no file written)."""

    def __init__(
        self, layout: StoreLayout, *, now: Clock = utc_now, volume: DocumentVolume | None = None
    ) -> None:
        self.layout = layout
        self.now = now
        self.volume = volume

    @property
    def directory(self) -> Path:
        return self.layout.sessions_index_dir

    def record_path(self, session_id: str) -> Path:
        return self.directory / f"{storage_name(session_id)}.json"

    def write(self, summary: SessionSummary) -> Path:
        path = self.record_path(summary.session_id)
        data = json.dumps(summary.to_data(), ensure_ascii=False, indent=2) + "\n"
        if self.volume is not None:
            self.volume.write(path, data)
            return path
        self.directory.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, data.encode("utf-8"))
        return path

    def record_session(
        self,
        session_id: str,
        stop_reason: str,
        log: Path | Iterable[Event],
        scope: ScopeKey = AGENT,
    ) -> Path | None:
        """Summarize the session's log (its path or its events) into its record in ``scope``
        (nothing for an empty session)."""
        events = read_events(log) if isinstance(log, Path) else log
        summary = summarize(events, session_id, stop_reason, self.now, scope)
        if summary.turns == 0:
            return None
        return self.write(summary)

    def summaries(self) -> list[SessionSummary]:
        """The newest ``MAX_INDEXED`` records; unreadable ones are skipped."""
        if self.volume is not None:
            return self._volume_summaries(self.volume)
        directory = self.directory
        if not directory.is_dir():
            return []
        paths = []
        for path in directory.iterdir():
            if path.suffix != ".json" or path.is_symlink() or not path.is_file():
                continue
            paths.append((path.stat().st_mtime_ns, path.name, path))
        paths.sort(reverse=True)
        found = []
        for _, _, path in paths[:MAX_INDEXED]:
            try:
                summary = SessionSummary.from_data(json.loads(read_regular_text(path)))
            except (OSError, ValueError):
                continue
            if summary is not None:
                found.append(summary)
        return found

    def _volume_summaries(self, volume: DocumentVolume) -> list[SessionSummary]:
        """The volume's records, newest (by their end) first."""
        found = []
        for path in volume.documents(self.directory):
            if path.suffix != ".json":
                continue
            try:
                summary = SessionSummary.from_data(json.loads(volume.read(path) or ""))
            except ValueError:
                continue
            if summary is not None:
                found.append(summary)
        found.sort(key=lambda summary: (summary.ended_at, summary.session_id), reverse=True)
        return found[:MAX_INDEXED]

    def recall(
        self,
        query: str,
        k: int,
        *,
        exclude: str | None = None,
        visible: tuple[ScopeKey, ...] = (AGENT,),
    ) -> list[SessionSummary]:
        """The ``k`` best summaries for ``query`` by BM25 (ties: the newest first), of the
        records kept in a ``visible`` key."""
        if k < 1:
            return []
        terms = query_terms(query)
        records = [
            s
            for s in self.summaries()
            if s.session_id != exclude
            and s.scope in visible
            and scan(s.search_text()) is None  # a hand-edited record
        ]
        if not terms or not records:
            return []
        docs = [Counter(tokenize(record.search_text())) for record in records]
        average = sum(sum(doc.values()) for doc in docs) / len(docs) or 1.0
        frequency = {term: sum(1 for doc in docs if term in doc) for term in terms}
        scored = []
        for index, (record, doc) in enumerate(zip(records, docs, strict=True)):
            length = sum(doc.values())
            score = 0.0
            for term in terms:
                count = doc.get(term, 0)
                if not count:
                    continue
                idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
                norm = count + K1 * (1 - B + B * length / average)
                score += idf * count * (K1 + 1) / norm
            if score > 0:
                scored.append((-score, index, record))  # records come newest first
        scored.sort(key=lambda item: (item[0], item[1]))
        return [record for _, _, record in scored[:k]]


def session_recall_seam(
    seam: MemorySeam,
    layout: StoreLayout,
    *,
    exclude: str | None,
    now: Clock,
    scope: ScopeKey = AGENT,
    visible: tuple[ScopeKey, ...] = (AGENT,),
    volume: DocumentVolume | None = None,
) -> MemorySeam:
    """``seam`` with session summaries fused into its recall and written at teardown: this
    session's record is kept in ``scope``, and recall reads the records of ``visible`` keys."""
    index = SessionIndex(layout, now=now, volume=volume)
    base = seam.recall

    def fused(query: str, k: int) -> list[str]:
        facts = base(query, k) if base is not None else []
        found = index.recall(query, k, exclude=exclude, visible=visible)
        sessions = [summary.line() for summary in found]
        return [line for line, _ in reciprocal_rank_fusion([facts, sessions])][:k]

    def on_session_end(session_id: str, stop_reason: str, events: Iterable[Any]) -> None:
        index.record_session(session_id, stop_reason, events, scope)

    recall: Callable[[str, int], list[str]] | None = fused if seam.auto_recall else None
    return dataclasses.replace(seam, recall=recall, on_session_end=on_session_end)

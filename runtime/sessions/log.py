"""Session logs: one JSONL file per session, one event per line.

Every line is ``{"seq": n, "type": <kind>, "at": <ISO-8601 UTC>, "payload": {...}}``.
The log is the evidence the proof ladder and auto-capture read, so its event kinds are a contract:

- ``session_start``  {spec, target, model, ...}  (hosts add conversation, tenant, sessionKey,
  branch, branches, role, entry where they apply)
- ``context``        {blocks: [{kind, text}]}       what was injected into the prompt at start
- ``context_refresh`` {blocks}                       the continuity tail changed mid-session
- ``recall``         {query, count, lines, elapsedMs?, error?}  (elapsedMs: how long the
  recall took, in milliseconds; absent on a carried recall and on a failed one)
- ``memory_diagnostic`` {provider, backend, problem, turn}  a memory provider beside the
  primary failed or was late; recall went on without it (one per provider per turn)
- ``user_message``   {text, turn, synthetic?}     (synthetic: injected, not typed by a person)
- ``assistant_message`` {text, turn}
- ``tool_use``       {id, name, input}
- ``tool_result``    {toolUseId, name, isError, text}
- ``plan_update`` / ``goal_update`` / ``action_proof``  (emitted by continuity tools)
- ``context_evicted`` {role, text, turn}
- ``session_end``    {stopReason: complete|exit|abort, turns}

Every line the host writes is sealed: ``mac`` is an HMAC-SHA256 of the session id and the
event, keyed by a random key kept beside the logs (``sessions/.evidence.key``, created once,
never shown to the agent: the sandboxed shell cannot see the state folder and the file tools
refuse it). Readers skip a line whose seal does not verify, so a line appended by anything but
the host — a shell ``echo >>``, a copied line from another session, an edited payload — is
never evidence, never replayed into a prompt and never captured as a fact.

A log is UTF-8 JSON: text that came from undecodable bytes (a message with byte 0xFF, a file
name that is not UTF-8, a lone surrogate in a model's JSON) is written with U+FFFD in place of
each lone surrogate (``runtime.core.undecodable``), so sealing never fails on it and what a reader
parses back is exactly what was sealed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.core.undecodable import valid_data
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.fs.keyfile import key_in
from specwire.runtime.fs.safe_open import open_regular, open_regular_fd
from specwire.runtime.safety.redaction import redact_data

if TYPE_CHECKING:
    from specwire.runtime.sessions.store import LogSource


@lazy_methods_dataclass(frozen=True)
class Event:
    """One sealed line of a session log."""

    seq: int
    type: str
    at: str
    payload: dict[str, Any]


EVIDENCE_KEY_FILENAME = ".evidence.key"


def evidence_key(sessions_dir: Path, *, create: bool = False) -> bytes | None:
    """The key that seals this folder's logs; created (race-free) on first use when asked."""
    return key_in(sessions_dir / EVIDENCE_KEY_FILENAME, create=create)


def _seal(key: bytes, session_id: str, body: Mapping[str, Any]) -> str:
    message = session_id.encode("utf-8") + b"\n" + _canonical(body).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def seal(key: bytes, session_id: str, body: Mapping[str, Any]) -> str:
    """The ``mac`` of one event's body (``seq``, ``type``, ``at``, ``payload``) in a session;
    every backend seals the same way."""
    return _seal(key, session_id, body)


def event_body(seq: int, kind: str, at: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """What an append seals: the payload redacted and made valid Unicode, round-tripped
    through JSON so the seal covers exactly what a reader parses back."""
    body = {"seq": seq, "type": kind, "at": at, "payload": valid_data(redact_data(dict(payload)))}
    parsed: dict[str, Any] = json.loads(json.dumps(body, ensure_ascii=False))
    return parsed


def verified_event(body: Any, mac: Any, key: bytes, session_id: str) -> Event | None:
    """The event ``body`` is when ``mac`` seals it for ``session_id``, else None."""
    if not isinstance(body, dict) or not isinstance(mac, str):
        return None
    if not hmac.compare_digest(mac, _seal(key, session_id, body)):
        return None
    kind, payload, seq, at = body.get("type"), body.get("payload"), body.get("seq"), body.get("at")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        return None
    return Event(
        seq if isinstance(seq, int) and not isinstance(seq, bool) else 0,
        kind,
        at if isinstance(at, str) else "",
        payload,
    )


def _canonical(body: Mapping[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# Appends reach the file with one write(2) each, so a killed process never loses or tears an
# event the host wrote. Surviving a power cut needs an fsync; the log takes one at the end of
# each turn and of the session, which also covers every event written before it — an event
# per fsync made a turn spend most of its time waiting for the disk.
_SYNCED_KINDS = frozenset({"assistant_message", "session_end"})


class SessionLog:
    """Append-only JSONL writer for one session. Each append is sealed and written at once;
    the file is fsynced when a turn or the session ends."""

    def __init__(self, sessions_dir: Path, session_id: str, now: Clock = utc_now) -> None:
        self.session_id = session_id
        self.path = sessions_dir / f"{session_id}.jsonl"
        self._now = now
        sessions_dir.mkdir(parents=True, exist_ok=True)
        key = evidence_key(sessions_dir, create=True)
        assert key is not None
        self._key = key
        self._seq = sum(1 for _ in read_events(self.path)) if self.path.exists() else 0
        # A torn last line (a crash mid-write) must not swallow the next event.
        self._mend_torn_tail = _ends_mid_line(self.path)

    def append(self, kind: str, payload: Mapping[str, Any]) -> Event:
        self._seq += 1
        body = event_body(self._seq, kind, iso(self._now()), payload)
        event = Event(self._seq, kind, body["at"], body["payload"])
        line = json.dumps(
            {**body, "mac": _seal(self._key, self.session_id, body)},
            ensure_ascii=False,
            sort_keys=True,
        )
        data = (line + "\n").encode("utf-8")
        if self._mend_torn_tail:
            data = b"\n" + data
            self._mend_torn_tail = False
        fd = open_regular_fd(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, data)
            if kind in _SYNCED_KINDS:
                os.fsync(fd)
        finally:
            os.close(fd)
        return event

    def events(self) -> Iterator[Event]:
        """The host-sealed events of this session's log, as a reader sees them."""
        return read_events(self.path)


def _ends_mid_line(path: Path) -> bool:
    try:
        with open_regular(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            if size == 0:
                return False
            handle.seek(size - 1)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


def read_events(path: Path) -> Iterator[Event]:
    """Yield the host-written events of a log.

    A torn line, a foreign line or one whose seal does not verify is skipped, never half-read.
    The session id is the file's name; the key is the one beside it (no key: no events).
    """
    try:
        handle = open_regular(path)  # a FIFO here must not hang the agent
    except FileNotFoundError:
        return
    with handle:
        key = evidence_key(path.parent)
        if key is None:
            return
        events = _read_verified(handle, path, key)
    yield from events


@lazy_dataclass(frozen=True)
class _VerifiedPrefix:
    """The events of a log's first ``offset`` bytes (whole lines), already verified."""

    file: tuple[int, int]  # st_dev, st_ino
    key: bytes
    offset: int
    digest: bytes  # sha256 of those bytes: an edit in place is noticed, and read again
    events: tuple[Event, ...]


# Per-turn hosts reopen a conversation's log on every turn; parsing and verifying every seal of
# a long log again each time makes a conversation quadratic. Logs only grow, so a reader keeps
# what it verified and parses only the bytes appended since, after checking (one sha256, far
# cheaper than a seal per line) that the bytes it verified are still there unchanged. A log
# that shrank, was replaced, edited or is keyed differently is read again from the start.
# Bounded: the most recently read logs.
_PREFIX_LIMIT = 256
_prefixes: OrderedDict[str, _VerifiedPrefix] = OrderedDict()
_prefixes_lock = threading.Lock()


def _read_verified(handle: BinaryIO, path: Path, key: bytes) -> list[Event]:
    stat = os.fstat(handle.fileno())
    file = (stat.st_dev, stat.st_ino)
    name = str(path)
    with _prefixes_lock:
        known = _prefixes.get(name)
    hasher = hashlib.sha256()
    reusable = (
        known is not None
        and known.file == file
        and known.key == key
        and stat.st_size >= known.offset
        and _hash_prefix(handle, known.offset, hasher) == known.digest
    )
    if known is None or not reusable:
        known = _VerifiedPrefix(file, key, 0, b"", ())
        hasher = hashlib.sha256()
    events = list(known.events)
    handle.seek(known.offset)
    offset = known.offset
    last_whole = len(events)
    for raw_line in handle:
        event = _parse_line(raw_line, key, path.stem)
        if event is not None:
            events.append(event)
        if raw_line.endswith(b"\n"):  # a torn last line is read again next time
            offset += len(raw_line)
            last_whole = len(events)
            hasher.update(raw_line)
    if offset != known.offset:
        prefix = _VerifiedPrefix(file, key, offset, hasher.digest(), tuple(events[:last_whole]))
        with _prefixes_lock:
            _prefixes[name] = prefix
            _prefixes.move_to_end(name)
            while len(_prefixes) > _PREFIX_LIMIT:
                _prefixes.popitem(last=False)
    return events


def _hash_prefix(handle: BinaryIO, size: int, hasher: Any) -> bytes:
    """Feed the first ``size`` bytes of ``handle`` to ``hasher``; its digest."""
    handle.seek(0)
    remaining = size
    while remaining > 0:
        chunk = handle.read(min(remaining, 1 << 20))
        if not chunk:
            break
        hasher.update(chunk)
        remaining -= len(chunk)
    return bytes(hasher.digest())


def _parse_line(raw_line: bytes, key: bytes, session_id: str) -> Event | None:
    try:
        raw = json.loads(raw_line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(raw, dict):
        return None
    mac = raw.pop("mac", None)
    return verified_event(raw, mac, key, session_id)


def rewrite_log(path: Path, edit: Callable[[str], str]) -> int:
    """Apply ``edit`` to every string of every event in a log, in place; the lines it changes.

    For erasure: host-written lines are edited inside their JSON and sealed again (they stay
    evidence, with the text gone); any other line is edited as text. The file is replaced
    atomically, keeping every line's order and sequence number.
    """
    key = evidence_key(path.parent)
    try:
        with open_regular(path) as handle:
            lines = handle.read().split(b"\n")
    except FileNotFoundError:
        return 0
    changed = 0
    for index, raw in enumerate(lines):
        if not raw:
            continue
        event = _parse_line(raw, key, path.stem) if key is not None else None
        if event is None or key is None:
            text = raw.decode("utf-8", "surrogateescape")
            edited_text = edit(text)
            if edited_text != text:
                lines[index] = edited_text.encode("utf-8", "surrogateescape")
                changed += 1
            continue
        body = {"seq": event.seq, "type": event.type, "at": event.at, "payload": event.payload}
        edited = _edit_strings(body, edit)
        if edited == body:
            continue
        line = json.dumps(
            {**edited, "mac": _seal(key, path.stem, edited)}, ensure_ascii=False, sort_keys=True
        )
        lines[index] = line.encode("utf-8")
        changed += 1
    if changed:
        replace_atomically(path, b"\n".join(lines), mode=0o600)
    return changed


def edit_strings(value: Any, edit: Callable[[str], str]) -> Any:
    """``value`` (an event's body) with ``edit`` applied to every string in it."""
    return _edit_strings(value, edit)


def _edit_strings(value: Any, edit: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return edit(value)
    if isinstance(value, dict):
        return {key: _edit_strings(item, edit) for key, item in value.items()}
    if isinstance(value, list):
        return [_edit_strings(item, edit) for item in value]
    return value


def session_log_path(sessions_dir: Path, session_id: str) -> Path:
    return sessions_dir / f"{session_id}.jsonl"


Verdict = Literal["verified", "missing", "error_result"]


@lazy_dataclass(frozen=True)
class ToolUseResolution:
    """What a session log says about one tool call cited as evidence."""

    verdict: Verdict
    tool_name: str | None = None
    input: Any = None
    result_text: str | None = None
    session_id: str | None = None  # the log it was found in (the cited one or a sub-session)


def _events_in(source: LogSource, session_id: str) -> Iterator[Event]:
    if isinstance(source, Path):
        return read_events(session_log_path(source, session_id))
    return source.events(session_id)


def resolve_tool_use(source: LogSource, session_id: str, tool_use_id: str) -> ToolUseResolution:
    """Find a tool use and its result in a session log (and its child sessions, depth ≤ 8).
    ``source`` is a sessions folder or a reader of either backend
    (``runtime.sessions.store``).

    ``verified`` needs both a ``tool_use`` with ``payload.id`` and a ``tool_result`` with
    ``payload.toolUseId`` whose ``isError`` is not true.
    """
    queue: list[tuple[str, int]] = [(session_id, 0)]
    seen: set[str] = set()
    while queue:
        current, depth = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        use: Event | None = None
        result: Event | None = None
        for event in _events_in(source, current):
            if event.type == "tool_use" and event.payload.get("id") == tool_use_id:
                use = event
            elif event.type == "tool_result" and event.payload.get("toolUseId") == tool_use_id:
                result = event
            elif event.type == "sub_agent_start" and depth < 8:
                child = event.payload.get("childSessionId")
                if isinstance(child, str):
                    queue.append((child, depth + 1))
        if use is not None and result is not None:
            name = use.payload.get("name")
            text = result.payload.get("text")
            return ToolUseResolution(
                "error_result" if result.payload.get("isError") is True else "verified",
                name if isinstance(name, str) else None,
                use.payload.get("input"),
                text if isinstance(text, str) else None,
                current,
            )
    return ToolUseResolution("missing")


# Targets whose sessions form runs: a research run's branches, a crew's delegated sub-sessions.
RUN_TARGETS = frozenset({"research", "crew"})


def run_of(source: LogSource, session_id: str) -> str | None:
    """The run a session belongs to: its ``runId`` (a research branch, a crew sub-session), its
    own id for the root session of a research or crew run, None for any other session."""
    for event in _events_in(source, session_id):
        if event.type != "session_start":
            return None
        run = event.payload.get("runId")
        if isinstance(run, str) and run:
            return run
        return session_id if event.payload.get("target") in RUN_TARGETS else None
    return None

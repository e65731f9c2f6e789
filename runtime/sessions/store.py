"""Where a spec's session logs live, behind one small interface both backends implement.

``SessionLogs`` is what a host and the memory tiers are handed (dependency injection: the
composition root picks the backend): ``open(session_id)`` gives the writer for one session
(``SessionLog`` on files, ``PostgresSessionLog`` in the database), ``events(session_id)`` the
host-sealed events of a log, ``exists`` whether a log has any, and ``conversation_lock`` one
turn of a conversation at a time across every process serving it.

Readers that only read (the proof ladder, capture, history) take a ``LogSource``: a sessions
folder (the file layout, as before) or any ``SessionLogReader``; ``events_of`` reads either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

from specwire.runtime.sessions.log import Event


class SessionRecorder(Protocol):
    """The writer of one session's log: every append sealed, numbered 1..n."""

    @property
    def session_id(self) -> str: ...

    def append(self, kind: str, payload: Any) -> Event: ...

    def events(self) -> Iterator[Event]: ...


@runtime_checkable
class SessionLogReader(Protocol):
    """Reads the host-sealed events of a spec's session logs (a tenant's, in a managed host)."""

    def events(self, session_id: str) -> Iterator[Event]: ...

    def exists(self, session_id: str) -> bool: ...


class SessionLogs(SessionLogReader, Protocol):
    """A backend of session logs: readers, writers and the per-conversation turn lock."""

    def open(self, session_id: str) -> SessionRecorder: ...

    def conversation_lock(self, session_id: str, wait_s: float) -> AbstractContextManager[Any]: ...


# What a reader of logs is given: the sessions folder (files) or a reader of either backend.
LogSource: TypeAlias = "Path | SessionLogReader"


def events_of(source: LogSource, session_id: str) -> Iterator[Event]:
    """The host-sealed events of ``session_id``'s log in ``source``."""
    if isinstance(source, Path):
        from specwire.runtime.sessions.log import read_events, session_log_path

        return read_events(session_log_path(source, session_id))
    return source.events(session_id)


def log_exists(source: LogSource, session_id: str) -> bool:
    if isinstance(source, Path):
        from specwire.runtime.sessions.log import session_log_path

        return session_log_path(source, session_id).is_file()
    return source.exists(session_id)


class FileSessionLogs:
    """Session logs as JSONL files in one folder (the default layout), each conversation's
    turns ordered by a ``FileLock`` beside its log."""

    def __init__(self, sessions_dir: Path) -> None:
        self.sessions_dir = sessions_dir

    def open(self, session_id: str) -> SessionRecorder:
        from specwire.runtime.sessions.log import SessionLog

        return SessionLog(self.sessions_dir, session_id)

    def events(self, session_id: str) -> Iterator[Event]:
        return events_of(self.sessions_dir, session_id)

    def exists(self, session_id: str) -> bool:
        return log_exists(self.sessions_dir, session_id)

    def conversation_lock(self, session_id: str, wait_s: float) -> AbstractContextManager[Any]:
        from specwire.runtime.fs.locking import FileLock

        return FileLock(
            self.sessions_dir / f"{session_id}.lock",
            wait_s=wait_s,
            what=f"conversation {session_id}",
        )


class FallbackLogReader:
    """Reads a session's log from ``primary`` when it has it, else from ``fallback``: with
    ``memory.state: postgres`` every host writes its logs in the database (the per-turn hosts,
    the cli, a crew's delegated sessions, a research run's branches, a dream's session), while
    sessions logged before the spec moved its state there are files the proof ladder must still
    find."""

    def __init__(self, primary: SessionLogReader, fallback: SessionLogReader) -> None:
        self.primary = primary
        self.fallback = fallback

    def events(self, session_id: str) -> Iterator[Event]:
        # The primary's sealed events, not its rows: a forged row alone must not hide the
        # fallback's log.
        found = list(self.primary.events(session_id))
        return iter(found) if found else self.fallback.events(session_id)

    def exists(self, session_id: str) -> bool:
        return self.primary.exists(session_id) or self.fallback.exists(session_id)

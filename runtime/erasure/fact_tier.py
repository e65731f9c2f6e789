"""Erasing a subject from one fact store: rows gone, pages overwritten, indexes rebuilt.

A fact whose text or tags match is deleted with everything derived from it (its tombstone, its
vectors, its FTS entry); a held (quarantined) write that matches is deleted; a tombstone reason
that mentions the subject is redacted. These are the only deletions and edits the schema's
guards ever allow: they are lifted inside the one transaction and restored from their own SQL
before it commits. Afterwards the FTS index is rebuilt and merged (its old segments held the
words), and the file is vacuumed with ``secure_delete`` and its WAL truncated, so no freed page
keeps the text. The snapshots beside the file (``.lexical``, ``.vectors*``) are removed: they
are rebuilt from the rows on the next recall.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from specwire.runtime.erasure.subject import Subject
from specwire.runtime.facts.ownership import APPLICATION_ID

_GUARDS = (
    "facts_never_deleted",
    "facts_immutable",
    "facts_superseded_once",
    "tombstones_never_deleted",
    "tombstones_immutable",
)
SIDECAR_SUFFIXES = (".lexical", ".vectors")
BUSY_TIMEOUT_S = 10.0


def is_fact_store(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return False
    return (
        len(header) == 100
        and header.startswith(b"SQLite format 3\x00")
        and int.from_bytes(header[68:72], "big") == APPLICATION_ID
    )


def erase_from_store(path: Path, subject: Subject) -> dict[str, int]:
    """Erase ``subject`` from the store at ``path``; counts of what was removed, by kind."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        conn.create_function("erased", 1, lambda text: _matches(subject, text), deterministic=True)
        conn.create_function("redact", 1, lambda text: _redact(subject, text), deterministic=True)
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            counts = _erase_rows(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    counts["snapshots"] = remove_snapshots(path)
    return counts


def _erase_rows(conn: sqlite3.Connection) -> dict[str, int]:
    erased = [
        (int(seq), str(fact_id))
        for seq, fact_id in conn.execute(
            "SELECT seq, id FROM facts WHERE erased(text) OR erased(tags)"
        )
    ]
    counts = {"facts": len(erased), "quarantined": 0, "tombstoneReasons": 0, "vectors": 0}
    with _guards_lifted(conn):
        conn.execute("CREATE TEMP TABLE erased_ids (id TEXT PRIMARY KEY, seq INTEGER)")
        conn.executemany("INSERT INTO erased_ids (seq, id) VALUES (?, ?)", erased)
        counts["vectors"] = conn.execute(
            "DELETE FROM fact_vectors WHERE fact_seq IN (SELECT seq FROM erased_ids)"
        ).rowcount
        # What an erased fact had superseded stays dead, without a link to it.
        conn.execute(
            "UPDATE facts SET superseded_by = NULL "
            "WHERE superseded_by IN (SELECT id FROM erased_ids)"
        )
        conn.execute(
            "UPDATE tombstones SET kind = 'forgotten', superseded_by = NULL, "
            "reason = 'its replacement was erased' "
            "WHERE superseded_by IN (SELECT id FROM erased_ids)"
        )
        conn.execute("DELETE FROM tombstones WHERE target IN (SELECT id FROM erased_ids)")
        conn.execute("DELETE FROM facts_fts WHERE rowid IN (SELECT seq FROM erased_ids)")
        conn.execute("DELETE FROM facts WHERE id IN (SELECT id FROM erased_ids)")
        counts["tombstoneReasons"] = conn.execute(
            "UPDATE tombstones SET reason = redact(reason) WHERE erased(reason)"
        ).rowcount
        counts["quarantined"] = conn.execute(
            "DELETE FROM quarantine WHERE erased(text) OR erased(tags) OR erased(rule)"
        ).rowcount
        conn.execute("DELETE FROM released WHERE id IN (SELECT id FROM erased_ids)")
        conn.execute("DROP TABLE erased_ids")
    # The index's old segments still hold the erased words until it is rebuilt and merged.
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
    return counts


@contextmanager
def _guards_lifted(conn: sqlite3.Connection) -> Iterator[None]:
    marks = ", ".join("?" * len(_GUARDS))
    saved = conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})",
        _GUARDS,
    ).fetchall()
    for name, _ in saved:
        conn.execute(f'DROP TRIGGER "{name}"')
    yield
    for _, sql in saved:
        conn.execute(sql)


def remove_snapshots(path: Path) -> int:
    """Remove the index snapshots beside the store (``<db>.lexical``, ``<db>.vectors*``) and
    a snapshot's leftover temporary (``.<db>.….tmp``, from a writer killed mid-save)."""
    prefixes = tuple(path.name + suffix for suffix in SIDECAR_SUFFIXES)
    removed = 0
    for sidecar in sorted(path.parent.iterdir()):
        name = sidecar.name
        leftover = name.startswith(f".{path.name}.") and name.endswith(".tmp")
        if (name.startswith(prefixes) or leftover) and sidecar.is_file():
            sidecar.unlink(missing_ok=True)
            removed += 1
    return removed


def _matches(subject: Subject, text: object) -> bool:
    return isinstance(text, str) and subject.matches(text)


def _redact(subject: Subject, text: object) -> str | None:
    return subject.redact(text) if isinstance(text, str) else None

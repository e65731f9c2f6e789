"""Erasing a subject from one fact store: rows gone, pages overwritten, indexes rebuilt.

A fact whose text or tags match is deleted with everything derived from it (its tombstone, its
vectors, its FTS entry); a held (quarantined) write that matches is deleted; a tombstone reason
that mentions the subject is redacted. These are the only deletions and edits the schema's
guards ever allow: they are lifted inside the one transaction and restored from their own SQL
before it commits. Afterwards the FTS index is rebuilt and merged (its old segments held the
words), and the file is vacuumed with ``secure_delete`` and its WAL truncated, so no freed page
keeps the text. The snapshots beside the file (``.lexical``, ``.vectors*``) are removed: they
are rebuilt from the rows on the next recall.

Erasing one subject's scope key (``codegen memory erase --user ID``: a ``ScopeKey`` such as
``user:U123``) also deletes every fact, tier note and held write stored in that key, whatever
its text: the columns name the key as data (schema 5), so nothing is matched in text. Facts
whose scope key's subject or fact key holds the subject (a conversation keyed by the person, a
``peers/<slug>.md`` note about them) are deleted like those whose text does. A store from before
scopes has no such columns and no such facts: every fact in it is ``agent``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from specwire.runtime.core.scopes import ScopeKey
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


@dataclass
class StoreErasure:
    """What one store lost: counts by kind (``facts`` counts tier notes too, ``notes`` only
    them), and the facts, notes and held writes removed per scope (``user``, ``agent`` …:
    scope names only, never a subject)."""

    counts: dict[str, int]
    by_scope: dict[str, int] = field(default_factory=dict)


def erase_from_store(path: Path, subject: Subject, key: ScopeKey | None = None) -> StoreErasure:
    """Erase ``subject`` from the store at ``path`` and, with ``key``, everything stored in
    that scope key; what was removed, by kind and by scope."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        conn.create_function("erased", 1, lambda text: _matches(subject, text), deterministic=True)
        conn.create_function("redact", 1, lambda text: _redact(subject, text), deterministic=True)
        conn.create_function(
            "erased_key", 1, lambda text: _names_key(subject, text), deterministic=True
        )
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = _erase_rows(conn, key)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    done.counts["snapshots"] = remove_snapshots(path)
    return done


def _scoped(conn: sqlite3.Connection, table: str) -> bool:
    """Whether ``table`` records scope keys (schema 5 and later)."""
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    return {"scope", "subject", "fact_key", "tier"} <= columns


def _erased_where(
    conn: sqlite3.Connection, table: str, key: ScopeKey | None
) -> tuple[str, tuple[str, ...]]:
    """The condition selecting ``table``'s rows to delete: the subject in the text or tags, in
    the scope key's subject (a conversation keyed by the person) or the fact key (a
    ``peers/<slug>.md`` note), or stored in ``key``."""
    condition = "erased(text) OR erased(tags)"
    if table == "quarantine":
        condition += " OR erased(rule)"
    if not _scoped(conn, table):
        return condition, ()
    condition += " OR erased_key(subject) OR erased(fact_key)"
    if key is None or key.subject is None:
        return condition, ()
    return condition + " OR (scope = ? AND subject = ?)", (key.scope, key.subject)


def _erase_rows(conn: sqlite3.Connection, key: ScopeKey | None) -> StoreErasure:
    condition, params = _erased_where(conn, "facts", key)
    scope_columns = "scope, tier" if _scoped(conn, "facts") else "'agent', NULL"
    erased: list[tuple[int, str]] = []
    by_scope: dict[str, int] = {}
    notes = 0
    for seq, fact_id, scope, tier in conn.execute(
        f"SELECT seq, id, {scope_columns} FROM facts WHERE {condition}", params
    ):
        erased.append((int(seq), str(fact_id)))
        by_scope[str(scope)] = by_scope.get(str(scope), 0) + 1
        notes += tier is not None
    counts = {
        "facts": len(erased),
        "notes": notes,
        "quarantined": 0,
        "tombstoneReasons": 0,
        "vectors": 0,
    }
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
        held_condition, held_params = _erased_where(conn, "quarantine", key)
        held_scope = "scope" if _scoped(conn, "quarantine") else "'agent'"
        held = conn.execute(
            f"SELECT id, {held_scope} FROM quarantine WHERE {held_condition}", held_params
        ).fetchall()
        for _, scope in held:
            by_scope[str(scope)] = by_scope.get(str(scope), 0) + 1
        conn.executemany("DELETE FROM quarantine WHERE id = ?", [(row[0],) for row in held])
        counts["quarantined"] = len(held)
        conn.execute("DELETE FROM released WHERE id IN (SELECT id FROM erased_ids)")
        conn.execute("DROP TABLE erased_ids")
    # The index's old segments still hold the erased words until it is rebuilt and merged.
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
    return StoreErasure(counts, by_scope)


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


def _names_key(subject: Subject, text: object) -> bool:
    return isinstance(text, str) and subject.names_key(text)


def _redact(subject: Subject, text: object) -> str | None:
    return subject.redact(text) if isinstance(text, str) else None

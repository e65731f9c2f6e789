"""The fact store's SQLite schema and its migrations.

The file is marked as ours by ``PRAGMA application_id`` (``ownership.APPLICATION_ID``): a new
file is stamped before anything else happens to it, and ``migrate`` stamps a store an earlier
version created (no id) in its transaction. The schema version is ``PRAGMA user_version``.
``MIGRATIONS[v]`` upgrades a database from ``v - 1`` to ``v``; ``migrate`` runs every missing
step and stamps the version in one ``BEGIN IMMEDIATE`` transaction, so two processes opening a
fresh file never both create it and a failed step leaves the file at its old version.

Versions: 1 created the tables; 2 re-tokenized every fact's ``terms`` (and the FTS index) with the
Unicode tokenizer of ``runtime.facts.text`` (version 1 split on ``[^a-z0-9]+``, so non-ASCII text
was unsearchable or only matched through fragments); 3 added ``fact_vectors``, the embeddings of
hybrid recall (derived data: one row per fact and embedder, tagged with the embedder's id and
dimension, so vectors of two models are never mixed); 4 added ``quarantine``, the writes the
injection scanner flagged (``runtime.safety.injection``): held apart from ``facts`` so no recall
path, index or embedding can ever read them, until the owner releases or forgets them; and
``released``, the facts the owner released, which recall no longer screens; 5 added scopes
(``runtime.core.scopes``): every fact and held write records its scope key as data, ``scope``
and ``subject`` (NULL for ``agent`` and ``crew``), its ``fact_key`` (a keyed fact, replaced per
scope key) and ``tier`` (a Crewship tier note). Facts written before scopes became ``agent``
facts (the column's default): who could see them before, everyone talking to the agent, still
can; 6 allowed one edit of a live fact (``FactStore.update``, ``Capabilities.updates``): its
text, normalized text, terms and tags change and it moves to a new, higher ``seq`` in the same
transaction that writes its old version back under its old ``seq`` as a fact of its own (a new
id, superseded by the edited one, reason ``updated``). Every index (FTS5, the in-memory BM25 and
vector matrices) follows facts and tombstones by ``seq``, so an edit reaches each of them as an
append: the edited fact is new, its old version dies.

Invariants the schema itself enforces (a bug elsewhere cannot break them):
- facts are never deleted; an edit changes only a live fact's text, terms and tags and moves it
  to a higher ``seq`` (from version 6); otherwise the only update is setting ``superseded_by``
  once;
- tombstones are append-only, and a fact has at most one (it dies once);
- the FTS index holds exactly the facts without a tombstone (kept in sync by triggers).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.ownership import APPLICATION_ID
from specwire.runtime.facts.text import document_terms

SCHEMA_VERSION = 6

Migration = Callable[[sqlite3.Connection], None]

_ID_GLOB = "mem_" + "[0-9a-f]" * 16

_FACTS_IMMUTABLE = """CREATE TRIGGER facts_immutable BEFORE UPDATE OF
    seq, id, text, norm_text, terms, tags, created_at, expires_at, session_id, evidence
ON facts BEGIN
    SELECT RAISE(ABORT, 'facts are immutable: supersede them');
END;"""
# From version 5: the scope key, key and tier are as immutable as the text (a fact never moves).
_FACTS_IMMUTABLE_V5 = """CREATE TRIGGER facts_immutable BEFORE UPDATE OF
    seq, id, text, norm_text, terms, tags, created_at, expires_at, session_id, evidence,
    scope, subject, fact_key, tier
ON facts BEGIN
    SELECT RAISE(ABORT, 'facts are immutable: supersede them');
END;"""

_V1 = f"""
CREATE TABLE facts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE CHECK (id GLOB '{_ID_GLOB}'),
    text TEXT NOT NULL CHECK (length(trim(text)) > 0),
    norm_text TEXT NOT NULL,
    terms TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags) AND json_type(tags) = 'array'),
    created_at INTEGER NOT NULL,
    expires_at INTEGER CHECK (expires_at IS NULL OR expires_at > created_at),
    superseded_by TEXT REFERENCES facts(id),
    session_id TEXT,
    evidence TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(evidence) AND json_type(evidence) = 'array')
);
CREATE INDEX facts_norm_text ON facts(norm_text);
CREATE INDEX facts_expires_at ON facts(expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE tombstones (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('superseded', 'expired', 'forgotten')),
    target TEXT NOT NULL UNIQUE REFERENCES facts(id),
    at INTEGER NOT NULL,
    reason TEXT,
    superseded_by TEXT REFERENCES facts(id),
    CHECK ((kind = 'superseded') = (superseded_by IS NOT NULL))
);

CREATE VIRTUAL TABLE facts_fts USING fts5(terms, tokenize = 'ascii');

CREATE TRIGGER facts_index AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, terms) VALUES (new.seq, new.terms);
END;
CREATE TRIGGER tombstones_unindex AFTER INSERT ON tombstones BEGIN
    DELETE FROM facts_fts WHERE rowid = (SELECT seq FROM facts WHERE id = new.target);
END;

CREATE TRIGGER facts_never_deleted BEFORE DELETE ON facts BEGIN
    SELECT RAISE(ABORT, 'facts are never deleted: write a tombstone');
END;
{_FACTS_IMMUTABLE}
CREATE TRIGGER facts_superseded_once BEFORE UPDATE OF superseded_by ON facts
WHEN old.superseded_by IS NOT NULL OR new.superseded_by IS NULL BEGIN
    SELECT RAISE(ABORT, 'a fact is superseded at most once');
END;
CREATE TRIGGER tombstones_never_deleted BEFORE DELETE ON tombstones BEGIN
    SELECT RAISE(ABORT, 'tombstones are append-only');
END;
CREATE TRIGGER tombstones_immutable BEFORE UPDATE ON tombstones BEGIN
    SELECT RAISE(ABORT, 'tombstones are append-only');
END;
"""


def _create_v1(conn: sqlite3.Connection) -> None:
    for statement in _split_script(_V1):
        conn.execute(statement)


def _split_script(script: str) -> list[str]:
    """Split DDL into statements (``executescript`` would commit the open transaction)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in schema: {buffer.strip()[:60]}")
    return statements


def _retokenize(conn: sqlite3.Connection) -> None:
    """Recompute every fact's ``terms`` with the current tokenizer and rebuild the FTS index.

    ``terms`` is derived data (``document_terms(text, tags)``), so this is the one sanctioned
    edit of a fact: the immutability trigger is lifted for it and restored in the same
    transaction. The index again holds exactly the facts without a tombstone.
    """
    conn.execute("DROP TRIGGER facts_immutable")
    rows = conn.execute("SELECT seq, text, tags FROM facts ORDER BY seq").fetchall()
    for seq, text, tags in rows:
        conn.execute(
            "UPDATE facts SET terms = ? WHERE seq = ?",
            (document_terms(text, _json_tags(tags)), seq),
        )
    conn.execute(_FACTS_IMMUTABLE)
    conn.execute("DELETE FROM facts_fts")
    conn.execute(
        "INSERT INTO facts_fts(rowid, terms) SELECT f.seq, f.terms FROM facts f "
        "WHERE NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id) ORDER BY f.seq"
    )


def _json_tags(raw: object) -> list[str]:
    value = json.loads(raw) if isinstance(raw, str) else []
    return [tag for tag in value if isinstance(tag, str)] if isinstance(value, list) else []


_V3 = """
CREATE TABLE fact_vectors (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    fact_seq INTEGER NOT NULL REFERENCES facts(seq),
    embedder TEXT NOT NULL,
    dim INTEGER NOT NULL CHECK (dim > 0),
    vector BLOB NOT NULL CHECK (length(vector) = 4 * dim),
    UNIQUE (embedder, fact_seq)
);
"""


def _add_vectors(conn: sqlite3.Connection) -> None:
    for statement in _split_script(_V3):
        conn.execute(statement)


_V4 = f"""
CREATE TABLE quarantine (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE CHECK (id GLOB '{_ID_GLOB}'),
    text TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags) AND json_type(tags) = 'array'),
    created_at INTEGER NOT NULL,
    ttl_ms INTEGER CHECK (ttl_ms IS NULL OR ttl_ms > 0),
    session_id TEXT,
    evidence TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(evidence) AND json_type(evidence) = 'array'),
    rule TEXT NOT NULL,
    found_on TEXT NOT NULL CHECK (found_on IN ('write', 'read'))
);
CREATE TABLE released (
    id TEXT PRIMARY KEY,
    rule TEXT NOT NULL,
    at INTEGER NOT NULL
);
"""


def _add_quarantine(conn: sqlite3.Connection) -> None:
    for statement in _split_script(_V4):
        conn.execute(statement)


_SCOPES = "('user', 'conversation', 'role', 'agent', 'crew')"
_TIERS = "('AGENT', 'CREW', 'PERSONA', 'pins', 'daily', 'peers', 'lessons')"
_SCOPE_COLUMNS = f"""
ADD COLUMN scope TEXT NOT NULL DEFAULT 'agent' CHECK (scope IN {_SCOPES});
ADD COLUMN subject TEXT CHECK ((subject IS NULL) = (scope IN ('agent', 'crew')));
ADD COLUMN fact_key TEXT CHECK (fact_key IS NULL OR length(fact_key) > 0);
ADD COLUMN tier TEXT CHECK (tier IS NULL OR (fact_key IS NOT NULL AND tier IN {_TIERS}));
"""
_V5_INDEXES = """
CREATE INDEX facts_scope_key ON facts(scope, subject);
CREATE INDEX facts_keyed ON facts(fact_key, scope, subject) WHERE fact_key IS NOT NULL;
"""


def _add_scopes(conn: sqlite3.Connection) -> None:
    for table in ("facts", "quarantine"):
        for column in _SCOPE_COLUMNS.strip().splitlines():
            conn.execute(f"ALTER TABLE {table} {column.rstrip(';')}")
    for statement in _split_script(_V5_INDEXES):
        conn.execute(statement)
    conn.execute("DROP TRIGGER facts_immutable")
    conn.execute(_FACTS_IMMUTABLE_V5)


# From version 6: what identifies a fact and where it lives never changes; an edit
# (``facts_edited``) may change its text, terms and tags while it is live and moves it to a higher
# seq, which the FTS index follows (``facts_reindex``).
_FACTS_IMMUTABLE_V6 = """CREATE TRIGGER facts_immutable BEFORE UPDATE OF
    id, created_at, expires_at, session_id, evidence, scope, subject, fact_key, tier
ON facts BEGIN
    SELECT RAISE(ABORT, 'facts are immutable: supersede them');
END;"""
_V6 = """
CREATE TRIGGER facts_edited BEFORE UPDATE OF seq, text, norm_text, terms, tags ON facts
WHEN new.seq <= old.seq OR old.superseded_by IS NOT NULL
    OR EXISTS (SELECT 1 FROM tombstones t WHERE t.target = old.id)
BEGIN
    SELECT RAISE(ABORT, 'facts are immutable: only a live fact is edited, moved to a new seq');
END;
CREATE TRIGGER facts_reindex AFTER UPDATE OF seq ON facts BEGIN
    DELETE FROM facts_fts WHERE rowid = old.seq;
    INSERT INTO facts_fts(rowid, terms) VALUES (new.seq, new.terms);
END;
"""


def _allow_edits(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TRIGGER facts_immutable")
    conn.execute(_FACTS_IMMUTABLE_V6)
    for statement in _split_script(_V6):
        conn.execute(statement)


MIGRATIONS: Mapping[int, Migration] = {
    1: _create_v1,
    2: _retokenize,
    3: _add_vectors,
    4: _add_quarantine,
    5: _add_scopes,
    6: _allow_edits,
}


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def _stamp_ownership(conn: sqlite3.Connection) -> None:
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if application_id == 0:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    elif application_id != APPLICATION_ID:
        raise StoreError(
            f"not a specwire fact store (application_id {application_id:#x}); nothing was changed"
        )


def migrate(
    conn: sqlite3.Connection,
    migrations: Mapping[int, Migration] = MIGRATIONS,
    target: int = SCHEMA_VERSION,
) -> int:
    """Bring the database to ``target``; returns the version it was at before.

    ``conn`` must be in autocommit mode (``isolation_level=None``).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        _stamp_ownership(conn)
        current = schema_version(conn)
        if current > target:
            raise StoreError(
                f"the fact store has schema version {current}, newer than this runtime "
                f"supports ({target}); upgrade specwire"
            )
        for version in range(current + 1, target + 1):
            step = migrations.get(version)
            if step is None:
                raise StoreError(f"no migration to fact store schema version {version}")
            step(conn)
        if current != target:
            conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return current

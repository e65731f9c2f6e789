"""BM25 statistics (schema version 3) and postings (version 4) on PostgreSQL, kept in step
with the facts by triggers.

The local index (``runtime.facts.lexical.index``) ranks with the statistics of its *indexed*
rows: the facts without a tombstone (an expired fact counts until a sweep tombstones it, as in
FTS5). PostgreSQL keeps the same numbers per binding (tenant, spec, session):

- ``lexical_scopes``: ``docs`` (indexed facts) and ``tokens`` (their tokens: ``avgdl`` is
  ``tokens / docs``);
- ``lexical_terms``: per token, ``df`` (indexed facts holding it), and two bounds used to prune
  the ranking: ``max_tf`` (the highest count of the token in one fact) and ``min_len`` (the
  shortest fact holding it). The bounds only ever widen (a removal leaves them as they are),
  so they stay upper bounds of every contribution the token can make. A token no indexed fact
  holds any more loses its row (an erased fact's words do not stay behind as statistics).

- ``lexical_postings`` (version 4): per indexed fact and distinct token, the token's count in
  the fact (``tf``, at most 65535 as the local postings hold it), the fact's length (``dl``)
  and whether evidence backs it (``proven``), keyed by (``binding``, ``term``, ``proven``,
  ``dl``, ``seq``) with ``tf`` included in the key's index: ``bm25`` reads a term's shortest
  (and oldest) facts first and scores a fact from an index-only scan.
  ``binding`` is the binding's lock key below (a 64-bit hash; a collision only adds another
  binding's facts as candidates, which the ranking's scope test drops).

A fact's tokens are its ``terms`` column (``runtime.facts.text.document_terms``: tokens joined
by single spaces), split here exactly as the local index splits them.

Why triggers: every path that changes what is indexed — an insert (one, ``COPY``, a restore or
an import), a tombstone (forget, supersede, expiry sweep, quarantine on read, ``update()``'s old
version), an edit of ``terms`` (``update()``) and a deletion (erasure deletes tombstones, then
facts) — goes through a row of ``facts`` or ``tombstones``, so statement-level triggers with
transition tables change the statistics in the same transaction, whatever code path wrote the
row, once per statement (a ``COPY`` of 10,000 facts is one aggregate, not 10,000 updates).

Concurrency: the first statement of a transaction that changes a binding's statistics takes a
transaction-scoped advisory lock on that binding, so two writers of one binding never update
term rows in crossing orders (no deadlock between them); writers of different bindings never
wait for each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psycopg import Connection

# The token split, and the binding's advisory lock name (``chr(31)`` joins its parts).
_TOKENS = "string_to_array({terms}, ' ')"
_LOCK_KEY = (
    "hashtextextended('specwire-lexical' || chr(31) || {tenant} || chr(31) || {spec} "
    "|| chr(31) || {session}, 0)"
)
_ROW_KEY = _LOCK_KEY.format(tenant="d.tenant", spec="d.spec", session="d.session")
_LOCK = f"pg_advisory_xact_lock({_ROW_KEY})"

# Each fact's distinct tokens and their counts (``tf.term``, ``tf.n``), counted fact by fact
# (``d.tokens``): a small aggregate per fact instead of one over every (fact, token) pair of the
# statement, which spilled to disk with ``work_mem``'s default on a 10,000-fact ``COPY``.
_PER_TERM = """
        CROSS JOIN LATERAL (
            SELECT tok.term, count(*) AS n FROM unnest(d.tokens) AS tok(term) GROUP BY tok.term
        ) AS tf"""


def lock_binding(conn: Connection[Any], params: dict[str, Any]) -> None:
    """Take the binding's statistics lock now (the triggers' lock, until the transaction
    ends). A transaction that may wait for another's row after its first tombstone (a sweep,
    a quarantine on read) takes it first: otherwise it could hold the lock while waiting for
    a writer that waits for the lock."""
    key = _LOCK_KEY.format(
        tenant="%(tenant)s::text", spec="%(spec)s::text", session="%(session)s::text"
    )
    conn.execute(f"SELECT pg_advisory_xact_lock({key})", params)


def _apply(source: str, *, postings: bool) -> str:
    """Statements adding ``source``'s rows (tenant, spec, session, seq, terms, proven, sign) to
    the statistics (and, with ``postings``, to ``lexical_postings``): ``sign`` 1 indexes a
    fact, -1 unindexes it. ``source`` is read once per statement (transition tables can be):
    the lock first, then the upserts."""
    tokens = _TOKENS.format(terms="x.terms")
    return f"""
    PERFORM {_LOCK} FROM (
        SELECT DISTINCT x.tenant, x.spec, x.session FROM ({source}) AS x
        ORDER BY x.tenant, x.spec, x.session
    ) AS d;
    INSERT INTO lexical_scopes AS s (tenant, spec, session, docs, tokens)
        SELECT x.tenant, x.spec, x.session, sum(x.sign), sum(x.sign * cardinality({tokens}))
        FROM ({source}) AS x GROUP BY x.tenant, x.spec, x.session
        ORDER BY x.tenant, x.spec, x.session
    ON CONFLICT (tenant, spec, session) DO UPDATE
        SET docs = s.docs + EXCLUDED.docs, tokens = s.tokens + EXCLUDED.tokens;
    INSERT INTO lexical_terms AS t (tenant, spec, session, term, df, max_tf, min_len)
        SELECT d.tenant, d.spec, d.session, tf.term, sum(d.sign), max(tf.n), min(d.len)
        FROM (
            SELECT x.tenant, x.spec, x.session, x.sign, {tokens} AS tokens,
                cardinality({tokens}) AS len
            FROM ({source}) AS x OFFSET 0
        ) AS d{_PER_TERM}
        GROUP BY d.tenant, d.spec, d.session, tf.term
        ORDER BY d.tenant, d.spec, d.session, tf.term
    ON CONFLICT (tenant, spec, session, term) DO UPDATE
        SET df = t.df + EXCLUDED.df,
            max_tf = greatest(t.max_tf, EXCLUDED.max_tf),
            min_len = least(t.min_len, EXCLUDED.min_len);
    DELETE FROM lexical_terms t USING (
        SELECT DISTINCT x.tenant, x.spec, x.session, tok.term
        FROM ({source}) AS x, unnest({tokens}) AS tok(term) WHERE x.sign < 0
    ) AS d
    WHERE t.tenant = d.tenant AND t.spec = d.spec AND t.session = d.session
        AND t.term = d.term AND t.df <= 0;{_postings(source) if postings else ""}"""


def _postings(source: str) -> str:
    """``lexical_postings`` follows ``source``: an unindexed fact's rows go first (an edit
    removes the old version's rows, then adds the new one's)."""
    tokens = _TOKENS.format(terms="x.terms")
    binding = _LOCK_KEY.format(tenant="x.tenant", spec="x.spec", session="x.session")
    return f"""
    DELETE FROM lexical_postings p USING (
        SELECT DISTINCT {binding} AS binding, tok.term, x.proven,
            cardinality({tokens}) AS dl, x.seq
        FROM ({source}) AS x, unnest({tokens}) AS tok(term) WHERE x.sign < 0
    ) AS d
    WHERE p.binding = d.binding AND p.term = d.term AND p.proven = d.proven AND p.dl = d.dl
        AND p.seq = d.seq;
    INSERT INTO lexical_postings (binding, term, seq, tf, dl, proven)
        SELECT d.binding, tf.term, d.seq, least(tf.n, 65535), d.dl, d.proven
        FROM (
            SELECT {binding} AS binding, x.seq, x.proven, {tokens} AS tokens,
                cardinality({tokens}) AS dl
            FROM ({source}) AS x WHERE x.sign > 0 OFFSET 0
        ) AS d{_PER_TERM}
        ORDER BY d.binding, tf.term, d.proven, d.dl, d.seq;"""


def _not_tombstoned(alias: str) -> str:
    return f"NOT EXISTS (SELECT 1 FROM tombstones tb WHERE tb.target = {alias}.id)"


def _proven(alias: str) -> str:
    return f"cardinality({alias}.evidence) > 0 AS proven"


# An edit that changes what is indexed: the tokens, or whether the fact is backed by evidence
# (the postings hold that; nothing edits it today).
_changed = (
    "(a.terms IS DISTINCT FROM b.terms "
    "OR cardinality(a.evidence) > 0 IS DISTINCT FROM cardinality(b.evidence) > 0)"
)

# (trigger name, table, event, REFERENCING clause, rows to apply).
_TRIGGERS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "facts_added",
        "facts",
        "INSERT",
        "NEW TABLE AS added",
        "SELECT a.tenant, a.spec, a.session, a.seq, a.terms, " + _proven("a") + ", 1 AS sign "
        "FROM added a "
        f"WHERE {_not_tombstoned('a')}",
    ),
    (
        "facts_edited",
        "facts",
        "UPDATE",
        "OLD TABLE AS before NEW TABLE AS after",
        "SELECT b.tenant, b.spec, b.session, b.seq, b.terms, " + _proven("b") + ", -1 AS sign "
        f"FROM before b JOIN after a ON a.seq = b.seq WHERE {_changed} "
        f"AND {_not_tombstoned('a')} "
        "UNION ALL SELECT a.tenant, a.spec, a.session, a.seq, a.terms, " + _proven("a") + ", 1 "
        f"FROM after a JOIN before b ON a.seq = b.seq WHERE {_changed} "
        f"AND {_not_tombstoned('a')}",
    ),
    (
        "facts_deleted",
        "facts",
        "DELETE",
        "OLD TABLE AS gone",
        # A fact with a tombstone cannot be deleted (the tombstone references it).
        "SELECT g.tenant, g.spec, g.session, g.seq, g.terms, " + _proven("g") + ", -1 AS sign "
        "FROM gone g",
    ),
    (
        "tombstones_added",
        "tombstones",
        "INSERT",
        "NEW TABLE AS added",
        "SELECT f.tenant, f.spec, f.session, f.seq, f.terms, " + _proven("f") + ", -1 AS sign "
        "FROM added a "
        "JOIN facts f ON f.id = a.target",
    ),
    (
        "tombstones_deleted",
        "tombstones",
        "DELETE",
        "OLD TABLE AS gone",
        "SELECT f.tenant, f.spec, f.session, f.seq, f.terms, " + _proven("f") + ", 1 AS sign "
        "FROM gone g "
        "JOIN facts f ON f.id = g.target",
    ),
)


def _functions(*, postings: bool) -> tuple[str, ...]:
    """The trigger functions (version 4's keep ``lexical_postings`` too)."""
    return tuple(
        f"CREATE OR REPLACE FUNCTION specwire_lexical_{name}() RETURNS trigger "
        f"LANGUAGE plpgsql AS $body$\n"
        f"BEGIN{_apply(source, postings=postings)}\n    RETURN NULL;\nEND\n$body$"
        for name, _, _, _, source in _TRIGGERS
    )


def _trigger_statements() -> tuple[str, ...]:
    out: list[str] = list(_functions(postings=False))
    for name, table, event, referencing, _ in _TRIGGERS:
        function = f"specwire_lexical_{name}"
        out.append(
            f"CREATE TRIGGER {function} AFTER {event} ON {table} "
            f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
        )
    return tuple(out)


# A tombstone's target never changes (nothing updates it); a trigger makes that a rule, since
# the statistics follow tombstones by their target.
_FIXED_TARGET = (
    """CREATE FUNCTION specwire_tombstone_target_fixed() RETURNS trigger LANGUAGE plpgsql AS
    $body$
    BEGIN
        RAISE EXCEPTION 'a tombstone''s target cannot change';
    END
    $body$""",
    "CREATE TRIGGER specwire_tombstone_target_fixed BEFORE UPDATE OF target ON tombstones "
    "FOR EACH ROW WHEN (OLD.target IS DISTINCT FROM NEW.target) "
    "EXECUTE FUNCTION specwire_tombstone_target_fixed()",
)

_INDEXED = (
    "SELECT f.tenant, f.spec, f.session, f.seq, f.terms, "
    + _proven("f")
    + f", 1 AS sign FROM facts f WHERE {_not_tombstoned('f')}"
)

_BACKFILL = f"""DO $body$
BEGIN{_apply(_INDEXED, postings=False)}
END
$body$"""

_POSTINGS_BACKFILL = f"""DO $body$
BEGIN{_postings(_INDEXED)}
END
$body$"""

MIGRATION: tuple[str, ...] = (
    """CREATE TABLE lexical_scopes (
        tenant text NOT NULL,
        spec text NOT NULL,
        session text NOT NULL,
        docs bigint NOT NULL,
        tokens bigint NOT NULL,
        PRIMARY KEY (tenant, spec, session)
    )""",
    """CREATE TABLE lexical_terms (
        tenant text NOT NULL,
        spec text NOT NULL,
        session text NOT NULL,
        term text NOT NULL,
        df bigint NOT NULL,
        max_tf bigint NOT NULL,
        min_len bigint NOT NULL,
        PRIMARY KEY (tenant, spec, session, term)
    )""",
    *_trigger_statements(),
    *_FIXED_TARGET,
    # The facts written before this version, counted once (the migration's lock is held).
    _BACKFILL,
)

# Version 4: the postings (``bm25``'s exact ranking from an index-only scan), kept by the same
# triggers. ``binding`` is the binding's lock key (a 64-bit hash of tenant, spec and session):
# a collision only adds another binding's facts as candidates, which the ranking's scope test
# drops. The facts written before this version are posted once (the migration's lock is held).
POSTINGS_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE lexical_postings (
        binding bigint NOT NULL,
        term text NOT NULL,
        seq bigint NOT NULL,
        tf integer NOT NULL,
        dl integer NOT NULL,
        proven boolean NOT NULL,
        PRIMARY KEY (binding, term, proven, dl, seq) INCLUDE (tf)
    )""",
    *_functions(postings=True),
    _POSTINGS_BACKFILL,
)

# Version 5: the same trigger functions, their statements cheaper (each fact's tokens counted
# fact by fact, no fact text in a sort key): a database at version 4 gets them. What they write
# is unchanged.
FUNCTIONS_MIGRATION: tuple[str, ...] = _functions(postings=True)

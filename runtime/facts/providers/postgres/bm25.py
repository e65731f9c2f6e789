"""BM25 on PostgreSQL, ranked as the local index ranks (``runtime.facts.lexical``).

The statistics are the maintained ones (``term_stats``: per binding, indexed facts, their
tokens and each token's ``df``), the tokens are ``facts.terms`` split on spaces, and a fact's
score is computed in SQL with the local index's operations in its order: per query term, in
query order, ``idf * ((tf * (k1 + 1)) / (tf + k1 * ((1 - b) + (b * dl) / avgdl)))`` summed from
the first present term, times ``EVIDENCE_FACTOR`` for a fact backed by evidence; ``idf`` and the
constants come from ``lexical.ranking`` and are passed as parameters. Ties go to the older fact
(``seq``). The same facts give the same top k on both backends.

**Pruning: exact candidate generation by score thresholds.** Each query term has an upper bound
``ub`` on what it can add to any score: its contribution at the highest count of it in one fact
and at the shortest fact holding it (``max_tf``, ``min_len``; both only ever widen), times the
evidence factor, with a relative slack of 1e-9 for the summation order. A fact holding the terms
``T`` scores at most ``sum(ub(T))``. For a threshold ``tau``, every fact scoring ``>= tau``
holds one of the *minimal* term sets whose bounds add up to ``>= tau``, so the candidates are
the facts matching ``(t1 & t2 & ...) | ...`` over those sets (the GIN index intersects each
clause's postings, so a common term costs little when it only appears beside rarer ones). The
candidates are scored exactly; when ``k`` of them score ``>= tau`` they are the top ``k`` of all
facts (any other fact scores ``< tau``). Otherwise ``tau`` drops — to the ``k``-th score found,
which the next pass then certainly reaches, or to a quarter — until it is at most the smallest
bound, where the candidates are every fact holding any query term (the exhaustive ranking).
When the minimal sets are too many (a long query), the candidates are the facts holding one
of the *essential* terms instead (MaxScore: the terms left after taking, weakest first, the
terms whose bounds add up to less than ``tau``), which is exact for the same reason.

**Postings: queries of common words.** The full-text index knows nothing of a fact's length, so
when every query word is common (tens of thousands of facts at a million), no small term set
reaches a threshold and the passes drop to scoring every match: a heap fetch and a split of
``terms`` per fact. So when the query terms' ``df`` add up to ``postings_from`` or more, the
ranking starts from a *seed* (``_seed``): the shortest facts of each term (``SHORTEST_FIRST *
k``, in the postings' key order) and some facts holding all the query terms, all but the most
common, or the two rarest (``HOLDING_FIRST * k`` each), scored exactly (live and visible ones);
their ``k``-th, ``K``, is matched or beaten by each of the final top ``k``. It bounds which
postings of ``lexical_postings`` (``term_stats``; primary key (binding, term, ``proven``,
``dl``, ``seq``) including ``tf``) can hold a better fact (``_cut``), and those are read, at
most ``scored_at_most`` of them (one statement, ``_POSTED``); past that, ``K``'s score is the
first threshold of the passes above (its facts are candidates at it, so one pass usually ends
the ranking), and a pass may score at most ``scored_at_most`` facts; one that would score more
hands over to the postings.

Which postings (``_cut``, MaxScore over the postings): the terms are taken rarest first; a fact
is found through the first of them it holds, ``t``, so it holds only ``t`` and terms after it,
and its raw score is at most ``U_t(dl)``: the score of a fact of its length holding each of
those terms at ``max_tf``, computed with the SQL's floating-point operations in its order (they
are monotone, so the bound holds for the computed scores). It beats ``K`` only if that bound is
above ``K``'s score, or equal and the fact is older (proven: the bound times the evidence
factor reaches it); each is a range of the key by length (and age), per term: the rarest term
is read as deep as every term together allows, the most common only as deep as it alone
allows (often not at all). A candidate whose postings read, plus the terms whose range does
not cover it at ``max_tf``, cannot reach ``K`` is dropped (its bound, with the slack above);
the others' postings of those terms are looked up by key. The unbounded postings (after a pass
over budget, and a per-term try under ``WIDER`` times the budget) read every term as deep as
the rarest (``_uniform``: a fact read at all is read whole). The facts are scored with the
operations above in query order (a term a fact lacks adds ``0.0``), the ``depth`` best by
(score, ``seq``) looked up in ``facts`` and the live and visible ones kept; when fewer than
``k`` pass, ``depth`` grows (times 8) until every candidate was looked at. Exact: the postings
hold every indexed fact (a superset of the live ones), a fact left out cannot beat ``K``, and
the order and its ties are those of ``_RANKED``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specwire.runtime.facts.lexical.ranking import (
    EVIDENCE_FACTOR,
    K1,
    B,
    idf,
    length_norm,
    term_score,
)
from specwire.runtime.facts.providers.postgres.sql import (
    COLUMNS,
    LIVE,
    PROVEN,
    SCOPE,
    SCOPE_COLUMNS,
)

if TYPE_CHECKING:
    from psycopg import Connection

# The first threshold, as a share of the sum of the query terms' bounds.
FIRST_SHARE = 0.5
# A threshold's candidate condition names at most this many term sets.
MAX_CLAUSES = 24
# The query terms' ``df`` summed from which the ranking is seeded and a threshold pass has a
# budget (below it every match costs little), the budget (facts a pass scores from the heap,
# postings a first try reads: past it the postings rank, unbounded), and the first number of
# facts the postings path looks up.
POSTINGS_FROM = 20_000
SCORED_AT_MOST = 2_000
POSTINGS_DEPTH = 64
# Query terms held by at most this many facts have all their postings read (0: none; the
# others only those of facts short enough to reach the top k, ``_cut``), and the seed's
# shortest facts of each term, per result asked for.
POSTINGS_RARE = 0
SHORTEST_FIRST = 4
# Facts holding each of the seed's term sets (``_seed_sets``), per result asked for, and how
# many times ``scored_at_most`` postings a try after a pass over budget may read.
HOLDING_FIRST = 16
WIDER = 8
# Bounds are summed in another order than scores: kept on the safe side.
_SLACK = 1.0 + 1e-9

# One statement, so one snapshot: read in two, a write committed in between could pair a
# term's new ``df`` with the old number of facts (``df > docs``, a log of a negative number).
_WEIGHTS = """SELECT s.docs, s.tokens, t.term, t.df, t.max_tf, t.min_len
FROM lexical_scopes s LEFT JOIN lexical_terms t
    ON t.tenant = s.tenant AND t.spec = s.spec AND t.session = s.session
    AND t.term = ANY(%(terms)s::text[]) AND t.df > 0
WHERE s.tenant = %(tenant)s AND s.spec = %(spec)s AND s.session = %(session)s"""

# ``{score}``: the sum of the query terms' contributions (``_score``); ``{candidates}``: the
# threshold's condition on ``f.tsv``; ``{where}``: the caller's visible scope keys and tiers.
# ``OFFSET 0`` keeps each level a level of its own: inlined, the planner would split a fact's
# terms once per use instead of once. ``{counted}`` and ``{budget}``: empty, or (a pass with a
# budget) the number of candidates as a last column and a ``LIMIT`` on them.
_RANKED = f"""SELECT c.id, c.text, c.tags, c.expires_at, c.session_id, c.evidence,
    CASE WHEN c.proven THEN c.raw * %(ef)s::float8 ELSE c.raw END AS score,
    c.scope, c.subject, c.fact_key, c.tier{{counted}}
FROM (
    SELECT e.*, {{score}} AS raw
    FROM (
        SELECT d.*, {{tfs}}, %(k1)s::float8 * (%(omb)s::float8
            + (%(b)s::float8 * cardinality(d.tokens)::float8) / %(avgdl)s::float8) AS norm
        FROM (
            SELECT {COLUMNS}, {SCOPE_COLUMNS}, f.seq, {PROVEN} AS proven,
                string_to_array(f.terms, ' ') AS tokens
            FROM facts f WHERE ({{candidates}}) AND {LIVE} AND {{where}}
            OFFSET 0{{budget}}
        ) AS d
        OFFSET 0
    ) AS e
    OFFSET 0
) AS c
WHERE c.raw > 0
ORDER BY score DESC, c.seq LIMIT %(k)s"""


# The postings path (``term_stats``' ``lexical_postings``): the postings of the query terms in
# the binding that ``_cut`` leaves in, read from the primary key alone (index-only), scored per
# fact with the same operations as ``_RANKED`` (a term the fact lacks adds ``0.0``:
# ``coalesce``), the ``depth`` best by (score, seq) kept, and only those looked up in ``facts``
# for the live and visible ones.
_BINDING = (
    "hashtextextended('specwire-lexical' || chr(31) || %(tenant)s::text || chr(31) "
    "|| %(spec)s::text || chr(31) || %(session)s::text, 0)"
)
# Each query term's postings that can hold a fact beating the ``k``-th found (``_cut``): its
# unproven facts up to ``gt`` tokens, or up to ``ge`` and no younger than the k-th fact found
# (``kseq``); its proven ones up to ``pge`` tokens. Each test is a range of the primary key
# (binding, term, proven, dl, seq); ``u`` holds the term and its three lengths.
_COVERS = """(({a}.proven = false AND ({a}.dl <= u.gt
    OR ({a}.dl > u.gt AND {a}.dl <= u.ge AND {a}.seq <= %(kseq)s)))
    OR ({a}.proven = true AND {a}.dl <= u.pge))"""
_TERM_CUTS = (
    "unnest(%(terms)s::text[], %(gts)s::integer[], %(ges)s::integer[], %(pges)s::integer[], "
    "%(idfs)s::float8[], %(max_tfs)s::float8[]) AS u(term, gt, ge, pge, idf, max_tf)"
)
# A fact's length norm, and a term's contribution at ``tf`` (both as ``_RANKED`` computes them).
_NORM = "%(k1)s::float8 * (%(omb)s::float8 + (%(b)s::float8 * {a}.dl::float8) / %(avgdl)s::float8)"
_PART = "({a}.idf * (({tf} * %(k1p1)s::float8) / ({tf} + {norm})))"
_READ_PART = _PART.format(a="r", tf="r.tf::float8", norm=_NORM.format(a="r"))
_READ = " UNION ALL ".join(
    f"SELECT p.seq, p.term, p.proven, p.tf, p.dl FROM lexical_postings p "
    f"WHERE p.binding = {_BINDING} AND p.term = u.term AND {test}"
    for test in (
        "p.proven = false AND p.dl <= u.gt",
        "p.proven = false AND p.dl > u.gt AND p.dl <= u.ge AND p.seq <= %(kseq)s",
        "p.proven = true AND p.dl <= u.pge",
    )
)
# ``read``: every term's postings in its cut (the candidates are their facts), at most
# ``most`` - 1 of them (NULL: all). ``pairs``: each candidate with each term whose cut does not
# cover it (a term whose cut covers it has its posting in ``read``, when the fact holds it).
# ``alive``: the candidates whose postings read and those terms at ``max_tf`` (with a slack for
# the order of the sum) can still reach the k-th fact found, ``low`` (MaxScore: the others
# cannot beat it). ``fits``: all was read and the alive candidates' pairs are under ``most``
# (else nothing is scored: the caller ranks another way); each pair is a key lookup
# (``probed``).
_POSTED = f"""WITH read AS MATERIALIZED (
    SELECT p.*, u.idf FROM {_TERM_CUTS} CROSS JOIN LATERAL ({_READ}) AS p LIMIT %(most)s
), cands AS MATERIALIZED (
    SELECT r.seq, r.proven, r.dl, sum({_READ_PART}) AS part
    FROM read r GROUP BY r.seq, r.proven, r.dl
), pairs AS MATERIALIZED (
    SELECT c.seq, c.proven, c.dl, u.term,
        {_PART.format(a="u", tf="u.max_tf", norm=_NORM.format(a="c"))} AS bound
    FROM cands c, {_TERM_CUTS}
    WHERE NOT {_COVERS.format(a="c")}
), alive AS MATERIALIZED (
    SELECT c.seq, c.proven, c.dl FROM cands c
    LEFT JOIN (SELECT x.seq, sum(x.bound) AS bound FROM pairs x GROUP BY x.seq) AS x
        ON x.seq = c.seq
    WHERE (c.part + coalesce(x.bound, 0.0::float8))
        * CASE WHEN c.proven THEN %(ef)s::float8 ELSE 1.0::float8 END * %(slack)s::float8
        >= %(low)s::float8
), wanted AS MATERIALIZED (
    SELECT x.seq, x.proven, x.dl, x.term FROM pairs x WHERE x.seq IN (SELECT seq FROM alive)
), plan AS MATERIALIZED (
    SELECT (%(most)s::bigint IS NULL OR (n.got < %(most)s::bigint AND n.pairs < %(most)s::bigint))
        AS fits
    FROM (SELECT (SELECT count(*) FROM read) AS got, (SELECT count(*) FROM wanted) AS pairs) AS n
), probed AS MATERIALIZED (
    SELECT p.* FROM (SELECT * FROM wanted WHERE (SELECT fits FROM plan)) AS c
    CROSS JOIN LATERAL (
        SELECT p.seq, p.term, p.proven, p.tf, p.dl FROM lexical_postings p
        WHERE p.binding = {_BINDING} AND p.term = c.term AND p.proven = c.proven
            AND p.dl = c.dl AND p.seq = c.seq
        OFFSET 0
    ) AS p
"""
# The scoring of ``{source}``'s postings (``{gate}``: whether to), as ``_RANKED`` scores.
_SCORED = f"""scored AS MATERIALIZED (
    SELECT q.seq, CASE WHEN q.proven THEN q.raw * %(ef)s::float8 ELSE q.raw END AS score
    FROM (
        SELECT p.seq, bool_or(p.proven) AS proven, {{{{score}}}} AS raw
        FROM (
            SELECT p.seq, p.term, p.proven, p.tf::float8 AS tf, %(k1)s::float8 * (%(omb)s::float8
                + (%(b)s::float8 * p.dl::float8) / %(avgdl)s::float8) AS norm
            FROM ({{source}}) AS p
            WHERE {{gate}}
        ) AS p
        GROUP BY p.seq
    ) AS q
    ORDER BY score DESC, q.seq
    LIMIT %(depth)s
)
SELECT {COLUMNS}, s.score, {SCOPE_COLUMNS}
FROM scored s JOIN facts f ON f.seq = s.seq
WHERE {LIVE} AND {{{{where}}}}
ORDER BY s.score DESC, s.seq LIMIT %(k)s"""
_POSTED += "), " + _SCORED.format(
    source="""SELECT r.seq, r.term, r.proven, r.tf, r.dl FROM read r
                WHERE r.seq IN (SELECT seq FROM alive)
                UNION ALL SELECT * FROM probed""",
    gate="(SELECT fits FROM plan)",
)
# Every term read to the same lengths (``_uniform``): a fact read at all is read whole.
_POSTED_WHOLE = (
    f"WITH read AS MATERIALIZED (SELECT p.* FROM {_TERM_CUTS} CROSS JOIN LATERAL ({_READ}) AS p), "
    + _SCORED.format(source="SELECT r.seq, r.term, r.proven, r.tf, r.dl FROM read r", gate="TRUE")
)


# The shortest facts of each query term, by length then age (the postings' key order), and
# some facts holding each of a few sets of query terms (``_seed_sets``): the first candidates,
# whose k-th score bounds what every other candidate must reach.
_SHORTEST = f"""SELECT p.seq FROM unnest(%(terms)s::text[]) AS t(term), LATERAL (
    SELECT p.seq FROM lexical_postings p
    WHERE p.binding = {_BINDING} AND p.term = t.term
    ORDER BY p.proven, p.dl, p.seq LIMIT %(first)s
) AS p"""
_HOLDING = """SELECT f.seq FROM (
    SELECT f.seq FROM facts f
    WHERE f.tsv @@ to_tsquery('simple', %(every{n})s) AND {scope} LIMIT %(holding)s
) AS f"""


def _posted_score(count: int) -> str:
    """``_score`` over one fact's postings: each term's contribution, ``0.0`` when absent."""
    parts = [
        f"coalesce(max(CASE WHEN p.term = %(term{i})s::text THEN (%(idf{i})s::float8 "
        "* ((p.tf * %(k1p1)s::float8) / (p.tf + p.norm))) END), 0.0::float8)"
        for i in range(count)
    ]
    out = parts[0]
    for part in parts[1:]:
        out = f"({out} + {part})"
    return out


def _tfs(count: int) -> str:
    """Each query term's count in the fact (``tf0``, ``tf1``, ...), as local postings hold it."""
    return ", ".join(
        f"least(cardinality(array_positions(d.tokens, %(term{i})s::text)), 65535)::float8 AS tf{i}"
        for i in range(count)
    )


def _score(count: int) -> str:
    """The score of ``count`` query terms (``tf{i}`` and the parameter ``idf{i}``), summed in
    query order as the local index sums them. An absent term adds ``idf * 0 / norm``, ``0.0``,
    which changes no sum, so the expression needs no branch."""
    parts = [
        f"(%(idf{i})s::float8 * ((e.tf{i} * %(k1p1)s::float8) / (e.tf{i} + e.norm)))"
        for i in range(count)
    ]
    out = parts[0]
    for part in parts[1:]:
        out = f"({out} + {part})"
    return out


@dataclass(frozen=True)
class QueryTerm:
    term: str
    idf: float
    bound: float  # the most it adds to any fact's score
    df: int = 0  # indexed facts holding it
    max_tf: int = 1  # the highest count of it in one fact


def query_weights(
    conn: Connection[Any], params: dict[str, Any], terms: Sequence[str]
) -> tuple[list[QueryTerm], float] | None:
    """The query's terms held by some indexed fact (in query order) with their idf and bound,
    and ``avgdl``; None when nothing can match."""
    rows = conn.execute(_WEIGHTS, {**params, "terms": list(terms)}).fetchall()
    if not rows or int(rows[0][0]) <= 0 or int(rows[0][1]) <= 0:
        return None
    n, tokens = int(rows[0][0]), int(rows[0][1])
    avgdl = tokens / n
    found = {
        str(term): (int(df), int(max_tf), int(min_len))
        for _, _, term, df, max_tf, min_len in rows
        if term is not None
    }
    weighted: list[QueryTerm] = []
    for term in terms:
        if term not in found:
            continue
        df, max_tf, min_len = found[term]
        weight = idf(n, df)
        bound = term_score(weight, float(max_tf), length_norm(float(min_len), avgdl))
        weighted.append(QueryTerm(term, weight, bound * EVIDENCE_FACTOR * _SLACK, df, max_tf))
    return (weighted, avgdl) if weighted else None


def minimal_sets(terms: Sequence[QueryTerm], tau: float, cap: int) -> list[list[int]] | None:
    """The minimal sets of term positions whose bounds add up to at least ``tau`` (None when
    there are more than ``cap``)."""
    order = sorted(range(len(terms)), key=lambda i: (-terms[i].bound, i))
    bounds = [terms[i].bound for i in order]
    rest = [0.0] * (len(order) + 1)
    for at in range(len(order) - 1, -1, -1):
        rest[at] = rest[at + 1] + bounds[at]
    found: list[list[int]] = []

    def extend(chosen: list[int], start: int, total: float) -> bool:
        for at in range(start, len(order)):
            if total + rest[at] < tau:
                return True  # the remaining terms cannot reach tau
            if total + bounds[at] >= tau:
                # Minimal: without its weakest member (this one) the set is below tau.
                found.append([*chosen, order[at]])
                if len(found) > cap:
                    return False
            elif not extend([*chosen, order[at]], at + 1, total + bounds[at]):
                return False
        return True

    return found if extend([], 0, 0.0) else None


def essential(terms: Sequence[QueryTerm], tau: float) -> list[int]:
    """MaxScore's essential terms: all but the weakest whose bounds add up to less than tau."""
    order = sorted(range(len(terms)), key=lambda i: (terms[i].bound, i))
    total = 0.0
    for at, i in enumerate(order):
        if total + terms[i].bound >= tau:
            return sorted(order[at:])
        total += terms[i].bound
    return []


def ranked(
    conn: Connection[Any],
    params: dict[str, Any],
    terms: Sequence[str],
    limit: int,
    where: str,
    where_params: dict[str, Any],
    *,
    postings_from: int | None = POSTINGS_FROM,
    scored_at_most: int = SCORED_AT_MOST,
    postings_rare: int = POSTINGS_RARE,
) -> list[Any]:
    """The ``limit`` best live facts for ``terms`` admitted by ``where``: rows of ``COLUMNS``,
    the score and ``SCOPE_COLUMNS`` (a pass with a budget adds two columns), best first. By
    score thresholds; when the query terms' ``df`` add up to at least ``postings_from`` (None:
    never), from a seeded threshold, and from the postings when a pass would score more than
    ``scored_at_most`` facts (0: at once; ``postings_rare``: see ``_ranked_by_postings``)."""
    weighted = query_weights(conn, params, terms)
    if weighted is None:
        return []
    query, avgdl = weighted
    values = {
        **params,
        **where_params,
        **{f"term{i}": t.term for i, t in enumerate(query)},
        **{f"idf{i}": t.idf for i, t in enumerate(query)},
        "k1": K1,
        "k1p1": K1 + 1.0,
        "b": B,
        "omb": 1.0 - B,
        "avgdl": avgdl,
        "ef": EVIDENCE_FACTOR,
        "k": limit,
    }
    # Many facts hold the query terms: a pass may score at most ``scored_at_most`` of them,
    # the postings rank when one would score more.
    budgeted = postings_from is not None and sum(t.df for t in query) >= postings_from
    score, tfs = _score(len(query)), _tfs(len(query))
    statement = _RANKED.format(
        score=score,
        tfs=tfs,
        candidates="{candidates}",
        where=where,
        counted=", c.seq, count(*) OVER () AS candidates" if budgeted else "",
        budget=" LIMIT %(budget)s" if budgeted else "",
    )
    floor = min(t.bound for t in query)
    tau = FIRST_SHARE * sum(t.bound for t in query)
    seed: list[tuple[float, int]] = []
    if budgeted:
        # Live, visible facts likely near the top first (``_seed``): their k-th score bounds
        # which postings can hold a better fact (``_cut``); when those are few, they rank.
        # Else it is the first threshold: every fact of the top k reaches it, and the seed's
        # facts are candidates at it.
        seed = _seed(conn, values, query, limit, where)
        cut = _cut(values, query, limit, postings_rare, seed)
        if scored_at_most <= 0:
            return _ranked_by_postings(conn, values, query, limit, where, cut) or []
        ranking = _ranked_by_postings(conn, values, query, limit, where, cut, scored_at_most)
        if ranking is not None:
            return ranking
        if len(seed) == limit:
            tau = seed[-1][0]
    while True:
        exhaustive = tau <= floor
        condition, clause_params = _candidates(query, 0.0 if exhaustive else tau)
        rows = conn.execute(
            statement.replace("{candidates}", condition, 1),
            {**values, **clause_params, "budget": scored_at_most},
        ).fetchall()
        over = budgeted and bool(rows) and int(rows[0][-1]) >= scored_at_most
        if not over and (exhaustive or (len(rows) == limit and float(rows[-1][6]) >= tau)):
            return rows
        if budgeted:
            # The pass's rows are live, visible and exactly scored: with the seed, a k-th
            # fact for ``_cut`` when the pass was over budget (the postings rank), else the
            # next threshold (below ``tau``: fewer than k facts reach ``tau``, and all of
            # those were candidates of this pass).
            seed = _best([*seed, *((float(row[6]), int(row[11])) for row in rows)], limit)
            if over:
                # Per term under a larger budget first; past it every term as deep as the
                # rarest.
                cut = _cut(values, query, limit, postings_rare, seed)
                most = WIDER * scored_at_most
                ranking = _ranked_by_postings(conn, values, query, limit, where, cut, most)
                if ranking is None:
                    ranking = _ranked_by_postings(conn, values, query, limit, where, cut) or []
                return ranking
            if len(seed) == limit:
                tau = seed[-1][0]
                continue
        # The k-th score found is reached again by the next pass (its facts are candidates).
        tau = float(rows[-1][6]) if len(rows) == limit else tau / 4


def _best(found: Sequence[tuple[float, int]], limit: int) -> list[tuple[float, int]]:
    """The ``limit`` best of (score, seq) pairs of distinct facts, by score then age."""
    return sorted(set(found), key=lambda f: (-f[0], f[1]))[:limit]


def _seed_sets(query: Sequence[QueryTerm]) -> list[list[str]]:
    """Sets of query terms whose facts likely score high: all of them, all but the most
    common one, and the two rarest (as many as there are different ones)."""
    rarest = [query[i].term for i in sorted(range(len(query)), key=lambda i: (query[i].df, i))]
    sets = [rarest, rarest[:-1], rarest[:2]] if len(rarest) >= 2 else [rarest]
    return [list(chosen) for chosen in dict.fromkeys(tuple(chosen) for chosen in sets)]


def _seed(
    conn: Connection[Any],
    values: dict[str, Any],
    query: Sequence[QueryTerm],
    limit: int,
    where: str,
) -> list[tuple[float, int]]:
    """The ``limit`` best (score, seq) of some live, visible facts, exactly scored: the
    shortest facts of each term and some facts holding each of ``_seed_sets``."""
    sets = _seed_sets(query)
    gather = " UNION ".join(
        [_SHORTEST, *(_HOLDING.format(n=n, scope=SCOPE) for n in range(len(sets)))]
    )
    statement = _RANKED.format(
        score=_score(len(query)),
        tfs=_tfs(len(query)),
        candidates=f"f.seq = ANY(ARRAY({gather}))",
        where=where,
        counted=", c.seq",
        budget="",
    )
    rows = conn.execute(
        statement,
        {
            **values,
            "terms": [t.term for t in query],
            "first": SHORTEST_FIRST * limit,
            "holding": HOLDING_FIRST * limit,
            **{f"every{n}": _tsquery(chosen) for n, chosen in enumerate(sets)},
        },
    ).fetchall()
    return _best([(float(row[6]), int(row[11])) for row in rows], limit)


def _ranked_by_postings(
    conn: Connection[Any],
    values: dict[str, Any],
    query: Sequence[QueryTerm],
    limit: int,
    where: str,
    cut: dict[str, Any],
    most: int | None = None,
) -> list[Any] | None:
    """The ranking from the postings in ``cut`` (``_cut``): the ``depth`` best facts of the
    binding by exact score, then the live and visible ones among them; ``depth`` grows until
    ``limit`` pass or every posted fact was looked at (the postings hold every indexed fact: a
    fact outside the ``depth`` best scores below all of them, or ties and comes later). None
    when ``cut`` holds more than ``most`` postings (or, then, no fact passes)."""
    total = sum(t.df for t in query)  # at least the facts holding any query term
    depth = max(POSTINGS_DEPTH, 4 * limit)
    score = _posted_score(len(query))
    if most is None:
        # Unbounded: lookups or reads per term would cost more than reading every term as
        # deep as the rarest (the many candidates are what made the bounded try fail).
        cut = _uniform(cut)
        statement = _POSTED_WHOLE.format(score=score, where=where)
    else:
        statement = _POSTED.format(score=score, where=where)
    bounded = None if most is None else most + 1
    while True:
        rows = conn.execute(
            statement, {**values, **cut, "depth": depth, "most": bounded}
        ).fetchall()
        if not rows and bounded is not None:
            return None  # over ``most`` (or nothing passes: the caller's pass finds that)
        if len(rows) == limit or depth >= total:
            return rows
        depth, bounded = depth * 8, None  # it fits: the lookups stay under ``most``


def _uniform(cut: dict[str, Any]) -> dict[str, Any]:
    """``cut`` with each term read as deep as the deepest (the rarest term's): a superset."""
    terms = len(cut["terms"])
    return {
        **cut,
        **{name: [max(cut[name])] * terms for name in ("gts", "ges", "pges")},
    }


# A length no fact reaches (``dl`` is an integer column).
_NO_LIMIT = 2**31 - 1


def _cut(
    values: dict[str, Any],
    query: Sequence[QueryTerm],
    limit: int,
    postings_rare: int,
    seed: Sequence[tuple[float, int]],
) -> dict[str, Any]:
    """Per query term, which of its postings can hold a fact reaching the top ``limit``, as
    lengths for ``_COVERS`` (``gts``, ``ges``, ``pges``, and ``kseq``).

    ``seed`` holds live, visible, exactly scored facts: its ``limit``-th, ``K`` (score ``low``,
    ``seq`` ``kseq``), is matched or beaten by each of the final top ``limit`` (without ``K``:
    every posting is read). The terms are taken rarest first (``df``, then query order); a
    fact is found through the first of them it holds, ``t``, so it holds only ``t`` and terms
    after it, ``A(t)``, and has ``dl`` tokens: its raw score is at most ``U_t(dl)``, the score
    of a fact of that length holding each term of ``A(t)`` at its highest count in one fact
    (``max_tf``), with the operations and order of the SQL (floating-point addition,
    multiplication and division are monotone, so this bounds the computed scores, not only the
    exact ones). ``U_t`` never grows with ``dl``. An unproven fact beats ``K`` only if its
    score is above ``low``, or equal to it and the fact is older: ``U_t(dl) > low`` (``dl`` up
    to ``gt``), or ``U_t(dl) >= low`` (up to ``ge``) and ``seq <= kseq``; a proven one only if
    ``U_t(dl) * EVIDENCE_FACTOR >= low`` (up to ``pge``). The rarest term's bound covers every
    term; the most common one's only itself (often no length at all)."""
    terms = [t.term for t in query]
    every = {
        "terms": terms,
        "idfs": [t.idf for t in query],
        "max_tfs": [float(t.max_tf) for t in query],
        "kseq": 0,
        "low": 0.0,
        "slack": _SLACK,
    }
    if len(seed) < limit:
        no_cut = [_NO_LIMIT] * len(query)
        return {**every, "gts": no_cut, "ges": no_cut, "pges": no_cut}
    low, kseq = seed[limit - 1]
    avgdl = float(values["avgdl"])
    order = sorted(range(len(query)), key=lambda i: (query[i].df, i))
    gts, ges, pges = [_NO_LIMIT] * len(query), [_NO_LIMIT] * len(query), [_NO_LIMIT] * len(query)
    for at, i in enumerate(order):
        if query[i].df <= postings_rare:
            continue  # read whole
        after = set(order[at:])

        def upper(dl: int, after: set[int] = after) -> float:
            norm = length_norm(float(dl), avgdl)
            parts = [
                term_score(t.idf, float(t.max_tf), norm) if j in after else 0.0
                for j, t in enumerate(query)
            ]
            out = parts[0]
            for part in parts[1:]:
                out = out + part
            return out

        gts[i] = _last(lambda dl: upper(dl) > low)
        ges[i] = _last(lambda dl: upper(dl) >= low)
        pges[i] = _last(lambda dl: upper(dl) * EVIDENCE_FACTOR >= low)
    return {**every, "kseq": kseq, "low": low, "gts": gts, "ges": ges, "pges": pges}


def _last(holds: Callable[[int], bool]) -> int:
    """The largest length in ``[0, _NO_LIMIT]`` for which ``holds`` (true up to some length,
    false after it), or -1."""
    if not holds(0):
        return -1
    lo, hi = 0, 1
    while holds(hi):
        if hi >= _NO_LIMIT:
            return _NO_LIMIT
        lo, hi = hi, min(_NO_LIMIT, hi * 2)
    while hi - lo > 1:  # holds(lo) and not holds(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    return lo


def _candidates(query: Sequence[QueryTerm], tau: float) -> tuple[str, dict[str, Any]]:
    """A condition on ``f.tsv`` every fact scoring at least ``tau`` meets (see the module
    docstring), and its parameters."""
    sets = minimal_sets(query, tau, MAX_CLAUSES)
    if sets is None:
        sets = [[i] for i in essential(query, tau)]
    params = {
        f"clause{n}": _tsquery([query[i].term for i in sorted(chosen)])
        for n, chosen in enumerate(sets)
    }
    condition = " OR ".join(
        f"f.tsv @@ to_tsquery('simple', %(clause{n})s)" for n in range(len(sets))
    )
    return condition or "FALSE", params


def _tsquery(terms: Sequence[str]) -> str:
    """Every one of ``terms`` (tokens hold only letters, marks and digits; quoted anyway)."""
    return " & ".join("'" + term.replace("'", "''").replace("\\", "\\\\") + "'" for term in terms)

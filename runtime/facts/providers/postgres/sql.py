"""SQL fragments every PostgreSQL fact statement shares: the scope and liveness.

Two meanings of "scope" meet here: the provider's binding (``tenant``, ``spec``, ``session``:
``SCOPE``, in every statement) and a fact's memory scope key (``runtime.core.scopes``: the
``scope`` and ``subject`` columns, ``''`` for the subject of ``agent`` and ``crew``), which
``visible_clause`` filters on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from specwire.runtime.core.scopes import AGENT, CREW, ScopeKey

# Every statement names the provider's whole scope (tenant, spec, session) in its WHERE.
SCOPE = "f.tenant = %(tenant)s AND f.spec = %(spec)s AND f.session = %(session)s"
LIVE = f"""{SCOPE} AND f.superseded_by IS NULL
AND (f.expires_at IS NULL OR f.expires_at > %(now)s)
AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id AND t.tenant = %(tenant)s
    AND t.spec = %(spec)s AND t.session = %(session)s)"""
COLUMNS = "f.id, f.text, f.tags, f.expires_at, f.session_id, f.evidence"
# A fact's memory scope key, key and tier: selected after ``COLUMNS`` where a result needs them.
SCOPE_COLUMNS = "f.scope, f.subject, f.fact_key, f.tier"
PROVEN = "(cardinality(f.evidence) > 0)"
# The subject column of the keys without a subject (a real subject is never empty).
NO_SUBJECT = ""


def subject_of(key: ScopeKey) -> str:
    return NO_SUBJECT if key.subject is None else key.subject


def key_params(key: ScopeKey) -> dict[str, Any]:
    """A fact's own scope key as statement parameters (``fact_scope``, ``fact_subject``)."""
    return {"fact_scope": key.scope, "fact_subject": subject_of(key)}


# The fact is in the scope key ``key_params`` names.
IN_KEY = "f.scope = %(fact_scope)s AND f.subject = %(fact_subject)s"


def key_of(scope: str, subject: str) -> ScopeKey:
    """The ``ScopeKey`` a row's ``scope`` and ``subject`` columns hold."""
    if subject == NO_SUBJECT:
        if scope == "agent":
            return AGENT
        if scope == "crew":
            return CREW
    return ScopeKey(scope, subject or None)  # type: ignore[arg-type]  # the CHECK keeps it


def visible_clause(
    visible: Sequence[ScopeKey] | None, tiers: Sequence[str] | None = ()
) -> tuple[str, dict[str, Any]]:
    """A condition on ``f`` and its parameters: the fact's scope key is one of ``visible``
    (None: any) and its tier one of ``tiers`` (empty: plain facts, without a tier; None: any).

    One test per scope named (at most five, whatever the number of keys, so the statement's
    text and plan stay the same): ``agent`` and ``crew`` by the scope alone (the schema keeps
    their subject ''), a personal scope by its subjects as one array (``bench/scope_bench.py``
    measures it)."""
    parts: list[str] = []
    params: dict[str, Any] = {}
    if visible is not None:
        subjects: dict[str, list[str]] = {}
        for key in dict.fromkeys(visible):
            subjects.setdefault(key.scope, []).append(subject_of(key))
        tests = []
        for n, (scope, named) in enumerate(sorted(subjects.items())):
            params[f"vis_scope{n}"] = scope
            if named == [NO_SUBJECT]:
                tests.append(f"f.scope = %(vis_scope{n})s")
            else:
                params[f"vis_subjects{n}"] = named
                tests.append(
                    f"(f.scope = %(vis_scope{n})s AND f.subject = ANY(%(vis_subjects{n})s::text[]))"
                )
        parts.append("(" + (" OR ".join(tests) or "FALSE") + ")")
    if tiers is not None:
        if not tiers:
            parts.append("f.tier IS NULL")
        else:
            params["tiers"] = list(dict.fromkeys(tiers))
            parts.append("f.tier = ANY(%(tiers)s::text[])")
    return (" AND ".join(parts) or "TRUE"), params

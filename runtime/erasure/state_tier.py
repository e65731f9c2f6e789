"""Erasure in the state documents a PostgreSQL-state bundle keeps in the database
(``state_documents``: continuity, its trash, the wiki, dream state; every tenant and spec, or
one tenant's with ``tenant``).

The same edits as the file tier makes to the same files (``runtime.erasure.file_tier``): a
markdown or text document is redacted as text, a JSON one value by value, a hidden one or one
of another kind is left alone; the slugs holding the subject are renamed (a plan's
``plan-NNNN-<slug>.md``, an article's ``articles/<slug>.md`` and ``versions/<slug>/``),
numbered when taken. With a scope ``key`` the documents of that person's (or conversation's)
working memory go whole (continuity scope ``audience``: ``…/sessions/<user|conversation>-
<sha256>/…``), and so do the session summaries kept in that key (``sessions-index/<spec>/``,
``memory.sessionRecall``), as on files. Every changed row takes a new revision. One
transaction, then ``VACUUM FULL state_documents`` so the old texts leave the table's files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.paths import audience_folder
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.erasure.file_tier import _redact_text
from specwire.runtime.erasure.subject import Subject

if TYPE_CHECKING:
    from psycopg import Connection

TABLE = "state_documents"
CONNECT_TIMEOUT_S = 10
_TEXT_SUFFIXES = frozenset({".md", ".json", ".jsonl", ".yaml", ".yml", ".txt"})
_PLAN_FILE = re.compile(r"^(plan-\d+)-(.+)\.md$")


@dataclass(frozen=True)
class StateErasure:
    # Documents changed (text redacted, path renamed, or both), of them renamed.
    changed: int
    renamed: int
    # Documents whose text or path still holds the subject.
    remaining: int
    # Documents of the key's own working memory, deleted.
    dropped: int = 0


def erase_state_documents(
    dsn: str, subject: Subject, key: ScopeKey | None = None, tenant: str | None = None
) -> StateErasure:
    import psycopg

    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        if not _has_table(conn):
            return StateErasure(0, 0, 0)
        with conn.transaction():
            dropped = (
                0
                if key is None
                else _drop_person_continuity(conn, key, tenant)
                + _drop_session_records(conn, key, tenant)
            )
            changed, renamed = _redact(conn, subject, tenant)
    if changed or dropped:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            conn.execute(f"VACUUM FULL {TABLE}")
    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        left = len(_matching(conn, subject, tenant))
    return StateErasure(changed, renamed, left, dropped)


def _drop_person_continuity(conn: Connection[Any], key: ScopeKey, tenant: str | None) -> int:
    """``runtime.erasure.erase.drop_person_continuity`` in the database: every spec's
    documents of ``key``'s folder, its trash copies too, in every tenant or in ``tenant``."""
    if key.scope not in ("user", "conversation"):
        return 0
    marker = f"/sessions/{audience_folder(key)}/"
    where, params = ("", ()) if tenant is None else (" AND tenant = %s", (tenant,))
    deleted = conn.execute(
        f"DELETE FROM {TABLE} WHERE strpos(path, %s) > 0 AND strpos(path, 'state/') > 0{where}",
        (marker, *params),
    )
    return deleted.rowcount


def _drop_session_records(conn: Connection[Any], key: ScopeKey, tenant: str | None) -> int:
    """``runtime.erasure.erase.drop_session_records`` in the database: the session summaries
    (``sessions-index/<spec>/<sess_…>.json``) whose ``scope`` is ``key``'s, deleted whole (a
    redaction of the id would leave what the person said and remembered), in every tenant or
    in ``tenant``."""
    where, params = ("", ()) if tenant is None else (" AND tenant = %s", (tenant,))
    rows = conn.execute(
        f"SELECT tenant, spec, path, body FROM {TABLE} "
        f"WHERE strpos(path, 'sessions-index/') = 1{where}",
        params,
    ).fetchall()
    label = key.label()
    dropped = 0
    for row_tenant, spec, path, body in rows:
        if not path.endswith(".json"):
            continue
        try:
            record = json.loads(body)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("scope") == label:
            dropped += conn.execute(
                f"DELETE FROM {TABLE} WHERE tenant = %s AND spec = %s AND path = %s",
                (row_tenant, spec, path),
            ).rowcount
    return dropped


def _has_table(conn: Connection[Any]) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"public.{TABLE}",)).fetchone()
    return bool(row and row[0])


def _matching(
    conn: Connection[Any], subject: Subject, tenant: str | None
) -> list[tuple[str, str, str, str]]:
    found = []
    where, params = ("", ()) if tenant is None else (" WHERE tenant = %s", (tenant,))
    with conn.cursor(name="specwire_erasure_state") as cursor:
        cursor.itersize = 500
        cursor.execute(f"SELECT tenant, spec, path, body FROM {TABLE}{where}", params)
        for tenant, spec, path, body in cursor:
            if subject.matches(body) or subject.matches(path):
                found.append((tenant, spec, path, body))
    return found


def _redact(conn: Connection[Any], subject: Subject, only: str | None) -> tuple[int, int]:
    changed = renamed = 0
    for tenant, spec, path, body in _matching(conn, subject, only):
        name = PurePosixPath(path).name
        text = body
        if not name.startswith(".") and PurePosixPath(path).suffix in _TEXT_SUFFIXES:
            text = _redact_text(Path(path), body, subject)
        new_path = _free(conn, tenant, spec, path, _renamed(path, subject))
        if text == body and new_path == path:
            continue
        conn.execute(
            f"UPDATE {TABLE} SET body = %s, path = %s, "
            "revision = nextval('state_document_revisions'), updated_at = now() "
            "WHERE tenant = %s AND spec = %s AND path = %s",
            (text, new_path, tenant, spec, path),
        )
        changed += 1
        renamed += new_path != path
    return changed, renamed


def _renamed(path: str, subject: Subject) -> str:
    parts = path.split("/")
    for index, part in enumerate(parts):
        folder = parts[index - 1] if index else ""
        last = index == len(parts) - 1
        if folder == "plans" and last:
            plan = _PLAN_FILE.match(part)
            if plan is not None:
                parts[index] = f"{plan.group(1)}-{subject.redact_name(plan.group(2))}.md"
        elif folder == "articles" and last and part.endswith(".md"):
            parts[index] = subject.redact_name(part[: -len(".md")]) + ".md"
        elif folder == "versions" and not last:
            parts[index] = subject.redact_name(part)
    return "/".join(parts)


def _free(conn: Connection[Any], tenant: str, spec: str, old: str, new: str) -> str:
    if new == old:
        return old
    stem, dot, suffix = new.rpartition("/")[2].partition(".")
    base = new.rpartition("/")[0]
    candidate, number = new, 2
    while conn.execute(
        f"SELECT 1 FROM {TABLE} WHERE tenant = %s AND spec = %s AND path = %s",
        (tenant, spec, candidate),
    ).fetchone():
        candidate = f"{base}/{stem}-{number}{dot}{suffix}"
        number += 1
    return candidate

"""What the console reads and changes, through the owner's protocols and stores.

One ``ConsoleData`` serves one selection (root, spec, tenant), exactly as ``codegen memory``
with the same options would: facts through the backend's admin protocols
(``runtime.owner.backend``), held writes through ``QuarantineReader``, continuity, session
logs, the wiki and the dream state from that selection's state root and nothing else.
The backend stays open while the console runs, so the in-memory BM25 and vector indexes are
built once, not per page.

With ``--backend postgres`` (a bundle with ``memory.state: postgres``, the default for that
backend) continuity, the session logs, the wiki and the dream state are read from the database,
as the owner's verbs read them: the selected tenant's spec's documents (``PostgresVolume``,
``state_documents``) and session logs (``PostgresSessionLogs``, ``session_log_events``), on the
process's pool for the DSN. Eval runs stay files.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.dream.state import read_state
from specwire.runtime.embedders import load_embedder
from specwire.runtime.erasure.erase import ErasureReceipt, erase_subject, preview
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.erasure.tenants import tenant_problem, tenants_under
from specwire.runtime.evals.history import HISTORY_SUFFIX, read_history
from specwire.runtime.facts.explain import RankedFact, explain
from specwire.runtime.facts.model import Fact, FactStatus, QuarantinedFact
from specwire.runtime.facts.providers.admin import (
    EVERY_KEY,
    FactFilter,
    FactListing,
    FactPage,
    FactPager,
    QuarantineReader,
)
from specwire.runtime.facts.providers.protocol import RecallRequest
from specwire.runtime.owner.backend import OwnerFacts, open_backend
from specwire.runtime.owner.scoping import single_key, visible_keys
from specwire.runtime.owner.selection import Selection
from specwire.runtime.sessions.log import Event, read_events, session_log_path
from specwire.runtime.wiki.article import Article, check_slug
from specwire.runtime.wiki.store import WikiStore

if TYPE_CHECKING:
    from specwire.runtime.pg.volume import PostgresVolume
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

SESSION_ID_RE = re.compile(r"sess_[A-Za-z0-9_-]{1,64}")
PAGE_SIZE = 50
# Whose working memory the continuity page may show beside the tenant-wide one (a managed
# bundle's per-person folders).
PERSON_SCOPES = ("user", "conversation")
MAX_CHAIN = 64
MAX_SESSIONS_LISTED = 500
MAX_EVAL_FILES = 100
MAX_EVAL_BYTES = 4 << 20


class NotFound(LookupError):
    """What a page asked for is not in this console's memory."""


class Refused(ValueError):
    """A change the backend or the input does not allow (one line for the owner)."""


@dataclass(frozen=True)
class BackendOptions:
    """How to reach the facts: as ``codegen memory --backend``'s options."""

    backend: str = "file"
    dsn: str | None = None
    url: str | None = None
    token: str | None = None
    tenant: str | None = None
    embedder: str | None = None  # None: the one the store records; "none": BM25 only


@dataclass(frozen=True)
class FactsPage:
    statuses: list[FactStatus]
    held: list[QuarantinedFact]
    next_cursor: str | None


@dataclass(frozen=True)
class SearchHit:
    id: str
    text: str
    scope: ScopeKey
    tags: tuple[str, ...]
    rank: int
    score: float
    reasons: tuple[str, ...]
    explained: RankedFact | None


class ConsoleData:
    def __init__(self, selection: Selection, options: BackendOptions) -> None:
        self.selection = selection
        self.options = options
        self._lock = threading.RLock()
        self._stack: ExitStack | None = None
        self._facts: OwnerFacts | None = None
        self._database: tuple[PostgresVolume, PostgresSessionLogs] | None = None

    # -- the backend -----------------------------------------------------------------------

    def open(self) -> None:
        with self._lock:
            if self._facts is not None:
                return
            stack = ExitStack()
            facts = stack.enter_context(
                open_backend(
                    self.options.backend,
                    self.selection,
                    dsn=self.options.dsn,
                    url=self.options.url,
                    token=self.options.token,
                    tenant=self.options.tenant,
                )
            )
            store = facts.store
            if store is not None:
                embedder = self.options.embedder or store.recorded_embedder()
                if embedder is not None and embedder != "none":
                    store.use_embedder(load_embedder(embedder), log=lambda line: None)
            self._stack, self._facts = stack, facts

    def close(self) -> None:
        with self._lock:
            if self._stack is not None:
                self._stack.close()
            self._stack, self._facts = None, None

    @contextmanager
    def facts(self) -> Iterator[OwnerFacts]:
        self.open()
        assert self._facts is not None
        yield self._facts

    @property
    def where(self) -> str:
        tenant = f" · tenant {self.options.tenant}" if self.options.tenant else ""
        return f"{self.selection.layout.spec_name}{tenant} · {self.options.backend}"

    # -- facts -----------------------------------------------------------------------------

    def page(
        self,
        status: str,
        where: FactFilter,
        *,
        tag: str | None,
        text: str | None,
        cursor: str | None,
        limit: int = PAGE_SIZE,
    ) -> FactsPage:
        """One page of facts, newest first; ``status`` ``quarantined`` pages the held writes."""
        with self.facts() as facts:
            if status == "quarantined":
                held = [
                    item
                    for item in facts.quarantine("quarantine").quarantined(where)
                    if (tag is None or tag in item.tags)
                    and (text is None or text.casefold() in item.text.casefold())
                ]
                held.sort(key=lambda item: (item.created_at, item.id), reverse=True)
                start = 0
                if cursor is not None:
                    ids = [item.id for item in held]
                    start = ids.index(cursor) + 1 if cursor in ids else len(held)
                chunk = held[start : start + limit + 1]
                more = len(chunk) > limit
                return FactsPage([], chunk[:limit], chunk[limit - 1].id if more else None)
            if isinstance(facts.backend, FactPager):
                rows = facts.backend.page_facts(
                    FactPage(status=status, tag=tag, text=text, before=cursor, limit=limit + 1),  # type: ignore[arg-type]
                    where,
                )
            else:
                rows = self._page_by_offset(facts, status, where, tag, text, cursor, limit)
        more = len(rows) > limit
        rows = rows[:limit]
        return FactsPage(rows, [], rows[-1].fact.id if more and rows else None)

    @staticmethod
    def _page_by_offset(
        facts: OwnerFacts,
        status: str,
        where: FactFilter,
        tag: str | None,
        text: str | None,
        cursor: str | None,
        limit: int,
    ) -> list[FactStatus]:
        """A backend without keyset paging: its oldest-first listing, newest page first."""
        every = facts.lister("list").list_facts(
            FactListing(status=status, tag=tag, text=text),  # type: ignore[arg-type]
            where,
        )
        every.reverse()
        start = 0
        if cursor is not None:
            ids = [status.fact.id for status in every]
            start = ids.index(cursor) + 1 if cursor in ids else len(every)
        return every[start : start + limit + 1]

    def fact(self, fact_id: str) -> FactStatus | QuarantinedFact:
        with self.facts() as facts:
            try:
                status = facts.lister("show").get_fact(fact_id)
            except StoreError:
                status = None
            if status is not None:
                return status
            if isinstance(facts.backend, QuarantineReader):
                try:
                    held = facts.backend.quarantined_by_id(fact_id)
                except StoreError:
                    held = None
                if held is not None:
                    return held
        raise NotFound(f"no fact {fact_id}")

    def chain(self, status: FactStatus) -> list[FactStatus]:
        """The facts that replaced this one, in order (the supersede chain, forward)."""
        found: list[FactStatus] = []
        seen = {status.fact.id}
        current: FactStatus | None = status
        with self.facts() as facts:
            lister = facts.lister("show")
            while current is not None and len(found) < MAX_CHAIN:
                after = current.fact.superseded_by or (
                    current.tombstone.superseded_by if current.tombstone is not None else None
                )
                if after is None or after in seen:
                    break
                seen.add(after)
                current = lister.get_fact(after)
                if current is not None:
                    found.append(current)
        return found

    def search(self, query: str, where: FactFilter, k: int) -> list[SearchHit]:
        """Recall ``query`` as the agent does; on the file store with each hit's reasons."""
        with self.facts() as facts:
            store = facts.store
            if store is not None:
                keys = None if where.everything else self._keys(facts, where)
                if keys == ():
                    return []
                return [
                    SearchHit(
                        ranked.fact.id,
                        ranked.fact.text,
                        ranked.fact.scope,
                        ranked.fact.tags,
                        ranked.rank,
                        ranked.score,
                        ranked.reasons(),
                        ranked,
                    )
                    for ranked in explain(store, query, k, keys)
                ]
            keys = self._keys(facts, where)
            if not keys:
                return []
            hits = facts.provider.recall(RecallRequest(query, k, visible=keys)).hits
        return [
            SearchHit(
                hit.id,
                hit.text,
                hit.scope,
                hit.tags,
                rank,
                hit.score,
                hit.reasons or (f"{facts.name} score {hit.score:.4g}",),
                None,
            )
            for rank, hit in enumerate(hits, start=1)
        ]

    @staticmethod
    def _keys(facts: OwnerFacts, where: FactFilter) -> tuple[ScopeKey, ...]:
        """The scope keys a search covers: the one ``where`` names, else those of the live
        facts it admits (as ``codegen memory search`` does)."""
        named = single_key(where)
        if named is not None:
            return (named,)
        live = facts.lister("search").list_facts(FactListing(status="live"), where)
        return visible_keys(where, (status.fact.scope for status in live))

    # -- quarantine ------------------------------------------------------------------------

    def held(self, fact_id: str) -> QuarantinedFact:
        with self.facts() as facts:
            found = facts.quarantine("quarantine").quarantined_by_id(fact_id)
        if found is None:
            raise NotFound(f"no quarantined write {fact_id}")
        return found

    def release(self, fact_id: str) -> Fact:
        with self.facts() as facts:
            if facts.store is None:
                raise Refused(f"release works on the file store only, not {facts.where}")
            try:
                return facts.store.release(fact_id)
            except StoreError as exc:
                raise Refused(str(exc)) from None

    def delete_held(self, fact_id: str) -> None:
        with self.facts() as facts:
            if facts.store is None:
                raise Refused(
                    f"deleting a held write works on the file store only, not {facts.where}"
                )
            if not facts.store.drop_quarantined(fact_id):
                raise NotFound(f"no quarantined write {fact_id}")

    # -- erasure ---------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self.selection.layout.root

    def erase_tenants(self, key: ScopeKey | None) -> list[str]:
        """The tenants an erasure here covers: the console's ``--tenant``, else every tenant
        under its state root. ``Refused`` for a user's or conversation's id over several
        tenants (ids are per tenant: ``runtime.erasure.tenants``): the console erases one
        tenant's person, never every tenant's namesake."""
        tenant = self.options.tenant
        tenants = [tenant] if tenant is not None else tenants_under(self.root)
        problem = tenant_problem(
            key,
            tenants,
            tenant=tenant,
            all_tenants=False,
            remedy="open the console with --tenant ID (every tenant's: `codegen memory erase "
            "--all-tenants`); nothing was erased",
        )
        if problem is not None:
            raise Refused(problem)
        return tenants

    def erase_preview(self, subject: Subject, key: ScopeKey | None = None) -> dict[str, int]:
        self.erase_tenants(key)
        return dict(sorted(preview(self.root, subject).hits.items()))

    def erase(self, subject: Subject, key: ScopeKey | None) -> ErasureReceipt:
        """Erase the subject under this console's state root; the fact store is closed
        around it (erasure rewrites the file) and opened again after. Refused when the facts
        are elsewhere: erasing the files alone would leave them there under a clean receipt."""
        if self.options.backend != "file":
            raise Refused(
                f"erasure here reaches the files under {self.root} only, and the facts are in "
                f"{self.options.backend}: run `codegen memory erase` (with --postgres VAR for "
                "PostgreSQL; a memory service's owner erases there)"
            )
        tenants = self.erase_tenants(key)
        with self._lock:
            self.close()
            try:
                return erase_subject(self.root, subject, key=key, tenants=tenants)
            finally:
                self.open()

    # -- state in the database -------------------------------------------------------------

    def _state_in_database(self) -> tuple[PostgresVolume, PostgresSessionLogs] | None:
        """The selected tenant's spec's documents and session logs in PostgreSQL with
        ``--backend postgres``; None when the state is files under the root."""
        if self.options.backend != "postgres":
            return None
        with self._lock:
            if self._database is None:
                from specwire.runtime.core.fragment_data import FactsData
                from specwire.runtime.facts.providers.connect import (
                    DEFAULT_TENANT,
                    shared_postgres_pool,
                )
                from specwire.runtime.pg.volume import PostgresVolume
                from specwire.runtime.sessions.postgres import PostgresSessionLogs

                pool = shared_postgres_pool(FactsData(backend="postgres", dsn=self.options.dsn))
                layout = self.selection.layout
                tenant = self.options.tenant if self.options.tenant is not None else DEFAULT_TENANT
                self._database = (
                    PostgresVolume(pool, layout.root, tenant=tenant, spec=layout.spec_name),
                    PostgresSessionLogs(pool, tenant=tenant, spec=layout.spec_name),
                )
            return self._database

    def _volume(self) -> PostgresVolume | None:
        database = self._state_in_database()
        return database[0] if database is not None else None

    # -- continuity ------------------------------------------------------------------------

    def continuity(self, person: ScopeKey | None = None) -> ContinuityStore:
        """The selected working memory: the console's ``--session`` conversation's, or with
        ``person`` (a user's or an anonymous conversation's key) that one person's folder of a
        managed bundle (continuity scope ``audience``: named by the key's SHA-256, so no id
        reaches another's), else the tenant-wide folder. On files or in PostgreSQL alike."""
        layout = self.selection.layout
        session = self.selection.session
        if person is not None and person.scope not in PERSON_SCOPES:
            raise Refused(f"whose working memory: a user or a conversation, not {person.scope}")
        if person is not None and session is not None:
            raise Refused(
                "this console shows the --session conversation's working memory: open it "
                "without --session to show one person's"
            )
        scope_dir = (
            layout.session_state_dir(session)
            if session is not None
            else layout.audience_state_dir(person)
            if person is not None
            else None
        )
        return ContinuityStore(layout, scope_dir=scope_dir, volume=self._volume())

    # -- sessions --------------------------------------------------------------------------

    @property
    def sessions_dir(self) -> Path:
        return self.selection.layout.sessions_dir

    def sessions(self) -> list[tuple[str, int, float]]:
        """(session id, bytes, modified) of the logs, newest first."""
        database = self._state_in_database()
        if database is not None:
            return [
                (session, size, _epoch(last))
                for session, size, last in database[1].summaries(MAX_SESSIONS_LISTED)
            ]
        if not self.sessions_dir.is_dir():
            return []
        found = []
        for path in self.sessions_dir.glob("sess_*.jsonl"):
            if not path.is_file() or path.is_symlink():
                continue
            stat = path.stat()
            found.append((path.stem, stat.st_size, stat.st_mtime))
        found.sort(key=lambda item: (-item[2], item[0]))
        return found[:MAX_SESSIONS_LISTED]

    def session_events(self, session_id: str) -> list[Event]:
        if not SESSION_ID_RE.fullmatch(session_id):
            raise NotFound("not a session id")
        database = self._state_in_database()
        if database is not None:
            logs = database[1]
            events = list(logs.events(session_id))
            if not events and not logs.exists(session_id):
                raise NotFound(f"no session log {session_id}")
            return events
        path = session_log_path(self.sessions_dir, session_id)
        if not path.is_file():
            raise NotFound(f"no session log {session_id}")
        return list(read_events(path))

    def writing_call(self, fact: Fact) -> str | None:
        """The tool call (its id) in the fact's session that wrote it: the one whose result
        names the fact's id."""
        session = fact.provenance.session_id
        if session is None or not SESSION_ID_RE.fullmatch(session):
            return None
        try:
            events = self.session_events(session)
        except NotFound:
            return None
        for event in events:
            if event.type == "tool_result" and fact.id in str(event.payload.get("text", "")):
                use = event.payload.get("toolUseId")
                return use if isinstance(use, str) else None
        return None

    # -- wiki ------------------------------------------------------------------------------

    def wiki(self) -> WikiStore:
        return WikiStore(self.selection.layout, volume=self._volume())

    def articles(self) -> list[Article]:
        snap = self.wiki().snapshot()
        return [snap.articles[slug] for slug in sorted(snap.articles)]

    def article(self, slug: str, version: int | None = None) -> Article:
        try:
            check_slug(slug)
            store = self.wiki()
            found = store.get(slug)
            if version is not None and (found is None or found.version != version):
                found = store.get_version(slug, version)
        except StoreError as exc:
            raise NotFound(str(exc)) from None
        if found is None:
            raise NotFound(f"no article {slug}")
        return found

    # -- evals and dream -------------------------------------------------------------------

    def dream_state(self) -> dict[str, Any] | None:
        try:
            return read_state(self.selection.layout, self._volume())
        except StoreError:
            return None

    def eval_runs(self, folder: Path | None) -> list[tuple[str, dict[str, Any]]]:
        """The eval runs in ``folder`` (default: ``<state>/evals``), oldest first: the records
        of each ``*.history.jsonl`` (``codegen eval --html``'s history), then each ``*.json``
        (``codegen eval --json`` output) by name. A file that is neither is left out."""
        base = folder if folder is not None else self.root / "evals"
        if not base.is_dir():
            return []
        runs: list[tuple[str, dict[str, Any]]] = []
        for path in sorted(base.glob("*" + HISTORY_SUFFIX))[:MAX_EVAL_FILES]:
            if _readable(path):
                name = path.name.removesuffix(HISTORY_SUFFIX)
                runs += [
                    (f"{name} {record.get('at', '')}", record) for record in read_history(path)
                ]
        for path in sorted(base.glob("*.json"))[:MAX_EVAL_FILES]:
            if not _readable(path):
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            if isinstance(data, dict) and isinstance(data.get("results"), list):
                runs.append((path.stem, data))
        return runs


def _epoch(at: str) -> float:
    """A logged event's time (ISO 8601) in seconds since the epoch; 0 when it is not one."""
    try:
        return datetime.fromisoformat(at).timestamp()
    except ValueError:
        return 0.0


def _readable(path: Path) -> bool:
    return path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_EVAL_BYTES


def filter_of(scope: str | None, subject: str | None) -> FactFilter:
    """The scope filter a page's query names (``EVERY_KEY`` without one)."""
    if not scope and not subject:
        return EVERY_KEY
    return FactFilter(scopes=(scope,) if scope else None, subject=subject or None)  # type: ignore[arg-type]

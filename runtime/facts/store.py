"""``FactStore``: episodic facts in one SQLite file (WAL, FTS5), never silently deleted.

The store composes one module per concern: ``lifecycle`` (the file: lazy creation, ownership
check, WAL, the shared connection, transactions), ``validation`` (the rules every input obeys,
whoever calls), ``queries`` (the SQL and its row mapping), ``schema`` (DDL and migrations) and
``lexical_recall`` (the in-memory BM25 index recall ranks through, kept in step with the rows
and saved beside the file at close; built, and numpy loaded, only when a store of at least
``FactsTuning.lexical_index_from`` facts first recalls: a smaller one ranks through FTS5).
Each operation validates its input first, then runs its statements in one read or one
transaction. Facts are never deleted: forgetting, superseding and expiring write tombstones.

Every write is screened by the injection scanner (``runtime.safety.injection``): a flagged one
is held in the ``quarantine`` table instead (``quarantine_queries``), returned with
``Fact.quarantined`` set, and never ranked, embedded or recalled. Recall screens again what it
is about to return, so a rule added later also protects old facts: a stored fact it flags is
forgotten and moved to quarantine, and recall answers without it.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from threading import RLock
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.scopes import AGENT, Scope, ScopeKey
from specwire.runtime.facts import validation
from specwire.runtime.facts.lifecycle import FactFile, file_exists
from specwire.runtime.facts.model import (
    MAX_EVIDENCE,
    MAX_TAGS,
    CapExceededError,
    Fact,
    FactStatus,
    InvalidRequestError,
    NewFactItem,
    Provenance,
    QuarantinedFact,
    RecallHit,
    SweepResult,
    TombstoneKind,
    check_fact_key,
    from_ms,
    to_ms,
)
from specwire.runtime.facts.sql import quarantine as quarantine_queries
from specwire.runtime.facts.sql import queries
from specwire.runtime.facts.sql import restore as restore_queries
from specwire.runtime.facts.sql import vectors as vector_queries
from specwire.runtime.facts.sql.schema import schema_version
from specwire.runtime.facts.text import (
    MAX_QUERY_TERMS,
    match_expression,
    normalize_text,
    query_terms,
)
from specwire.runtime.facts.tuning import DEFAULT_TUNING, FactsTuning
from specwire.runtime.facts.validation import NewFact
from specwire.runtime.safety.screening import scan

# What writes and recalls are screened with: the injection scanner, imported on first use.
Screen = Callable[[str], "InjectionHit | None"]
# Ids recall found clean; facts are immutable, so a verdict holds for the process's life.
_MAX_SCREENED_IDS = 200_000

if TYPE_CHECKING:
    from specwire.runtime.embedders import Embedder
    from specwire.runtime.facts.importing import ImportedFact, ImportResult
    from specwire.runtime.facts.lexical.recall import LexicalRecall
    from specwire.runtime.facts.vector.semantic import SemanticIndex
    from specwire.runtime.safety.injection import InjectionHit


@lazy_dataclass(frozen=True)
class KeyedWrite:
    """What ``FactStore.write_keyed`` wrote: the fact (``quarantined`` set when the scanner
    held the text) and the id of the fact it superseded."""

    fact: Fact
    superseded: str | None

    @property
    def bytes(self) -> int:
        """UTF-8 size of the text stored (0 when nothing was stored)."""
        return 0 if self.fact.quarantined is not None else len(self.fact.text.encode("utf-8"))


class FactStore:
    """Open with ``FactStore.open(path)``; usable as a context manager."""

    def __init__(
        self,
        path: Path,
        now: Clock,
        screen: Screen | None = scan,
        tuning: FactsTuning | None = None,
    ) -> None:
        self._file = FactFile(path)
        self._tuning = tuning or DEFAULT_TUNING
        # From this many facts written, BM25 recall ranks through the in-memory index (numpy);
        # below it, through the FTS5 query, which ranks identically.
        self._lexical_index_from = self._tuning.lexical_index_from
        self._now = now
        self._screen = screen
        self._clean: set[str] = set()
        # Set by ``use_embedder``; the vector index is built from it on first use
        # (``_semantic_index``), so a store that is never searched or written never loads numpy.
        self._embedder: tuple[Embedder, Callable[[str], None]] | None = None
        self._semantic: SemanticIndex | None = None
        self._semantic_lock = RLock()
        self._lexical: LexicalRecall | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        now: Clock = utc_now,
        embedder: Embedder | None = None,
        screen: Screen | None = scan,
        tuning: FactsTuning | None = None,
    ) -> FactStore:
        """Open the store at ``path``: an existing file is opened and migrated now.

        A missing file is not created (see ``runtime.facts.lifecycle``); opening fails early,
        creating nothing, when it could never be created (an ancestor is a file or is not
        writable). With ``embedder``, recall is hybrid (see ``use_embedder``). ``screen`` is the
        injection scanner writes and recalls go through (None: no screening, for benchmarks of
        the store alone). ``tuning``: the indexes' thresholds (None: ``FactsTuning()``, the
        defaults; tests pass small ones to reach the paths of a large store).
        """
        store = cls(Path(path), now, screen, tuning)
        store._file.open()
        if embedder is not None:
            store.use_embedder(embedder)
        return store

    def use_embedder(
        self, embedder: Embedder | None, *, log: Callable[[str], None] | None = None
    ) -> None:
        """Recall by BM25 fused with cosine similarity under ``embedder`` (None: BM25 only).

        Keeps the in-memory vectors when the embedder's id is unchanged (a warm store reused).
        """
        with self._semantic_lock:
            if embedder is None:
                self._embedder, self._semantic = None, None
                return
            if self._embedder is not None and self._embedder[0].id == embedder.id:
                return
            self._embedder, self._semantic = (embedder, log or _stderr), None

    def _semantic_index(self) -> SemanticIndex | None:
        """The vector index of the embedder in use (None without one), built on first use."""
        with self._semantic_lock:
            if self._semantic is None and self._embedder is not None:
                from specwire.runtime.facts.vector.semantic import SemanticIndex
                from specwire.runtime.facts.vector.snapshot import snapshot_path

                embedder, log = self._embedder
                self._semantic = SemanticIndex(
                    embedder, log, snapshot_path(self._file.path), self._tuning
                )
            return self._semantic

    def close(self) -> None:
        if self._lexical is not None and not self._file.closed:
            self._save_lexical_snapshot()
        if self._semantic is not None and not self._file.closed:
            # Like the lexical snapshot: an optimization that must never fail a close.
            with suppress(StoreError, OSError):
                self._semantic.save_snapshot(self._file)
        self._file.close()

    def _save_lexical_snapshot(self) -> None:
        # A snapshot is an optimization: failing to write one must never fail a close.
        assert self._lexical is not None
        from specwire.runtime.facts.lexical.index import DamagedIndexError

        quiet = suppress(StoreError, OSError, DamagedIndexError)
        with quiet, self._file.reading("save the index") as conn:
            if conn is None:
                return
            conn.execute("BEGIN")
            try:
                self._lexical.catch_up(conn)
                self._lexical.save_snapshot(conn)
            finally:
                conn.execute("COMMIT")

    def __enter__(self) -> FactStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self._file.path

    @property
    def clock(self) -> Clock:
        return self._now

    @property
    def closed(self) -> bool:
        return self._file.closed

    def file_replaced(self) -> bool:
        """Whether the file the store opened was removed or replaced at its path since (an owner
        moved a damaged file aside): reopen instead of reusing this store."""
        return self._file.replaced()

    @property
    def _lock(self) -> RLock:
        """The lock every operation holds (one connection is shared by threads)."""
        return self._file.lock

    @property
    def schema_version(self) -> int:
        """The database's schema version; 0 while no database file exists."""
        with self._file.reading("read the schema version") as conn:
            return 0 if conn is None else schema_version(conn)

    def health_problem(self, *, timeout_s: float = 0.2) -> str | None:
        """Why the store cannot serve right now, or None. Never blocks past ``timeout_s``.

        A store whose file does not exist yet is healthy when the file could be created.
        """
        return self._file.health_problem(timeout_s=timeout_s)

    # -- writes ----------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        tags: Sequence[str] = (),
        *,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
        scope: ScopeKey = AGENT,
    ) -> Fact:
        """Write a fact in ``scope`` (the scope key the host chose; never from the model)."""
        new = NewFact(text, tags, ttl_ms, provenance, scope=scope)
        hit = self._screened(new)
        if hit is not None:
            return self._hold(new, hit)
        vector = self._vector_of(new)
        with self._file.writing("remember") as conn:
            fact = queries.insert(conn, new, self._now_ms())
            self._store_vector(conn, fact.id, vector)
            return fact

    def retain_many(self, items: Iterable[NewFactItem], *, if_new: bool = False) -> list[Fact]:
        """Write several facts in one transaction: all of them, or none.

        Every item is validated before anything is written; a bad one is refused with its
        position, and nothing is written. With ``if_new``, an item whose normalized text is
        already live (or earlier in the batch) is skipped, in the same transaction. Returns the
        facts written, in order; items the scanner flagged are held in quarantine in the same
        transaction and returned in their place with ``quarantined`` set.
        """
        news: list[NewFact] = []
        for index, item in enumerate(items):
            if not isinstance(item, NewFactItem):
                kind = type(item).__name__
                raise InvalidRequestError(
                    f"item {index} is not a NewFactItem ({kind}); nothing was written"
                )
            try:
                news.append(
                    NewFact(item.text, item.tags, item.ttl_ms, item.provenance, scope=item.scope)
                )
            except InvalidRequestError as exc:
                raise InvalidRequestError(f"item {index}: {exc}; nothing was written") from exc
        if not news:
            return []
        if if_new:
            news = _first_of_each_text(news)
        order = list(news)
        hits = [self._screened(new) for new in news]
        flagged = [(new, hit) for new, hit in zip(news, hits, strict=True) if hit is not None]
        news = [new for new, hit in zip(news, hits, strict=True) if hit is None]
        vectors = self._vectors_of(news)  # embedded before the transaction, like remember()
        with self._file.writing("remember") as conn:
            now = self._now_ms()
            if if_new:
                kept = [
                    index
                    for index, new in enumerate(news)
                    if queries.live_with_text(conn, new.norm_text, now, new.scope) is None
                ]
                news = [news[index] for index in kept]
                vectors = [vectors[index] for index in kept]
            facts = queries.insert_many(conn, news, now) if news else []
            for fact, vector in zip(facts, vectors, strict=True):
                self._store_vector(conn, fact.id, vector)
            held = [quarantine_queries.hold(conn, new, hit.label, now) for new, hit in flagged]
        if not held:
            return facts
        by_new = dict(zip(map(id, news), facts, strict=True))
        by_new.update(zip((id(new) for new, _ in flagged), held, strict=True))
        return [by_new[id(new)] for new in order if id(new) in by_new]

    def remember_if_new(
        self,
        text: str,
        tags: Sequence[str] = (),
        *,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
        scope: ScopeKey = AGENT,
    ) -> tuple[Fact, bool]:
        """Like ``remember``, unless a live plain fact of the same scope key has the same
        normalized text: then that fact.

        The check and the insert are one transaction, so concurrent captures never duplicate.
        Returns ``(fact, created)``.
        """
        new = NewFact(text, tags, ttl_ms, provenance, scope=scope)
        hit = self._screened(new)
        if hit is not None:
            return self._hold(new, hit), True
        vector = self._vector_of(new)
        with self._file.writing("remember") as conn:
            now = self._now_ms()
            existing = queries.live_with_text(conn, new.norm_text, now, new.scope)
            if existing is not None:
                return existing, False
            fact = queries.insert(conn, new, now)
            self._store_vector(conn, fact.id, vector)
            return fact, True

    def supersede(
        self,
        old_id: str,
        text: str,
        tags: Sequence[str] = (),
        *,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
        reason: str | None = None,
        scope: ScopeKey = AGENT,
    ) -> Fact:
        """Write a replacement in ``scope`` and tombstone the original, in one transaction.

        The original must be a plain fact of the same scope key (a fact never moves to another
        key; a keyed fact is replaced by key). A replacement the scanner flags is held in
        quarantine and the original stays live.
        """
        validation.memory_id(old_id)
        reason = validation.reason(reason)
        new = NewFact(text, tags, ttl_ms, provenance, scope=scope)
        hit = self._screened(new)
        if hit is not None:
            return self._hold(new, hit)
        vector = self._vector_of(new)
        with self._file.updating("supersede") as conn:
            now = self._now_ms()
            status = None if conn is None else queries.status_of(conn, old_id, now)
            if status is None:
                raise StoreError(f"no memory with id {old_id}")
            if status != "live":
                raise StoreError(f"cannot supersede {old_id}: it is {status}, not live")
            assert conn is not None
            old = queries.live_by_id(conn, old_id, now)
            assert old is not None
            if old.scope != new.scope:
                raise InvalidRequestError(f"cannot supersede {old_id}: it belongs to another scope")
            if old.key is not None:
                raise InvalidRequestError(
                    f"cannot supersede {old_id}: it is a keyed memory; write it by its key"
                )
            replacement = queries.insert(conn, new, now)
            self._store_vector(conn, replacement.id, vector)
            queries.mark_superseded(conn, old_id, replacement.id)
            queries.tombstone(conn, "superseded", old_id, now, reason, replacement.id)
            return replacement

    def update(
        self,
        fact_id: str,
        text: str,
        tags: Sequence[str] = (),
        *,
        visible: Sequence[ScopeKey] | None = None,
    ) -> tuple[Fact, str | None]:
        """Replace live plain fact ``fact_id``'s text and tags, keeping its id, creation time,
        expiry, scope and provenance; its old version stays as history (``queries.edit_live``).
        Returns the fact as it is now and the old version's id (None when nothing changed:
        the same text and tags, or a text the scanner held in quarantine — then the returned
        fact has ``quarantined`` set and the fact stays as it was).

        With ``visible`` (a model's update) a fact outside those scope keys, or a tier note, is
        unknown (``StoreError``, as if absent); a keyed fact is written by its key.
        """
        validation.memory_id(fact_id)
        with self._file.updating("update") as conn:
            fact = None if conn is None else queries.live_by_id(conn, fact_id, self._now_ms())
            if fact is None or not _admitted(fact, visible):
                raise StoreError(f"no live memory with id {fact_id}")
        if fact.key is not None:
            raise InvalidRequestError(
                f"cannot update {fact_id}: it is a keyed memory; write it by its key"
            )
        new = NewFact(text, tags, None, None, scope=fact.scope)
        if (new.text, new.tags) == (fact.text, fact.tags):
            return fact, None
        hit = self._screened(new)
        if hit is not None:
            return self._hold(new, hit), None
        vector = self._vector_of(new)
        with self._file.updating("update") as conn:
            now = self._now_ms()
            current = None if conn is None else queries.live_by_id(conn, fact_id, now)
            if conn is None or current is None or current != fact:
                raise StoreError(f"{fact_id} changed while it was being updated: try again")
            old_id = queries.edit_live(conn, fact_id, new, now)
            self._store_vector(conn, fact_id, vector)
            self._clean.discard(fact_id)
            return replace(fact, text=new.text, tags=new.tags), old_id

    def write_keyed(
        self,
        key: str,
        text: str,
        tags: Sequence[str] = (),
        *,
        scope: ScopeKey = AGENT,
        mode: Literal["replace", "append"] = "replace",
        tier: str | None = None,
        max_bytes: int | None = None,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
    ) -> KeyedWrite:
        """Write the fact with ``key`` in ``scope``: the live one with that key there (if any) is
        superseded, in one transaction, by ``text`` (``replace``) or by its own text, a newline
        and ``text`` (``append``; its tags kept unless ``tags`` are given).

        ``max_bytes``: refuse (``CapExceededError``, nothing written) when the stored text would
        be larger, checked inside the transaction, so concurrent appends neither overshoot nor
        lose each other (every write holds the file's write lock from its first read). The text
        written now is screened like any write: a flagged one is held in quarantine (with its
        scope, key and tier) and the keyed fact stays as it was.
        """
        if mode not in ("replace", "append"):
            raise InvalidRequestError("mode must be replace or append")
        if max_bytes is not None and (
            isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1
        ):
            raise InvalidRequestError("max_bytes must be a positive integer")
        part = NewFact(text, tags, ttl_ms, provenance, scope=scope, key=key, tier=tier)
        hit = self._screened(part)
        if hit is not None:
            return KeyedWrite(self._hold(part, hit), None)
        vector = self._vector_of(part) if mode == "replace" else None
        with self._file.writing("write a memory") as conn:
            now = self._now_ms()
            old = queries.live_keyed(conn, part.key or key, part.scope, now)
            new = part
            if mode == "append" and old is not None:
                new = NewFact(
                    f"{old.text}\n{part.text}",
                    part.tags or old.tags,
                    ttl_ms,
                    provenance,
                    scope=part.scope,
                    key=part.key,
                    tier=part.tier,
                )
            size = len(new.text.encode("utf-8"))
            if max_bytes is not None and size > max_bytes:
                current = 0 if old is None else len(old.text.encode("utf-8"))
                raise CapExceededError(key, max_bytes, current, size)
            fact = queries.insert(conn, new, now)
            self._store_vector(conn, fact.id, vector)
            if old is None:
                return KeyedWrite(fact, None)
            queries.mark_superseded(conn, old.id, fact.id)
            queries.tombstone(conn, "superseded", old.id, now, None, fact.id)
            return KeyedWrite(fact, old.id)

    def consolidate(
        self, survivor_id: str, duplicate_ids: Sequence[str], *, reason: str | None = None
    ) -> Fact:
        """Fold live duplicates into one live fact, in one transaction; nothing is deleted.

        When the survivor already carries every tag and evidence id of the group and lives as
        long as any of them, each duplicate is tombstoned as superseded by the survivor.
        Otherwise a replacement with the
        survivor's text, its session and the group's tags and evidence (survivor's first, up to
        the limits) and the group's latest expiry supersedes the survivor, and every duplicate
        points at that replacement. A duplicate that is no longer live is left alone. Returns the
        live fact the group now points at.
        """
        validation.memory_id(survivor_id)
        for dup in duplicate_ids:
            validation.memory_id(dup)
        reason = validation.reason(reason)
        with self._file.reading("consolidate memories") as conn:
            now = self._now_ms()
            group = (
                [] if conn is None else [queries.live_by_id(conn, i, now) for i in duplicate_ids]
            )
            survivor = None if conn is None else queries.live_by_id(conn, survivor_id, now)
        if survivor is None:
            raise StoreError(f"cannot consolidate into {survivor_id}: it is not live")
        if survivor.key is not None:
            raise InvalidRequestError(f"cannot consolidate into {survivor_id}: it is keyed")
        # Only plain facts of the survivor's own scope key fold into it (a fact never moves).
        folded = [fact for fact in group if fact is not None and _foldable(fact, survivor)]
        merged = merged_item(survivor, folded, now)
        new = None if merged is None else NewFact(*merged, scope=survivor.scope)
        if new is not None and self._screened(new) is not None:
            new = None  # never let a merge write what the scanner flags: point at the survivor
        vector = None if new is None else self._vector_of(new)
        with self._file.updating("consolidate memories") as conn:
            now = self._now_ms()
            if conn is None or queries.live_by_id(conn, survivor_id, now) is None:
                raise StoreError(f"cannot consolidate into {survivor_id}: it is not live")
            target = survivor
            if new is not None:
                target = queries.insert(conn, new, now)
                self._store_vector(conn, target.id, vector)
                queries.mark_superseded(conn, survivor_id, target.id)
                queries.tombstone(conn, "superseded", survivor_id, now, reason, target.id)
            for dup in dict.fromkeys(duplicate_ids):
                fact = None if dup == survivor_id else queries.live_by_id(conn, dup, now)
                if fact is None or not _foldable(fact, survivor):
                    continue
                queries.mark_superseded(conn, dup, target.id)
                queries.tombstone(conn, "superseded", dup, now, reason, target.id)
            return target

    def forget(self, id_or_query: str, *, reason: str | None = None) -> list[Fact]:
        """Forget one id (an id-shaped argument never falls back to text) or every live fact
        that matches every term of the query (see ``forget_matching``).

        Returns the forgotten facts (best match first for a query); ``[]`` when nothing is live.
        """
        selector = id_or_query.strip()
        if MEMORY_ID_RE.match(selector):
            return self.forget_id(selector, reason=reason)
        return self.forget_matching(selector, reason=reason)

    def forget_id(
        self,
        fact_id: str,
        *,
        reason: str | None = None,
        visible: Sequence[ScopeKey] | None = None,
    ) -> list[Fact]:
        """Forget that fact only; ``[]`` when it is unknown or no longer live.

        With ``visible`` (a model's forget), only a plain fact (no tier) of those scope keys:
        anything else is left alone as if it did not exist.
        """
        validation.memory_id(fact_id)
        reason = validation.reason(reason)
        with self._file.updating("forget") as conn:
            now = self._now_ms()
            fact = None if conn is None else queries.live_by_id(conn, fact_id, now)
            if conn is None or fact is None or not _admitted(fact, visible):
                return []
            queries.tombstone(conn, "forgotten", fact.id, now, reason, None)
            return [fact]

    def forget_matching(
        self,
        query: str,
        *,
        reason: str | None = None,
        at_most: int | None = None,
        visible: Sequence[ScopeKey] | None = None,
    ) -> list[Fact]:
        """Forget every live fact that matches **every** term of the query, as text, never as an id.

        AND semantics, unlike recall's OR: forgetting "billing plan" must not take "our project
        plan is due Friday" with it. Stop words are ignored (a query of stop words only forgets
        nothing), and a query with more than ``MAX_QUERY_TERMS`` distinct terms is refused rather
        than cut (dropping a term would widen what is forgotten). With ``at_most``, a query
        matching more facts than that forgets nothing and is refused. With ``visible`` (a
        model's forget), only plain facts (no tier) of those scope keys are matched.
        """
        reason = validation.reason(reason)
        terms = query_terms(query, limit=None)
        if len(terms) > MAX_QUERY_TERMS:
            raise InvalidRequestError(
                f"the forget query has too many distinct words ({len(terms)}; at most "
                f"{MAX_QUERY_TERMS})"
            )
        match = match_expression(terms, every=True)
        if match is None:
            return []
        with self._file.updating("forget") as conn:
            if conn is None:
                return []
            now = self._now_ms()
            tiers = None if visible is None else ()
            found = queries.lexical(conn, match, now, limit=-1, visible=visible, tiers=tiers)
            facts = [hit.fact for hit in found]
            if at_most is not None and len(facts) > at_most:
                raise InvalidRequestError(
                    f"that query matches {len(facts)} memories, more than {at_most} at once: "
                    "use more words or forget by id. Nothing was forgotten."
                )
            for fact in facts:
                queries.tombstone(conn, "forgotten", fact.id, now, reason, None)
            return facts

    # -- reads -----------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        k: int = 5,
        *,
        visible: Sequence[ScopeKey] | None = None,
        tiers: Sequence[str] | None = (),
    ) -> list[RecallHit]:
        """The ``k`` best live matches, best first: by BM25 (OR over non-stop-word tokens), or
        with an embedder by BM25 fused with cosine similarity (``runtime.facts.hybrid``).

        Only facts whose scope key is in ``visible`` (None: any key, the owner's search) and
        whose tier is in ``tiers`` (empty: plain facts, without a tier; None: any) are ranked
        against each other; the BM25 statistics are those of the whole store, as FTS5's are.

        Never returns a fact the scanner flags: such a fact is moved to quarantine and the
        ranking is asked again (a few times at most; anything still flagged is left out).
        """
        if k < 1:
            raise InvalidRequestError(f"k must be at least 1 (got {k})")
        if visible is not None and not isinstance(visible, tuple):
            visible = tuple(visible)
        if tiers is not None and not isinstance(tiers, tuple):
            tiers = tuple(tiers)
        for _ in range(3):
            hits = self._ranking(query, k, visible, tiers)
            flagged = self._flagged_on_read(hits)
            if flagged:
                self._hold_on_read(flagged)
                flagged = {key: value for key, value in flagged.items() if key not in self._clean}
            if not flagged:
                return hits
        return [hit for hit in hits if hit.fact.id not in flagged]

    def _ranking(
        self,
        query: str,
        k: int,
        visible: tuple[ScopeKey, ...] | None = None,
        tiers: tuple[str, ...] | None = (),
    ) -> list[RecallHit]:
        if self._embedder is not None:
            if not file_exists(self._file.path):
                return []  # nothing stored yet: no index to build, no numpy to load
            from specwire.runtime.facts.hybrid import hybrid_recall

            semantic = self._semantic_index()
            assert semantic is not None
            return hybrid_recall(self, semantic, query, k, visible, tiers)
        return self._lexical_ranking(query, k, visible, tiers)

    def _lexical_ranking(
        self,
        query: str,
        limit: int,
        visible: tuple[ScopeKey, ...] | None = None,
        tiers: tuple[str, ...] | None = (),
    ) -> list[RecallHit]:
        """The ``limit`` best live BM25 matches (OR over non-stop-word tokens), best first; ties
        go to the older fact (see ``runtime.facts.lexical.ranking``)."""
        terms = query_terms(query)
        if not terms:
            return []
        with self._file.reading("recall") as conn:
            if conn is None:
                return []
            if (
                self._lexical is None
                and self._embedder is None
                and _few_facts(conn, self._lexical_index_from)
            ):
                # FTS5 ranks a small store in a millisecond or two, the same ranking as the
                # in-memory index, without loading numpy (a tenth of a second) or building it.
                match = match_expression(terms)
                assert match is not None
                return queries.lexical(
                    conn, match, self._now_ms(), limit=limit, visible=visible, tiers=tiers
                )
            return self._lexical_recall().recall(conn, terms, limit, self._now_ms(), visible, tiers)

    def _lexical_seqs(
        self,
        query: str,
        limit: int,
        visible: tuple[ScopeKey, ...] | None = None,
        tiers: tuple[str, ...] | None = (),
    ) -> list[tuple[int, bool]] | None:
        """``_lexical_ranking`` as ``(seq, proven)`` pairs, no fact read; None when only
        ``_lexical_ranking`` can answer (see ``LexicalRecall.ranked_live``)."""
        terms = query_terms(query)
        if not terms:
            return []
        with self._file.reading("recall") as conn:
            if conn is None:
                return []
            return self._lexical_recall().ranked_live(
                conn, terms, limit, self._now_ms(), visible, tiers
            )

    def read(
        self,
        *,
        fact_id: str | None = None,
        key: str | None = None,
        visible: Sequence[ScopeKey],
    ) -> list[Fact]:
        """A point read: the live fact ``fact_id`` if its scope key is visible, or the live fact
        with ``key`` in each visible scope key (sorted by scope key); ``[]`` when there is none
        (a fact outside ``visible`` reads exactly like a missing one). Screened like recall."""
        if (fact_id is None) == (key is None):
            raise InvalidRequestError("read: provide exactly one of an id or a key")
        keys = sorted(dict.fromkeys(visible))
        if not keys:
            raise InvalidRequestError("read: visible must name at least one scope key")
        if fact_id is not None:
            validation.memory_id(fact_id)
        if key is not None:
            check_fact_key(key)
        with self._file.reading("read a memory") as conn:
            if conn is None:
                return []
            now = self._now_ms()
            if fact_id is not None:
                fact = queries.live_by_id(conn, fact_id, now)
                found = [] if fact is None or fact.scope not in keys else [fact]
            else:
                assert key is not None
                found = [
                    fact
                    for scope in keys
                    if (fact := queries.live_keyed(conn, key, scope, now)) is not None
                ]
        flagged = self._flagged_on_read([RecallHit(fact, 0.0) for fact in found])
        if flagged:
            self._hold_on_read(flagged)
        return [fact for fact in found if fact.id not in flagged or fact.id in self._clean]

    def _lexical_recall(self) -> LexicalRecall:
        if self._lexical is None:
            # Imported here: numpy loads only when a store actually recalls.
            from specwire.runtime.facts.lexical.recall import LexicalRecall

            self._lexical = LexicalRecall(self._file.path, self._tuning)
        return self._lexical

    def recorded_embedder(self) -> str | None:
        """The id of the embedder the agent's hybrid recall last embedded a fact with (None:
        BM25 only so far), so an owner's search ranks as the agent does."""
        with self._file.reading("read the embedder") as conn:
            return None if conn is None else vector_queries.latest_embedder(conn)

    def get(self, fact_id: str) -> FactStatus | None:
        with self._file.reading("read a memory") as conn:
            return None if conn is None else queries.fact_status(conn, fact_id, self._now_ms())

    def size(self) -> int:
        with self._file.reading("count memories") as conn:
            return 0 if conn is None else queries.count_live(conn, self._now_ms())

    def find_same_text(self, text: str) -> Fact | None:
        """The oldest live fact whose normalized text equals ``text``'s (lowercase, spaces)."""
        norm = normalize_text(text)
        if not norm:
            return None
        with self._file.reading("look up a memory") as conn:
            return None if conn is None else queries.live_with_text(conn, norm, self._now_ms())

    # -- owner operations (``codegen memory list / sweep``; the agent's tools never call them) --

    def import_facts(self, facts: Sequence[ImportedFact]) -> ImportResult:
        """Import an export's facts in one transaction (``runtime.facts.importing``'s rules):
        all of them, or none. Their vectors are computed later, at recall."""
        with self._file.writing("import memories") as conn:
            now = self._now_ms()
            from specwire.runtime.facts.importing import import_into

            return import_into(_SqliteImportSink(conn, self._screened, now), facts, now)

    def restore_facts(self, statuses: Sequence[FactStatus]) -> int:
        """Write facts exactly as another store holds them (``runtime.facts.restoring``: ids,
        times, tombstones, links; heads first), in one transaction; ids already here are
        skipped. Returns how many were written."""
        with self._file.writing("restore memories") as conn:
            return restore_queries.restore_facts(conn, statuses)

    def restore_quarantined(self, held: Sequence[QuarantinedFact]) -> int:
        """Hold writes exactly as another store held them, in one transaction; ids already
        held are skipped. Returns how many were written."""
        with self._file.writing("restore quarantined memories") as conn:
            return restore_queries.restore_held(conn, held)

    def list_facts(
        self, scopes: Sequence[Scope] | None = None, subject: str | None = None
    ) -> list[FactStatus]:
        """Every fact ever written, oldest first, with its status; with ``scopes`` only facts of
        those scopes, with ``subject`` only facts whose scope key names that subject."""
        with self._file.reading("list memories") as conn:
            if conn is None:
                return []
            return queries.every_fact_status(conn, self._now_ms(), scopes, subject)

    def page_facts(
        self,
        *,
        status: str = "live",
        scopes: Sequence[Scope] | None = None,
        subject: str | None = None,
        tag: str | None = None,
        text: str | None = None,
        before: str | None = None,
        limit: int = 50,
    ) -> list[FactStatus]:
        """One page of facts, newest first, older than the fact ``before`` (keyset paging:
        ``queries.fact_status_page``)."""
        with self._file.reading("list memories") as conn:
            if conn is None:
                return []
            return queries.fact_status_page(
                conn,
                self._now_ms(),
                status=status,
                scopes=scopes,
                subject=subject,
                tag=tag,
                text=text,
                before=before,
                limit=limit,
            )

    def created_times(self) -> list[datetime]:
        """When each fact was written (any status), oldest first: the console's memory growth."""
        with self._file.reading("list memories") as conn:
            if conn is None:
                return []
            return [from_ms(ms) for ms in queries.created_times(conn)]

    def sweep(self) -> SweepResult:
        """Tombstone every expired fact that has no tombstone yet (idempotent)."""
        with self._file.updating("sweep") as conn:
            if conn is None:
                return SweepResult(swept=0, live=0)
            now = self._now_ms()
            swept = queries.sweep_expired(conn, now)
            return SweepResult(swept=swept, live=queries.count_live(conn, now))

    def compact(self) -> int:
        """Cheap upkeep, no ``VACUUM``: merge the FTS index's segments (``optimize``) and copy
        the WAL into the database without waiting for readers (a passive checkpoint). Returns
        the WAL frames checkpointed (0 without a file)."""
        with self._file.updating("compact the index") as conn:
            if conn is None:
                return 0
            conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
        with self._file.reading("checkpoint") as conn:
            if conn is None:
                return 0
            row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            return max(0, int(row[2])) if row is not None else 0

    def _now_ms(self) -> int:
        return to_ms(self._now())

    # -- quarantine (writes the injection scanner flags) --------------------------------------

    def _screened(self, new: NewFact) -> InjectionHit | None:
        if self._screen is None:
            return None
        return self._screen("\n".join([new.text, *new.tags]))

    def _hold(self, new: NewFact, hit: InjectionHit) -> Fact:
        with self._file.writing("quarantine a memory") as conn:
            return quarantine_queries.hold(conn, new, hit.label, self._now_ms())

    def _flagged_on_read(self, hits: Sequence[RecallHit]) -> dict[str, tuple[Fact, str]]:
        flagged: dict[str, tuple[Fact, str]] = {}
        if self._screen is None:
            return flagged
        for hit in hits:
            fact = hit.fact
            if fact.id in self._clean:
                continue
            found = self._screen("\n".join([fact.text, *fact.tags]))
            if found is None:
                if len(self._clean) >= _MAX_SCREENED_IDS:
                    self._clean.clear()
                self._clean.add(fact.id)
            else:
                flagged[fact.id] = (fact, found.label)
        return flagged

    def _hold_on_read(self, flagged: dict[str, tuple[Fact, str]]) -> None:
        """Move the flagged facts to quarantine, except those the owner released (clean now)."""
        with self._file.updating("quarantine a memory") as conn:
            if conn is None:
                return
            released = quarantine_queries.released_among(conn, list(flagged))
            self._clean.update(released)
            now = self._now_ms()
            held = 0
            for fact, rule in flagged.values():
                if fact.id in released or queries.live_by_id(conn, fact.id, now) is None:
                    continue
                quarantine_queries.hold_stored(conn, fact, rule, now)
                queries.tombstone(conn, "forgotten", fact.id, now, f"quarantined: {rule}", None)
                held += 1
        if not held:
            return
        _stderr(
            f"[memory] {held} stored memory(ies) flagged by the injection scanner on "
            "recall were moved to quarantine (see `codegen memory list --quarantined`)\n"
        )

    def quarantined(self) -> list[QuarantinedFact]:
        """Every held write, oldest first (owner operation)."""
        with self._file.reading("list quarantined memories") as conn:
            return [] if conn is None else quarantine_queries.every(conn)

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None:
        validation.memory_id(fact_id)
        with self._file.reading("read a quarantined memory") as conn:
            return None if conn is None else quarantine_queries.by_id(conn, fact_id)

    def release(self, fact_id: str) -> Fact:
        """Store a held write as a live fact (the owner vouched for it), without screening.

        It keeps its id unless a fact already has it (one flagged on read, which was forgotten):
        then it is written under a fresh id. Its TTL, if any, starts now. It lands in the scope
        key it was written for, with its key and tier; a keyed write is refused while another
        live fact holds its key there.
        """
        validation.memory_id(fact_id)
        with self._file.updating("release a quarantined memory") as conn:
            held = None if conn is None else quarantine_queries.by_id(conn, fact_id)
            if conn is None or held is None:
                raise StoreError(f"no quarantined memory with id {fact_id}")
            new = NewFact(
                held.text,
                held.tags,
                held.ttl_ms,
                held.provenance,
                scope=held.scope,
                key=held.key,
                tier=held.tier,
            )
            now = self._now_ms()
            if held.key is not None and queries.live_keyed(conn, held.key, held.scope, now):
                # Released over the live one, an append would lose what was written since.
                raise StoreError(
                    f"{held.key} has a live memory in {held.scope.label()} now: forget this "
                    "held write and write it again"
                )
            taken = queries.status_of(conn, fact_id, now) is not None
            if taken:
                fact = queries.insert(conn, new, now)
            else:
                queries.insert_with_id(conn, fact_id, new, now)
                stored = queries.live_by_id(conn, fact_id, now)
                assert stored is not None
                fact = stored
            quarantine_queries.drop(conn, fact_id)
            quarantine_queries.mark_released(conn, fact.id, held.rule, now)
            return fact

    def drop_quarantined(self, fact_id: str) -> bool:
        """Delete a held write for good (the owner forgot it); False when there is none."""
        validation.memory_id(fact_id)
        with self._file.updating("forget a quarantined memory") as conn:
            return conn is not None and quarantine_queries.drop(conn, fact_id)

    # -- vectors (hybrid recall) -------------------------------------------------------------

    def _vector_of(self, new: NewFact) -> bytes | None:
        """The new fact's embedding, computed before the write transaction; None without an
        embedder or when it fails (the fact is then embedded later, at recall)."""
        if self._embedder is None:  # most stores: no lock to take
            return None
        semantic = self._semantic_index()
        if semantic is None:
            return None
        from specwire.runtime.facts.vector.semantic import embedding_text

        vectors = semantic.embed_or_none([embedding_text(new.text, new.tags)])
        return None if vectors is None else vectors[0].tobytes()

    def _vectors_of(self, news: Sequence[NewFact]) -> list[bytes | None]:
        """One embedding per new fact, in one batch; all None without an embedder or when it
        fails (those facts are embedded later, at recall)."""
        if self._embedder is None:
            return [None] * len(news)
        semantic = self._semantic_index()
        if semantic is None:
            return [None] * len(news)
        from specwire.runtime.facts.vector.semantic import embedding_text

        vectors = semantic.embed_or_none([embedding_text(n.text, n.tags) for n in news])
        if vectors is None:
            return [None] * len(news)
        return [vector.tobytes() for vector in vectors]

    def _store_vector(self, conn: sqlite3.Connection, fact_id: str, vector: bytes | None) -> None:
        if self._semantic is not None and vector is not None:
            from specwire.runtime.facts.sql.vectors import insert_vector

            semantic = self._semantic
            insert_vector(conn, fact_id, semantic.embedder.id, semantic.dim, vector)


class _SqliteImportSink:
    """``ImportSink`` over one open write transaction of the store."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        screened: Callable[[NewFact], InjectionHit | None],
        now_ms: int,
    ) -> None:
        self._conn = conn
        self._screened = screened
        self._now = now_ms

    def live_with_text(self, norm_text: str, scope: ScopeKey = AGENT) -> str | None:
        fact = queries.live_with_text(self._conn, norm_text, self._now, scope)
        return None if fact is None else fact.id

    def with_text_created(
        self, norm_text: str, created_ms: int, scope: ScopeKey = AGENT
    ) -> str | None:
        return queries.with_text_created(self._conn, norm_text, created_ms, scope)

    def screened(self, new: NewFact) -> str | None:
        hit = self._screened(new)
        return None if hit is None else hit.label

    def hold(self, new: NewFact, rule: str) -> None:
        quarantine_queries.hold(self._conn, new, rule, self._now)

    def insert(self, new: NewFact, created_ms: int, wanted_id: str | None = None) -> str:
        if wanted_id is not None and not restore_queries.present(
            self._conn, "facts", [wanted_id]
        ) | restore_queries.present(self._conn, "quarantine", [wanted_id]):
            queries.insert_with_id(self._conn, wanted_id, new, created_ms)
            return wanted_id
        return queries.insert(self._conn, new, created_ms).id

    def link_superseded(self, old_id: str, new_id: str, at_ms: int, reason: str | None) -> None:
        queries.mark_superseded(self._conn, old_id, new_id)
        queries.tombstone(self._conn, "superseded", old_id, at_ms, reason, new_id)

    def tombstone(self, fact_id: str, kind: str, at_ms: int, reason: str | None) -> None:
        ending: TombstoneKind = "expired" if kind == "expired" else "forgotten"
        queries.tombstone(self._conn, ending, fact_id, at_ms, reason, None)


def _admitted(fact: Fact, visible: Sequence[ScopeKey] | None) -> bool:
    """Whether a model's operation limited to ``visible`` may touch ``fact`` (None: the
    owner's, anything)."""
    return visible is None or (fact.tier is None and fact.scope in visible)


def _foldable(fact: Fact, survivor: Fact) -> bool:
    """Whether ``fact`` may be folded into ``survivor``: a plain fact of its scope key."""
    return fact.key is None and fact.scope == survivor.scope


def _few_facts(conn: sqlite3.Connection, index_from: int) -> bool:
    """Whether the store has written fewer than ``index_from`` facts (its highest seq)."""
    highest = conn.execute("SELECT max(seq) FROM facts").fetchone()[0]
    return highest is None or int(highest) < index_from


def _stderr(line: str) -> None:
    sys.stderr.write(line)


def merged_item(
    survivor: Fact, duplicates: Sequence[Fact], now_ms: int
) -> tuple[str, tuple[str, ...], int | None, Provenance] | None:
    """The replacement ``consolidate`` writes (text, tags, ttl, provenance), or None when the
    survivor already holds every tag and evidence id of the group and lives as long as any of
    them (a duplicate kept forever must not be folded into a fact that expires)."""
    group = [survivor, *duplicates]
    tags = tuple(dict.fromkeys(tag for fact in group for tag in fact.tags))
    evidence = tuple(dict.fromkeys(e for fact in group for e in fact.provenance.evidence))
    expiries = [fact.expires_at for fact in group]
    latest = None if None in expiries else max(to_ms(m) for m in expiries if m is not None)
    lives_longest = survivor.expires_at is None or to_ms(survivor.expires_at) == latest
    holds_all = set(tags) <= set(survivor.tags) and set(evidence) <= set(
        survivor.provenance.evidence
    )
    if holds_all and lives_longest:
        return None
    ttl_ms = None if latest is None else latest - now_ms
    if ttl_ms is not None and ttl_ms <= 0:
        return None
    provenance = Provenance(survivor.provenance.session_id, evidence[:MAX_EVIDENCE])
    return survivor.text, tags[:MAX_TAGS], ttl_ms, provenance


def _first_of_each_text(news: Sequence[NewFact]) -> list[NewFact]:
    seen: set[str] = set()
    out: list[NewFact] = []
    for new in news:
        if new.norm_text not in seen:
            seen.add(new.norm_text)
            out.append(new)
    return out

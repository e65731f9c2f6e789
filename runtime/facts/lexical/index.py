"""``LexicalIndex``: an in-memory BM25 index over the fact store's rows, scored exactly as FTS5.

SQLite stays the source of truth; ``runtime.facts.lexical.recall`` keeps this index in step with
it. The index holds, per fact sequence number (``facts.seq``): its token count, expiry, whether it
is backed by evidence and whether it is *indexed* (no tombstone: the rows FTS5 holds). Postings
are a CSR base (term → ascending seqs and term frequencies, in numpy arrays) plus a small tail
of postings added since, merged into the base when it grows.

Scoring reproduces SQLite's ``bm25()`` (fts5_aux.c) operation by operation, so the order is
identical, not merely close: over the indexed rows, ``N`` rows and ``avgdl = tokens / N``; per
query term in query order, ``idf = log((N - df + 0.5) / (df + 0.5))`` clamped to ``1e-6`` when not
positive, and ``score += idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + b * dl / avgdl)))`` with
``k1 = 1.2``, ``b = 0.75``. Only the query terms' postings are touched, and on a large index
not even all of them: ``runtime.facts.lexical.pruning`` bounds each common term's contribution
per block of seqs and skips what cannot reach the result (block-max and MaxScore), returning
exactly the same ranking. When pruning does not pay, contributions are accumulated into a
scratch array at the postings' positions and reset afterwards, so a recall costs the query's
postings plus a partial selection of the best ``limit``, never a pass over the table.

Order: score (with ``ranking.EVIDENCE_FACTOR`` for facts backed by evidence) descending, ties
broken by ``seq`` ascending (the older fact first), as the FTS5 query's ``ORDER BY`` does.

Groups: every fact belongs to one group (an opaque label; ``runtime.facts.lexical.recall`` uses
its scope key and tier), kept as a per-seq group id. ``rank`` takes the groups a caller may see
as a boolean array over group ids: the filter is applied where liveness is (a lookup per
candidate, not per posting), and the statistics (N, df, avgdl) stay those of every indexed row,
as FTS5's are. When the visible groups hold few facts compared with the query's postings, only
those facts are scored (their seqs come from per-group member lists), so a narrow audience costs
less than an unfiltered recall, not more.
"""

from __future__ import annotations

import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from specwire.runtime.facts.lexical import pruning as lexical_pruning
from specwire.runtime.facts.lexical import ranking
from specwire.runtime.facts.lexical.pruning import BlockStats, Corpus, TermPostings
from specwire.runtime.facts.lexical.ranking import EVIDENCE_FACTOR
from specwire.runtime.facts.lexical.vocab import FrozenVocab
from specwire.runtime.facts.tuning import DEFAULT_TUNING, FactsTuning

NO_EXPIRY = np.iinfo(np.int64).max
# Term scores remembered between writes, in postings (8 bytes each).
MAX_CACHED_CONTRIBUTIONS = 4_000_000

Ints = npt.NDArray[np.int64]
Seqs = npt.NDArray[np.int32]
Freqs = npt.NDArray[np.uint16]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]
Crcs = npt.NDArray[np.uint32]
G = TypeVar("G", bound=np.generic)


@dataclass(frozen=True)
class NewDoc:
    """One fact as the index sees it."""

    seq: int
    terms: str  # ``facts.terms``: the document's tokens joined by spaces
    expires_at: int | None
    proven: bool
    group: str = ""  # the group label (see the module docstring)


@dataclass
class IndexArrays:
    """Everything the index is, as plain arrays (what a snapshot saves and loads)."""

    vocab: list[str] | FrozenVocab  # a snapshot's is frozen: terms added since go to a dict
    indptr: Ints  # len(vocab) + 1 offsets into docs/tfs
    docs: Seqs
    tfs: Freqs
    df: Ints  # per term: indexed rows containing it
    doc_len: npt.NDArray[np.int32]  # per seq
    expires: Ints  # per seq, NO_EXPIRY when the fact never expires
    proven: Flags  # per seq
    indexed: Flags  # per seq: no tombstone (FTS5 holds the row)
    n_indexed: int
    total_tokens: int
    group: npt.NDArray[np.int32] | None = None  # per seq (None: every fact in group 0)
    group_names: list[str] | None = None  # per group id (None: [""])


class DamagedIndexError(Exception):
    """Postings loaded from a snapshot fail their checksum: the index must not answer."""


class LexicalIndex:
    def __init__(
        self,
        arrays: IndexArrays | None = None,
        *,
        posting_crcs: Crcs | None = None,
        tuning: FactsTuning | None = None,
    ) -> None:
        """``posting_crcs``: one CRC-32 per term of the base postings (from a snapshot), each
        checked the first time the term is used. ``tuning``: when pruning pays (None: the
        defaults)."""
        self.tuning = tuning or DEFAULT_TUNING
        a = arrays or _empty_arrays()
        if isinstance(a.vocab, FrozenVocab):
            self._frozen: FrozenVocab | None = a.vocab
            self._terms: list[str] = []
        else:
            self._frozen, self._terms = None, a.vocab
        self._n_frozen = 0 if self._frozen is None else len(self._frozen)
        # Terms not in the frozen vocabulary, numbered after it.
        self._vocab = {term: self._n_frozen + i for i, term in enumerate(self._terms)}
        self._indptr, self._docs, self._tfs = a.indptr, a.docs, a.tfs
        self._df = a.df
        self._doc_len, self._expires = a.doc_len, a.expires
        self._proven, self._indexed = a.proven, a.indexed
        self.n_indexed, self.total_tokens = a.n_indexed, a.total_tokens
        self._group = np.zeros(len(self._doc_len), dtype=np.int32) if a.group is None else a.group
        self.group_names: list[str] = [""] if a.group_names is None else list(a.group_names)
        self._group_ids = {name: gid for gid, name in enumerate(self.group_names)}
        self._group_live = np.bincount(
            self._group[self._indexed], minlength=len(self.group_names)
        ).astype(np.int64)
        # Per group id, its seqs (ascending; dead ones included): built on the first narrow
        # recall, then appended to.
        self._members: dict[int, list[int] | Seqs] | None = None
        # (visible, tiers, groups known) -> a ``rank`` mask (``LexicalRecall.groups_for``).
        self.mask_cache: dict[tuple[object, ...], Flags] = {}
        self._top_seq = int(np.flatnonzero(self._indexed)[-1]) if self.n_indexed else 0
        self._tail: dict[int, tuple[list[int], list[int]]] = {}
        self._tail_postings = 0
        self._scratch = np.zeros(len(self._doc_len), dtype=np.float64)
        self._norm: Floats = self._scratch
        self._crcs = posting_crcs
        self._verified = np.zeros(0 if posting_crcs is None else len(posting_crcs), np.bool_)
        self._norm_key: tuple[int, int] | None = None
        self._stats: dict[int, BlockStats] = {}  # per term, over the base postings
        self._contributions: dict[int, Floats] = {}  # per term, for ``_contributions_of``
        self._contributions_of = -1  # the generation they were computed in
        self._contributions_size = 0
        self._generation = 0  # changes with every fact added or removed
        self._proven_blocks: Flags | None = None

    @property
    def tuning(self) -> FactsTuning:
        return self._tuning

    @tuning.setter
    def tuning(self, tuning: FactsTuning) -> None:
        """Read once into attributes: ranking reads them per query."""
        self._tuning = tuning
        self._min_postings = tuning.prune_min_postings
        self._min_bounded_postings = tuning.bound_min_postings
        shift_changed = getattr(self, "_block_shift", tuning.block_shift) != tuning.block_shift
        self._block_shift = tuning.block_shift
        if shift_changed:  # statistics made with other blocks no longer apply
            self._stats = {}
            self._proven_blocks = None
        # The tail is merged into the base once it holds this many postings, or an eighth of
        # the base.
        self._tail_merge_min = tuning.tail_merge_min
        # The visible groups hold at most 1/narrow_share of the query's postings (times its
        # terms): only their facts are scored.
        self._narrow_share = tuning.narrow_share

    # -- writes ----------------------------------------------------------------------------

    def add(self, docs: Iterable[NewDoc]) -> None:
        """Index new facts (each ``seq`` above every seq indexed so far)."""
        self._norm_key = None  # the new facts have no norm yet, whatever N and avgdl are now
        self._generation += 1
        for doc in docs:
            tokens = doc.terms.split()
            self._ensure_capacity(doc.seq)
            self._doc_len[doc.seq] = len(tokens)
            if doc.proven and self._proven_blocks is not None:
                block = doc.seq >> self._block_shift
                if block < len(self._proven_blocks):
                    self._proven_blocks[block] = True
                else:
                    self._proven_blocks = None  # grown: marked again on the next recall
            self._expires[doc.seq] = NO_EXPIRY if doc.expires_at is None else doc.expires_at
            self._proven[doc.seq] = doc.proven
            self._indexed[doc.seq] = True
            gid = self._group_id(doc.group)
            self._group[doc.seq] = gid
            self._group_live[gid] += 1
            self._top_seq = max(self._top_seq, doc.seq)
            if self._members is not None:
                members = self._members.setdefault(gid, [])
                if not isinstance(members, list):
                    members = self._members[gid] = members.tolist()
                members.append(doc.seq)
            self.n_indexed += 1
            self.total_tokens += len(tokens)
            for term, tf in Counter(tokens).items():
                tid = self._term_id(term)
                self._df[tid] += 1
                seqs, tfs = self._tail.setdefault(tid, ([], []))
                seqs.append(doc.seq)
                tfs.append(tf)
                self._tail_postings += 1
        if self._tail_postings >= max(self._tail_merge_min, len(self._docs) // 8):
            self._merge_tail()

    def remove(self, seq: int, terms: str) -> None:
        """Unindex a tombstoned fact (its ``terms`` as stored); a no-op unless it is indexed."""
        if seq >= len(self._indexed) or not self._indexed[seq]:
            return
        tokens = terms.split()
        self._generation += 1
        self._indexed[seq] = False
        self._group_live[self._group[seq]] -= 1
        self.n_indexed -= 1
        self.total_tokens -= len(tokens)
        for term in set(tokens):
            tid = self._lookup(term)
            if tid is not None:
                self._df[tid] -= 1

    def is_indexed(self, seq: int) -> bool:
        return seq < len(self._indexed) and bool(self._indexed[seq])

    # -- reads -----------------------------------------------------------------------------

    def group_mask(self, wanted: Callable[[str], bool]) -> Flags:
        """The groups (by id) whose label ``wanted`` admits: ``rank``'s ``groups``."""
        return np.fromiter(
            (wanted(name) for name in self.group_names), dtype=np.bool_, count=len(self.group_names)
        )

    def rank(
        self, terms: Sequence[str], limit: int, now_ms: int, groups: Flags | None = None
    ) -> list[tuple[int, float]]:
        """The best ``limit`` live facts for the query terms: ``(seq, score)``, best first;
        with ``groups`` (per group id: visible; ids past its end are not), only facts of the
        visible groups."""
        n = self.n_indexed
        if n == 0 or self.total_tokens == 0:
            return []
        query: list[TermPostings] = []
        tids: list[int] = []
        for term in terms:
            tid = self._lookup(term)
            if tid is None:
                continue
            idf = ranking.idf(n, int(self._df[tid]))
            seqs, tfs = self.postings(tid)
            if len(seqs) > 0:
                stats, bounded = self._block_stats(tid)
                query.append(TermPostings(idf, seqs, tfs, stats, bounded))
                tids.append(tid)
        if not query:
            return []

        visible = self._visible_groups(groups)

        def live(candidates: Seqs) -> Flags:
            alive = self._indexed[candidates] & (self._expires[candidates] > now_ms)
            if visible is not None:
                alive &= visible[self._group[candidates]]
            return alive

        avgdl = self.total_tokens / n
        corpus = Corpus(
            self._doc_len, self._proven, self._proven_by_block(), avgdl, live, self._block_shift
        )
        if visible is not None:
            postings = sum(len(posting.seqs) for posting in query)
            if int(self._group_live[visible].sum()) * self._narrow_share <= postings:
                return self._rank_members(query, visible, limit, corpus)
        pruned = lexical_pruning.pruned_top(query, limit, corpus, self._min_postings)
        if pruned is not None:
            return pruned
        for tid, posting in zip(tids, query, strict=True):
            self._scratch[posting.seqs] += self._contribution(tid, posting)
        touched = [posting.seqs for posting in query]
        seqs = np.concatenate(touched) if len(touched) > 1 else touched[0]
        scores = self._scratch[seqs]
        self._scratch[seqs] = 0.0
        if visible is not None:
            # Drop the other scopes' postings before choosing the best: with a narrow audience
            # most of the best-scored postings are not visible, and _best would partition the
            # whole array again for each widening.
            shown = visible[self._group[seqs]]
            seqs, scores = seqs[shown], scores[shown]
        scores = np.where(self._proven[seqs], scores * EVIDENCE_FACTOR, scores)
        return _best(seqs, scores, limit, len(touched), live)

    def _visible_groups(self, groups: Flags | None) -> Flags | None:
        """``groups`` over every group id (None when it admits them all: no filter)."""
        if groups is None:
            return None
        n_groups = len(self.group_names)
        if len(groups) != n_groups:
            padded = np.zeros(n_groups, dtype=np.bool_)
            common = min(n_groups, len(groups))
            padded[:common] = groups[:common]
            groups = padded
        return None if bool(groups.all()) else groups

    def _rank_members(
        self, query: Sequence[TermPostings], visible: Flags, limit: int, corpus: Corpus
    ) -> list[tuple[int, float]]:
        """Score only the live facts of the visible groups (exactly as the other paths do)."""
        candidates = self._members_of(np.flatnonzero(visible).tolist())
        candidates = candidates[corpus.live(candidates)]
        scores = lexical_pruning._exact_scores(query, candidates, corpus)
        matched = scores > 0.0  # every matching term adds a positive score (idf >= 1e-6)
        return lexical_pruning._best(candidates[matched], scores[matched], limit)

    def _members_of(self, gids: Sequence[int]) -> Seqs:
        """The seqs of the groups ``gids``, ascending and distinct (dead ones included)."""
        if self._members is None:
            top = self._top_seq + 1
            order = np.argsort(self._group[:top], kind="stable").astype(np.int32)
            counts = np.bincount(self._group[:top], minlength=len(self.group_names))
            bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
            self._members = {
                gid: order[bounds[gid] : bounds[gid + 1]] for gid in np.flatnonzero(counts).tolist()
            }
        parts = [np.asarray(self._members.get(gid, _NO_SEQS), dtype=np.int32) for gid in gids]
        if not parts:
            return _NO_SEQS
        if len(parts) == 1:
            return parts[0]
        return np.sort(np.concatenate(parts))

    def _group_id(self, name: str) -> int:
        gid = self._group_ids.get(name)
        if gid is None:
            gid = self._group_ids[name] = len(self.group_names)
            self.group_names.append(name)
            self._group_live = _grown(self._group_live, gid + 1, 0)
        return gid

    def _contribution(self, tid: int, posting: TermPostings) -> Floats:
        """Each posting's term score, remembered until a fact is added or removed (which
        changes N, a df or the postings): a repeated word costs one scatter."""
        norm_of = self._norms()
        if self._contributions_of != self._generation:
            self._contributions.clear()
            self._contributions_of = self._generation
            self._contributions_size = 0
        cached = self._contributions.get(tid)
        if cached is not None:
            return cached
        tf = posting.tfs.astype(np.float64)
        contribution = lexical_pruning.term_scores(posting.idf, tf, norm_of[posting.seqs])
        if self._contributions_size + len(contribution) > MAX_CACHED_CONTRIBUTIONS:
            self._contributions.clear()
            self._contributions_size = 0
        self._contributions[tid] = contribution
        self._contributions_size += len(contribution)
        return contribution

    def _block_stats(self, tid: int) -> tuple[BlockStats | None, int]:
        """The term's block statistics over its base postings and how many postings they cover
        (None, 0 for a rare term). Computed on first use; valid until the base changes (facts
        are immutable and removals only lower scores)."""
        if tid + 1 >= len(self._indptr):
            return None, 0
        start, end = int(self._indptr[tid]), int(self._indptr[tid + 1])
        if end - start < self._min_bounded_postings:
            return None, 0
        stats = self._stats.get(tid)
        if stats is None:
            seqs, tfs = self._docs[start:end], self._tfs[start:end]
            stats = lexical_pruning.block_stats(seqs, tfs, self._doc_len, self._block_shift)
            self._stats[tid] = stats
        return stats, end - start

    def _proven_by_block(self) -> Flags:
        """Per block of seqs: whether it holds a fact backed by evidence."""
        shift = self._block_shift
        n_blocks = (len(self._doc_len) >> shift) + 1
        if self._proven_blocks is None or len(self._proven_blocks) != n_blocks:
            marks = np.zeros(n_blocks, dtype=np.bool_)
            marks[np.flatnonzero(self._proven) >> shift] = True
            self._proven_blocks = marks
        return self._proven_blocks

    def _norms(self) -> Floats:
        """Per seq, ``k1 * (1 - b + b * dl / avgdl)``: recomputed only when N or the token total
        changed since the last recall (any write does)."""
        key = (self.n_indexed, self.total_tokens)
        if self._norm_key != key:
            avgdl = self.total_tokens / self.n_indexed
            self._norm = lexical_pruning.length_norm(self._doc_len.astype(np.float64), avgdl)
            self._norm_key = key
        return self._norm

    def postings(self, tid: int) -> tuple[Seqs, Freqs]:
        """The term's postings, ascending seq (dead facts included: callers filter)."""
        if tid + 1 < len(self._indptr):
            start, end = int(self._indptr[tid]), int(self._indptr[tid + 1])
            seqs, tfs = self._docs[start:end], self._tfs[start:end]
            if self._crcs is not None and not self._verified[tid]:
                self._verify(tid, seqs, tfs)
        else:
            seqs, tfs = _NO_SEQS, _NO_FREQS
        tail = self._tail.get(tid)
        if tail is None:
            return seqs, tfs
        return (
            np.concatenate([seqs, np.asarray(tail[0], dtype=np.int32)]),
            np.concatenate([tfs, np.asarray(tail[1], dtype=np.uint16)]),
        )

    def arrays(self) -> IndexArrays:
        """The index as plain arrays (the tail merged first)."""
        self._verify_all()
        self._merge_tail()
        return IndexArrays(
            vocab=self._all_terms(),
            indptr=self._indptr,
            docs=self._docs,
            tfs=self._tfs,
            df=self._df[: self._n_terms()],
            doc_len=self._doc_len,
            expires=self._expires,
            proven=self._proven,
            indexed=self._indexed,
            n_indexed=self.n_indexed,
            total_tokens=self.total_tokens,
            group=self._group,
            group_names=list(self.group_names),
        )

    def memory_bytes(self) -> int:
        """Bytes held by the arrays (not the vocabulary's Python strings)."""
        arrays = (self._indptr, self._docs, self._tfs, self._df, self._doc_len, self._expires)
        flags = (self._proven, self._indexed, self._scratch, self._group)
        return sum(int(array.nbytes) for array in (*arrays, *flags))

    # -- internals -------------------------------------------------------------------------

    def _lookup(self, term: str) -> int | None:
        tid = self._vocab.get(term)
        if tid is None and self._frozen is not None:
            tid = self._frozen.lookup(term)
        return tid

    def _n_terms(self) -> int:
        return self._n_frozen + len(self._terms)

    def _all_terms(self) -> list[str]:
        frozen = [] if self._frozen is None else self._frozen.terms()
        return frozen + self._terms

    def _term_id(self, term: str) -> int:
        tid = self._lookup(term)
        if tid is None:
            tid = self._n_terms()
            self._vocab[term] = tid
            self._terms.append(term)
            if tid >= len(self._df):
                self._df = _grown(self._df, max(tid + 1, 2 * len(self._df)), 0)
        return tid

    def _ensure_capacity(self, seq: int) -> None:
        if seq < len(self._doc_len):
            return
        size = max(seq + 1, len(self._doc_len) * 2, 1024)
        self._doc_len = _grown(self._doc_len, size, 0)
        self._expires = _grown(self._expires, size, NO_EXPIRY)
        self._proven = _grown(self._proven, size, False)
        self._indexed = _grown(self._indexed, size, False)
        self._group = _grown(self._group, size, 0)
        self._scratch = _grown(self._scratch, size, 0.0)

    def _verify(self, tid: int, seqs: Seqs, tfs: Freqs) -> None:
        assert self._crcs is not None
        if zlib.crc32(tfs.data, zlib.crc32(seqs.data)) != int(self._crcs[tid]):
            raise DamagedIndexError(f"the postings of term {tid} fail their checksum")
        self._verified[tid] = True

    def _verify_all(self) -> None:
        """Check every base term not checked yet (before the postings are copied elsewhere)."""
        if self._crcs is None:
            return
        for tid in np.flatnonzero(~self._verified).tolist():
            start, end = int(self._indptr[tid]), int(self._indptr[tid + 1])
            self._verify(tid, self._docs[start:end], self._tfs[start:end])
        self._crcs = None

    def _merge_tail(self) -> None:
        """Fold the tail into the base: one linear pass, no sort (within a term, the tail's
        seqs are all newer than the base's)."""
        if not self._tail:
            return
        self._verify_all()
        n_terms = self._n_terms()
        base_counts = np.zeros(n_terms, dtype=np.int64)
        base_counts[: len(self._indptr) - 1] = np.diff(self._indptr)
        tail_counts = np.zeros(n_terms, dtype=np.int64)
        tail_terms = np.fromiter(self._tail.keys(), dtype=np.int64, count=len(self._tail))
        tail_counts[tail_terms] = [len(seqs) for seqs, _ in self._tail.values()]
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(base_counts + tail_counts, out=indptr[1:])
        total = int(indptr[-1])
        docs = np.empty(total, dtype=np.int32)
        tfs = np.empty(total, dtype=np.uint16)
        # A base posting moves right by the tail postings of every term before its own.
        shift = np.repeat(np.cumsum(tail_counts) - tail_counts, base_counts)
        base_at = np.arange(len(self._docs), dtype=np.int64) + shift
        docs[base_at] = self._docs
        tfs[base_at] = self._tfs
        for tid, (seqs, freqs) in self._tail.items():
            at = int(indptr[tid] + base_counts[tid])
            docs[at : at + len(seqs)] = seqs
            tfs[at : at + len(seqs)] = freqs
        self._indptr, self._docs, self._tfs = indptr, docs, tfs
        self._stats.clear()
        self._tail.clear()
        self._tail_postings = 0


def build(docs: Iterable[NewDoc], tuning: FactsTuning | None = None) -> LexicalIndex:
    """An index of ``docs`` (ascending seq, all indexed), built in bulk from a stream of rows
    (compact C arrays while reading: a million facts never become a million Python objects)."""
    vocab: dict[str, int] = {}
    intern = vocab.setdefault
    group_ids: dict[str, int] = {"": 0}
    group_of = group_ids.setdefault
    term_ids, doc_ids = array("i"), array("i")
    seqs, lengths, expiries, proofs = array("i"), array("i"), array("q"), array("b")
    groups = array("i")
    for doc in docs:
        groups.append(group_of(doc.group, len(group_ids)))
        tokens = doc.terms.split()
        seqs.append(doc.seq)
        lengths.append(len(tokens))
        expiries.append(NO_EXPIRY if doc.expires_at is None else doc.expires_at)
        proofs.append(doc.proven)
        term_ids.extend([intern(token, len(vocab)) for token in tokens])
        doc_ids.extend(repeat(doc.seq, len(tokens)))
    top = seqs[-1] + 1 if seqs else 0
    at = np.frombuffer(seqs, dtype=np.int32) if seqs else np.zeros(0, np.int32)
    doc_len = np.zeros(top, dtype=np.int32)
    doc_len[at] = np.frombuffer(lengths, dtype=np.int32) if lengths else 0
    expires = np.full(top, NO_EXPIRY, dtype=np.int64)
    expires[at] = np.frombuffer(expiries, dtype=np.int64) if expiries else 0
    proven = np.zeros(top, dtype=np.bool_)
    proven[at] = np.frombuffer(proofs, dtype=np.int8).astype(np.bool_) if proofs else False
    indexed = np.zeros(top, dtype=np.bool_)
    indexed[at] = True
    group = np.zeros(top, dtype=np.int32)
    group[at] = np.frombuffer(groups, dtype=np.int32) if groups else 0
    width = max(top, 1)
    keys = (
        np.frombuffer(term_ids, dtype=np.int32).astype(np.int64)
        if term_ids
        else np.zeros(0, np.int64)
    )
    keys *= width
    keys += np.frombuffer(doc_ids, dtype=np.int32) if doc_ids else 0
    del term_ids, doc_ids
    unique, tf = np.unique(keys, return_counts=True)
    del keys
    df = np.bincount(unique // width, minlength=len(vocab)).astype(np.int64)
    return LexicalIndex(
        IndexArrays(
            vocab=list(vocab),
            indptr=np.concatenate([[0], np.cumsum(df)]).astype(np.int64),
            docs=(unique % width).astype(np.int32),
            tfs=np.minimum(tf, np.iinfo(np.uint16).max).astype(np.uint16),
            df=df,
            doc_len=doc_len,
            expires=expires,
            proven=proven,
            indexed=indexed,
            n_indexed=len(seqs),
            total_tokens=int(doc_len.sum(dtype=np.int64)),
            group=group,
            group_names=list(group_ids),
        ),
        tuning=tuning,
    )


def _best(
    seqs: Seqs,
    scores: Floats,
    limit: int,
    n_terms: int,
    live: Callable[[Seqs], Flags],
) -> list[tuple[int, float]]:
    """The ``limit`` best distinct live seqs by (score desc, seq asc); ``seqs`` may repeat a seq
    (once per matching term, always with the same score).

    Liveness is checked on the best entries only, not on every posting (most of a common term's
    postings never come near the top): when too few of them are live, more are taken.
    """
    wanted = limit * n_terms
    while True:
        # A seq appears at most n_terms times, so the best limit * n_terms entries hold at least
        # limit distinct seqs; every entry tied with the last of them is kept for the tie-break.
        every = len(scores) <= wanted
        if every:
            best_seqs, best_scores = seqs, scores
        else:
            cut = -np.partition(-scores, wanted - 1)[wanted - 1]
            chosen = scores >= cut
            best_seqs, best_scores = seqs[chosen], scores[chosen]
        keep = live(best_seqs)
        best_seqs, best_scores = best_seqs[keep], best_scores[keep]
        if every:
            return _distinct(best_seqs, best_scores, limit)
        above = best_scores > cut
        out = _distinct(best_seqs[above], best_scores[above], limit)
        # Entries tied at the cut can be many (facts alike but for a number): the oldest first.
        tied = np.unique(best_seqs[~above])[: limit - len(out)]
        out += [(int(seq), float(cut)) for seq in tied.tolist()]
        if len(out) == limit:
            return out
        wanted *= 4


def _distinct(seqs: Seqs, scores: Floats, limit: int) -> list[tuple[int, float]]:
    order = np.lexsort((seqs, -scores))
    out: list[tuple[int, float]] = []
    last = -1
    for index in order.tolist():
        seq = int(seqs[index])
        if seq == last:
            continue
        last = seq
        out.append((seq, float(scores[index])))
        if len(out) == limit:
            break
    return out


def _empty_arrays() -> IndexArrays:
    return IndexArrays(
        vocab=[],
        indptr=np.zeros(1, dtype=np.int64),
        docs=_NO_SEQS,
        tfs=_NO_FREQS,
        df=np.zeros(0, dtype=np.int64),
        doc_len=np.zeros(0, dtype=np.int32),
        expires=np.zeros(0, dtype=np.int64),
        proven=np.zeros(0, dtype=np.bool_),
        indexed=np.zeros(0, dtype=np.bool_),
        n_indexed=0,
        total_tokens=0,
    )


def _grown(array: npt.NDArray[G], size: int, fill: object) -> npt.NDArray[G]:
    out: npt.NDArray[G] = np.full(size, fill, dtype=array.dtype)
    out[: len(array)] = array
    return out


_NO_SEQS: Seqs = np.zeros(0, dtype=np.int32)
_NO_FREQS: Freqs = np.zeros(0, dtype=np.uint16)

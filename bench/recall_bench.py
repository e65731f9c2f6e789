"""Fact recall latency and write throughput: specwire's ``FactStore`` against a JSONL baseline.

A benchmark, not a test: it prints figures and never asserts timings. Both stores get the same
corpus, the same queries, in the same process and the same run.

- **ours**: ``runtime.facts.store.FactStore`` (SQLite, WAL, ``synchronous=FULL``, FTS5 BM25),
  used only through ``FactStore.open``, ``remember``, ``recall`` and ``close``.
- **baseline**: ``JsonlBaselineStore`` below, written in this file from the CrewHaus memory-store
  description (REFERENCE.md §1.8): an append-only JSONL file; opening it reads and tokenizes every
  line; each ``recall`` materializes status, then scores every live entry with BM25
  (k1=1.5, b=0.75, idf = ln((N - df + 0.5)/(df + 0.5) + 1)), keeps positive scores and sorts
  them stably, best first. Tokens: lowercase, split on ``[^a-z0-9]+``; the document is
  ``text + " " + " ".join(tags)``. It keeps no stop-word list (the description has none), so a
  question's "what" / "the" / "on" are scored like any other term.

The two rankers differ on purpose (FTS5's bm25 uses k1=1.2 and clamps idf; ours drops stop words
from queries), so identical top-5 lists are not expected: the overlap figure is a sanity check
that both find the same neighbourhood, not a conformance check.

Run from the repository root:

    .venv/bin/python bench/recall_bench.py                 # sizes 1,000 / 10,000 / 50,000
    .venv/bin/python bench/recall_bench.py --quick         # about 10 s
    .venv/bin/python bench/recall_bench.py --sizes 1000,20000 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import inspect
import json
import math
import os
import platform
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from runtime.facts.store import FactStore

# --------------------------------------------------------------------------------------------
# Baseline: a CrewHaus-style append-only JSONL store with an in-process BM25 over every line
# --------------------------------------------------------------------------------------------

_SPLIT = re.compile(r"[^a-z0-9]+")
BM25_K1 = 1.5
BM25_B = 0.75
SCHEMA_VERSION = 2


def tokenize(text: str) -> list[str]:
    """Lowercase, split on ``[^a-z0-9]+``, drop empty pieces."""
    return [token for token in _SPLIT.split(text.lower()) if token]


@dataclass(slots=True)
class _Entry:
    id: str
    text: str
    expires_at: int | None
    superseded_by: str | None
    tf: Counter[str]
    length: int


@dataclass(frozen=True, slots=True)
class BaselineHit:
    id: str
    text: str
    score: float


class JsonlBaselineStore:
    """Append-only JSONL; ``open`` loads and tokenizes every line; ``recall`` scans every entry.

    Only what the benchmark exercises is implemented (open, remember, recall), but the file format
    and the read-time status rules are the described ones, so reading costs what it would: a
    tombstone or a mistyped line is parsed, a superseded or expired entry is skipped per query.
    """

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self._path = path
        self._fsync = fsync
        self._entries: list[_Entry] = []
        self._dead: set[str] = set()  # targets of superseded / expired tombstones

    @classmethod
    def open(cls, path: Path, *, fsync: bool = False) -> JsonlBaselineStore:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        store = cls(path, fsync=fsync)
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                store._load_line(line)
        return store

    def close(self) -> None:
        self._entries = []
        self._dead = set()

    def remember(self, text: str, tags: Sequence[str] = ()) -> str:
        record: dict[str, Any] = {
            "id": "mem_" + os.urandom(8).hex(),
            "text": text,
            "tags": list(tags),
            "createdAt": datetime.now(UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "schemaVersion": SCHEMA_VERSION,
        }
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        # One append per write, like appendFileSync: open, write, close.
        with self._path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            if self._fsync:
                handle.flush()
                os.fsync(handle.fileno())
        self._add(record)
        return str(record["id"])

    def recall(self, query: str, k: int = 5) -> list[BaselineHit]:
        terms = tokenize(query)
        if not terms:
            return []
        now = _now_ms()
        live = [
            entry
            for entry in self._entries
            if entry.superseded_by is None
            and entry.id not in self._dead
            and (entry.expires_at is None or now < entry.expires_at)
        ]
        if not live:
            return []
        n_docs = len(live)
        avgdl = sum(entry.length for entry in live) / n_docs
        distinct = set(terms)
        df = dict.fromkeys(distinct, 0)
        for entry in live:
            tf = entry.tf
            for term in distinct:
                if term in tf:
                    df[term] += 1
        idf = {
            term: math.log((n_docs - count + 0.5) / (count + 0.5) + 1.0)
            for term, count in df.items()
        }
        scored: list[tuple[float, _Entry]] = []
        for entry in live:
            tf = entry.tf
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * entry.length / avgdl)
            score = 0.0
            for term in terms:  # every query token, as the sum in the description reads
                freq = tf.get(term, 0)
                if freq:
                    score += idf[term] * freq * (BM25_K1 + 1.0) / (freq + norm)
            if score > 0.0:
                scored.append((score, entry))
        scored.sort(key=lambda item: item[0], reverse=True)  # stable: file order breaks ties
        return [BaselineHit(entry.id, entry.text, score) for score, entry in scored[:k]]

    def _load_line(self, line: str) -> None:
        try:
            record = json.loads(line)
        except ValueError:
            return  # junk line: skipped
        if not isinstance(record, dict):
            return
        if "tombstone" in record:
            kind, target = record.get("tombstone"), record.get("target")
            if kind in ("superseded", "expired") and isinstance(target, str):
                self._dead.add(target)
            return
        self._add(record)

    def _add(self, record: dict[str, Any]) -> None:
        entry_id, text, tags = record.get("id"), record.get("text"), record.get("tags", [])
        expires_at, superseded_by = record.get("expiresAt"), record.get("supersededBy")
        if not (isinstance(entry_id, str) and isinstance(text, str) and isinstance(tags, list)):
            return
        if not all(isinstance(tag, str) for tag in tags):
            return
        if expires_at is not None and not isinstance(expires_at, int):
            return  # a mistyped optional field makes the line malformed
        if superseded_by is not None and not isinstance(superseded_by, str):
            return
        tokens = tokenize(" ".join([text, *tags]))
        self._entries.append(
            _Entry(entry_id, text, expires_at, superseded_by, Counter(tokens), len(tokens))
        )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# --------------------------------------------------------------------------------------------
# Corpus: deterministic, realistic short facts, each with a question that should find it
# --------------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


FIRST_NAMES = _words(
    "Maria James Aisha Wei Olga Pedro Fatima Liam Noah Emma Sofia Mateo Yuki Hiro Priya Arjun "
    "Chloe Lucas Ines Omar Lena Tomas Zara Ivan Nadia Kofi Amara Diego Elena Felix Grace Hannah "
    "Isaac Jonas Kira Leo Mina Nils Oscar Paula Rosa Sven Tara Umar Vera Wanda Xavier Yara"
)
LAST_NAMES = _words(
    "Lopez Smith Khan Chen Petrova Silva Haddad Murphy Garcia Rossi Tanaka Sato Patel Sharma "
    "Dubois Martin Ferreira Nakamura Novak Kowalski Jensen Larsen Okafor Mensah Costa Moreau "
    "Schmidt Weber Fischer Horvat Ivanova Jovanovic Kim Park Nguyen Tran Ali Hassan Berg "
    "Lindqvist Moller Nielsen Olsen Reyes Santos Torres Vargas Wright"
)
COMPANY_STEMS = _words(
    "Northwind Contoso Fabrikam Tailspin Litware Adatum Proseware Woodgrove Lucerne Alpine "
    "Coho Humongous Lamna Relecloud Trey Wingtip Acme Globex Initech Hooli Vandelay Soylent "
    "Tyrell Cyberdyne Wonka Oscorp Umbrella Stark Wayne Bluth Dunder Monarch Nakatomi Sterling "
    "Aperture Virtucon Brightwater Redpine Silverline Oakridge"
)
COMPANY_SUFFIXES = _words(
    "Labs Logistics Foods Health Systems Partners Bakery Studio Motors Media Dental Legal "
    "Energy Analytics Retail Travel"
)
PRODUCTS = _words(
    "Ledger Pulse Beacon Atlas Harbor Nimbus Orbit Quill Relay Sentry Tandem Vista Cobalt "
    "Fathom Keystone Lumen"
)
PLANS = ("Free", "Starter", "Team", "Pro", "Business", "Enterprise")
CHANNELS = ("email", "phone", "SMS", "Slack", "WhatsApp", "Teams", "video call", "post")
DAY_PARTS = ("morning", "afternoon", "evening")
CITIES = _words(
    "Lisbon Berlin Austin Toronto Nairobi Osaka Sydney Denver Madrid Warsaw Dublin Seoul "
    "Chicago Lagos Oslo Zurich Boston Manila Lima Prague Vienna Helsinki Porto Bogota"
)
ROLES = (
    "CFO",
    "CTO",
    "procurement lead",
    "office manager",
    "IT admin",
    "head of support",
    "operations director",
    "founder",
)
LANGUAGES = ("English", "Spanish", "Portuguese", "German", "French", "Japanese", "Polish", "Korean")
ISSUES = (
    "crashes when exporting CSV",
    "logs users out after an update",
    "shows the wrong currency",
    "drops attachments over 10 MB",
    "sends duplicate invoices",
    "loses draft notes",
    "times out on large reports",
    "ignores the dark mode setting",
)
SYSTEMS = ("Windows 11", "macOS", "iPadOS", "Android", "Ubuntu", "ChromeOS")
REASONS = (
    "budget cuts",
    "a merger",
    "a move to an in-house tool",
    "low usage",
    "missing SSO support",
    "the price increase",
)
INTEGRATIONS = ("Salesforce", "HubSpot", "Zendesk", "Shopify", "QuickBooks", "Xero", "Jira")
MONTHS = _words(
    "January February March April May June July August September October November December"
)

# Content words that occur nowhere in the corpus (checked at run time), for queries that miss.
MISS_WORDS = _words(
    "zeppelin glacier saxophone volcano origami trombone meteorite platypus igloo kazoo "
    "marzipan tarantula lighthouse canoe walrus avalanche harpsichord narwhal sundial quasar "
    "yodel geyser mammoth catapult"
)
MISS_FRAMES = (
    "What do we know about the {0} {1}?",
    "Who ordered the {0} for the {1}?",
    "{0} {1}",
    "Anything on the {0}?",
)
# The only words of a miss query allowed to occur in the corpus (all of them function words).
MISS_FRAME_WORDS = frozenset(_words("what do we know about the who for on"))


@dataclass(frozen=True, slots=True)
class CorpusFact:
    text: str
    tags: tuple[str, ...]
    question: str  # a natural question this fact answers (used as a "hit" query)


def _date(rng: random.Random) -> str:
    day = datetime(2022, 1, 1, tzinfo=UTC).toordinal() + rng.randrange(4 * 365)
    moment = datetime.fromordinal(day)
    if rng.random() < 0.5:
        return moment.strftime("%Y-%m-%d")
    return f"{MONTHS[moment.month - 1]} {moment.day}, {moment.year}"


def _fact(rng: random.Random) -> CorpusFact:
    person = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    company = f"{rng.choice(COMPANY_STEMS)} {rng.choice(COMPANY_SUFFIXES)}"
    product = rng.choice(PRODUCTS)
    template = rng.randrange(11)
    if template == 0:
        return CorpusFact(
            f"{person} at {company} is on the {rng.choice(PLANS)} plan since {_date(rng)}.",
            ("customer", "plan"),
            f"Which plan is {person} at {company} on?",
        )
    if template == 1:
        return CorpusFact(
            f"{person} prefers {rng.choice(CHANNELS)} and only wants to be contacted in the "
            f"{rng.choice(DAY_PARTS)}.",
            ("preference", "contact"),
            f"How does {person} want to be contacted?",
        )
    if template == 2:
        return CorpusFact(
            f"{company} renewed {product} for {rng.randrange(2, 400)} seats on {_date(rng)}.",
            ("renewal", "account"),
            f"When did {company} renew {product}?",
        )
    if template == 3:
        invoice = f"INV-{rng.randrange(10_000, 99_999)}"
        return CorpusFact(
            f"Invoice {invoice} for {company} ({rng.randrange(90, 20_000)} USD) is overdue "
            f"since {_date(rng)}.",
            ("billing", "invoice"),
            f"Is invoice {invoice} still overdue?",
        )
    if template == 4:
        return CorpusFact(
            f"{person} reported that {product} {rng.randrange(1, 9)}.{rng.randrange(20)} "
            f"{rng.choice(ISSUES)} on {rng.choice(SYSTEMS)}.",
            ("support", "bug"),
            f"What bug did {person} report in {product}?",
        )
    if template == 5:
        return CorpusFact(
            f"Ship the {product} starter kit for {company} to the {rng.choice(CITIES)} office "
            f"before {_date(rng)}.",
            ("shipping",),
            f"Where should the {product} kit for {company} be shipped?",
        )
    if template == 6:
        role = rng.choice(ROLES)
        return CorpusFact(
            f"{person} is the {role} at {company} and approves purchases above "
            f"{rng.randrange(1, 50) * 500} USD.",
            ("contact", "role"),
            f"Who is the {role} at {company}?",
        )
    if template == 7:
        return CorpusFact(
            f"{person} works from {rng.choice(CITIES)} and prefers support in "
            f"{rng.choice(LANGUAGES)}.",
            ("preference", "language"),
            f"Which language does {person} prefer for support?",
        )
    if template == 8:
        return CorpusFact(
            f"{company} asked to cancel {product} at the end of {rng.choice(MONTHS)} because of "
            f"{rng.choice(REASONS)}.",
            ("churn", "account"),
            f"Why does {company} want to cancel {product}?",
        )
    if template == 9:
        return CorpusFact(
            f"{company} syncs {product} with {rng.choice(INTEGRATIONS)} using the API key ending "
            f"in {rng.randrange(16**4):04x}.",
            ("integration",),
            f"Which integration does {company} use with {product}?",
        )
    return CorpusFact(
        f"{person} from {company} has a {product} demo booked for {_date(rng)} at "
        f"{rng.randrange(8, 18)}:{rng.choice(('00', '15', '30', '45'))}.",
        ("meeting", "demo"),
        f"When is the {product} demo with {person}?",
    )


def generate_corpus(count: int, seed: int) -> list[CorpusFact]:
    """``count`` distinct facts; a prefix of a larger corpus with the same seed is the same."""
    rng = random.Random(seed)
    seen: set[str] = set()
    facts: list[CorpusFact] = []
    while len(facts) < count:
        fact = _fact(rng)
        if fact.text not in seen:
            seen.add(fact.text)
            facts.append(fact)
    return facts


@dataclass(frozen=True, slots=True)
class QuerySet:
    hits: list[str]
    targets: list[str]  # the text of the fact each hit query was written from
    misses: list[str]


def build_queries(
    corpus: Sequence[CorpusFact], size: int, hits: int, misses: int, seed: int
) -> QuerySet:
    rng = random.Random(seed * 1_000_003 + size)
    picked = rng.sample(range(size), min(hits, size))
    miss_rng = random.Random(seed * 1_000_003 + 1)
    miss_queries = []
    for _ in range(misses):
        first, second = miss_rng.sample(MISS_WORDS, 2)
        miss_queries.append(miss_rng.choice(MISS_FRAMES).format(first, second))
    return QuerySet(
        hits=[corpus[i].question for i in picked],
        targets=[corpus[i].text for i in picked],
        misses=miss_queries,
    )


def check_misses(corpus: Iterable[CorpusFact], misses: Iterable[str]) -> None:
    """Every word of a miss query that occurs in the corpus must be a frame function word."""
    vocabulary: set[str] = set()
    for fact in corpus:
        vocabulary.update(tokenize(" ".join([fact.text, *fact.tags])))
    clash = sorted(({t for q in misses for t in tokenize(q)} & vocabulary) - MISS_FRAME_WORDS)
    if clash:
        raise SystemExit(f"miss-query words occur in the corpus: {clash}")


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


@contextmanager
def _no_gc() -> Iterator[None]:
    """Collect, then keep the cyclic GC out of a timed window (as ``timeit`` does)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def percentile(samples: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks; ``q`` in [0, 1]."""
    ordered = sorted(samples)
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Latency:
    p50_ms: float
    p95_ms: float
    samples: int

    @classmethod
    def of(cls, samples_ns: Sequence[int]) -> Latency:
        ms = [sample / 1e6 for sample in samples_ns]
        return cls(percentile(ms, 0.50), percentile(ms, 0.95), len(ms))


@dataclass
class StoreFigures:
    hit: Latency
    miss: Latency
    all: Latency
    cold_ms: float  # median of open + first recall on a freshly opened store
    cold_open_ms: float  # medians of the parts
    cold_recall_ms: float
    close_ms: float  # median close after that recall (not part of cold)
    writes_per_s: float  # while the store grew to this size
    write_p50_ms: float
    write_p99_ms: float
    written: int
    miss_queries_with_results: int
    target_in_top5: float  # share of hit queries whose source fact is in the top 5
    passes: int


@dataclass
class SizeFigures:
    size: int
    ours: StoreFigures
    baseline: StoreFigures
    top5_overlap: float  # mean |ours ∩ baseline| / max(len) over hit queries
    ratios: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]
    hits: int
    misses: int
    seed: int
    budget_s: float  # timed recall time per (store, size), after the warm-up pass
    min_passes: int
    max_passes: int
    cold_runs: int
    fsync_sample: int
    base_dir: str | None


QUICK = {"sizes": (1000, 5000), "budget": 0.5, "cold": 3, "fsync": 200, "hits": 20, "misses": 6}
DEFAULT = {"sizes": (1000, 10_000, 50_000), "budget": 3.0, "cold": 5, "fsync": 1000}


def write_all(
    remember: Callable[[str, Sequence[str]], object], facts: Sequence[CorpusFact]
) -> list[int]:
    """Write every fact through ``remember``; the nanoseconds each write took."""
    out: list[int] = []
    with _no_gc():
        for fact in facts:
            start = time.perf_counter_ns()
            remember(fact.text, fact.tags)
            out.append(time.perf_counter_ns() - start)
    return out


@dataclass
class DurableWrites:
    """Ours against the baseline with an fsync per append, interleaved on fresh stores."""

    writes: int
    block: int
    ours_per_s: float
    baseline_per_s: float
    ours_p50_ms: float
    ours_p99_ms: float
    baseline_p50_ms: float
    baseline_p99_ms: float


def durable_writes(root: Path, facts: Sequence[CorpusFact], block: int = 50) -> DurableWrites:
    """The same-durability comparison: alternate blocks of writes so both see the same disk."""
    ours = FactStore.open(root / "durable-ours" / "facts.db")
    synced = JsonlBaselineStore.open(root / "durable-baseline" / "facts.jsonl", fsync=True)
    ours_ns: list[int] = []
    base_ns: list[int] = []
    try:
        for start in range(0, len(facts), block):
            chunk = facts[start : start + block]
            ours_ns += write_all(ours.remember, chunk)
            base_ns += write_all(synced.remember, chunk)
    finally:
        ours.close()
        synced.close()
    return DurableWrites(
        writes=len(facts),
        block=block,
        ours_per_s=len(ours_ns) / (sum(ours_ns) / 1e9),
        baseline_per_s=len(base_ns) / (sum(base_ns) / 1e9),
        ours_p50_ms=percentile(ours_ns, 0.5) / 1e6,
        ours_p99_ms=percentile(ours_ns, 0.99) / 1e6,
        baseline_p50_ms=percentile(base_ns, 0.5) / 1e6,
        baseline_p99_ms=percentile(base_ns, 0.99) / 1e6,
    )


def time_recalls(
    recall: Callable[[str], list[str]], queries: Sequence[str], config: Config
) -> tuple[list[list[int]], list[list[str]], int]:
    """One untimed warm-up pass (its results are returned), then timed passes of every query.

    The number of timed passes fills ``budget_s`` (estimated from the warm-up pass), clamped to
    ``[min_passes, max_passes]``. Returns per-query samples (ns), warm-up results, passes.
    """
    start = time.perf_counter_ns()
    results = [recall(query) for query in queries]
    warm_ns = max(time.perf_counter_ns() - start, 1)
    passes = int(config.budget_s * 1e9 / warm_ns)
    passes = max(config.min_passes, min(config.max_passes, passes))
    samples: list[list[int]] = [[] for _ in queries]
    with _no_gc():
        for _ in range(passes):
            for index, query in enumerate(queries):
                begin = time.perf_counter_ns()
                recall(query)
                samples[index].append(time.perf_counter_ns() - begin)
    return samples, results, passes


@dataclass
class ColdSample:
    open_ms: float
    recall_ms: float
    close_ms: float

    @property
    def total_ms(self) -> float:
        return self.open_ms + self.recall_ms


class _Opened(Protocol):
    def recall(self, query: str, k: int = 5) -> Sequence[object]: ...

    def close(self) -> None: ...


def time_cold(
    open_store: Callable[[], _Opened], queries: Sequence[str], runs: int
) -> list[ColdSample]:
    """Open the store afresh and run one query, ``runs`` times (a new query each time).

    What a bundle does at session start: the cold figure is open + first recall; the close
    (ours runs ``PRAGMA optimize`` there) is timed apart, it happens at session end.
    """
    out = []
    for run in range(runs):
        query = queries[run % len(queries)]
        with _no_gc():
            start = time.perf_counter_ns()
            store = open_store()
            opened = time.perf_counter_ns()
            store.recall(query, 5)
            recalled = time.perf_counter_ns()
            store.close()
            closed = time.perf_counter_ns()
        out.append(
            ColdSample((opened - start) / 1e6, (recalled - opened) / 1e6, (closed - recalled) / 1e6)
        )
    return out


def _ours_texts(store: FactStore) -> Callable[[str], list[str]]:
    def recall(query: str) -> list[str]:
        return [hit.fact.text for hit in store.recall(query, 5)]

    return recall


def _baseline_texts(store: JsonlBaselineStore) -> Callable[[str], list[str]]:
    def recall(query: str) -> list[str]:
        return [hit.text for hit in store.recall(query, 5)]

    return recall


def _figures(
    samples: list[list[int]],
    results: list[list[str]],
    queries: QuerySet,
    cold: list[ColdSample],
    written: int,
    write_ns: list[int],
    passes: int,
) -> StoreFigures:
    n_hits = len(queries.hits)
    hit_samples = [ns for per_query in samples[:n_hits] for ns in per_query]
    miss_samples = [ns for per_query in samples[n_hits:] for ns in per_query]
    found = sum(target in top for target, top in zip(queries.targets, results, strict=False))
    return StoreFigures(
        hit=Latency.of(hit_samples),
        miss=Latency.of(miss_samples),
        all=Latency.of(hit_samples + miss_samples),
        cold_ms=statistics.median(sample.total_ms for sample in cold),
        cold_open_ms=statistics.median(sample.open_ms for sample in cold),
        cold_recall_ms=statistics.median(sample.recall_ms for sample in cold),
        close_ms=statistics.median(sample.close_ms for sample in cold),
        writes_per_s=written / (sum(write_ns) / 1e9) if write_ns else math.nan,
        write_p50_ms=percentile(write_ns, 0.5) / 1e6,
        write_p99_ms=percentile(write_ns, 0.99) / 1e6,
        written=written,
        miss_queries_with_results=sum(1 for top in results[n_hits:] if top),
        target_in_top5=found / n_hits if n_hits else math.nan,
        passes=passes,
    )


def _overlap(ours: list[list[str]], baseline: list[list[str]]) -> float:
    rates = [
        len(set(a) & set(b)) / max(len(a), len(b)) if (a or b) else 1.0
        for a, b in zip(ours, baseline, strict=True)
    ]
    return statistics.fmean(rates) if rates else math.nan


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else math.nan


def _progress(message: str) -> None:
    print(f"[recall-bench] {message}", file=sys.stderr, flush=True)


def run(config: Config) -> tuple[list[SizeFigures], DurableWrites]:
    sizes = sorted(set(config.sizes))
    corpus = generate_corpus(sizes[-1], config.seed)
    check_misses(corpus, build_queries(corpus, sizes[0], 0, config.misses, config.seed).misses)
    figures: list[SizeFigures] = []
    with tempfile.TemporaryDirectory(prefix="specwire-recall-bench-", dir=config.base_dir) as tmp:
        ours_path = Path(tmp) / "ours" / "facts.db"
        base_path = Path(tmp) / "baseline" / "facts.jsonl"
        ours = FactStore.open(ours_path)
        base = JsonlBaselineStore.open(base_path)
        written = 0
        try:
            for size in sizes:
                segment = corpus[written:size]
                _progress(f"writing facts {written:,} -> {size:,} (ours, then baseline)")
                ours_write_ns = write_all(ours.remember, segment)
                base_write_ns = write_all(base.remember, segment)
                written = size

                queries = build_queries(corpus, size, config.hits, config.misses, config.seed)
                all_queries = queries.hits + queries.misses
                _progress(f"size {size:,}: timing {len(all_queries)} queries per store")
                ours_samples, ours_results, ours_passes = time_recalls(
                    _ours_texts(ours), all_queries, config
                )
                base_samples, base_results, base_passes = time_recalls(
                    _baseline_texts(base), all_queries, config
                )

                _progress(f"size {size:,}: cold open + one recall x{config.cold_runs}")
                ours.close()
                base.close()
                ours_cold = time_cold(
                    lambda: FactStore.open(ours_path), queries.hits, config.cold_runs
                )
                base_cold = time_cold(
                    lambda: JsonlBaselineStore.open(base_path), queries.hits, config.cold_runs
                )
                ours = FactStore.open(ours_path)
                base = JsonlBaselineStore.open(base_path)

                n_hits = len(queries.hits)
                row = SizeFigures(
                    size=size,
                    ours=_figures(
                        ours_samples,
                        ours_results,
                        queries,
                        ours_cold,
                        len(segment),
                        ours_write_ns,
                        ours_passes,
                    ),
                    baseline=_figures(
                        base_samples,
                        base_results,
                        queries,
                        base_cold,
                        len(segment),
                        base_write_ns,
                        base_passes,
                    ),
                    top5_overlap=_overlap(ours_results[:n_hits], base_results[:n_hits]),
                )
                o, b = row.ours, row.baseline
                row.ratios = {
                    "hit_p50": _ratio(b.hit.p50_ms, o.hit.p50_ms),
                    "hit_p95": _ratio(b.hit.p95_ms, o.hit.p95_ms),
                    "miss_p50": _ratio(b.miss.p50_ms, o.miss.p50_ms),
                    "miss_p95": _ratio(b.miss.p95_ms, o.miss.p95_ms),
                    "all_p50": _ratio(b.all.p50_ms, o.all.p50_ms),
                    "all_p95": _ratio(b.all.p95_ms, o.all.p95_ms),
                    "cold": _ratio(b.cold_ms, o.cold_ms),
                    "writes_per_s": _ratio(b.writes_per_s, o.writes_per_s),
                }
                figures.append(row)
        finally:
            ours.close()
            base.close()

        _progress(f"durable writes: {config.fsync_sample:,} per store, interleaved")
        durable = durable_writes(Path(tmp), corpus[: config.fsync_sample])
    return figures, durable


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def _fs_type(path: str) -> str:
    """The filesystem type holding ``path`` (Linux, best effort)."""
    best, kind = "", "unknown"
    with suppress(OSError):
        real = os.path.realpath(path)
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) < 3 or len(parts[1]) < len(best):
                continue
            if real == parts[1] or real.startswith(parts[1].rstrip("/") + "/"):
                best, kind = parts[1], parts[2]
    return kind


def _cpu_model() -> str:
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine_info(config: Config) -> dict[str, Any]:
    temp_dir = config.base_dir or tempfile.gettempdir()
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpus": os.cpu_count(),
        "cpus_usable": affinity,
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "temp_dir": temp_dir,
        "temp_dir_fs": _fs_type(temp_dir),
        "code": code_identity(),
    }


def code_identity() -> dict[str, Any]:
    """Which ``runtime/facts`` was measured: its path, a content hash, the git commit and
    whether that package differs from the commit (the figures belong to these bytes)."""
    source = inspect.getsourcefile(FactStore)
    if source is None:
        return {}
    package = Path(source).resolve().parent
    digest = hashlib.sha256()
    for module in sorted(package.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes() + b"\0")
    out: dict[str, Any] = {"runtime_facts": str(package), "sha256": digest.hexdigest()[:16]}

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=package, capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    out["git_head"] = git("rev-parse", "--short", "HEAD")
    status = git("status", "--porcelain", "--", ".")
    out["uncommitted_changes"] = None if status is None else bool(status)
    return out


def _describe_code(code: dict[str, Any]) -> str:
    if not code:
        return "unknown"
    where = code["runtime_facts"]
    if code.get("git_head") is None:
        return f"{where} sha256:{code['sha256']} (not a git checkout)"
    dirty = " + uncommitted changes" if code.get("uncommitted_changes") else ""
    return f"{where} at {code['git_head']}{dirty}, sha256:{code['sha256']}"


def _ms(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def _x(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def render(
    figures: Sequence[SizeFigures], durable: DurableWrites, info: dict[str, Any], config: Config
) -> str:
    head = (
        f"{'size':>7}  {'store':<9} {'hit p50':>8} {'hit p95':>8} {'miss p50':>8} "
        f"{'miss p95':>8} {'all p50':>8} {'all p95':>8} {'cold':>8} {'writes/s':>9}"
    )
    lines = [
        "fact recall: specwire FactStore (SQLite FTS5) vs CrewHaus-style JSONL + BM25 baseline",
        f"machine: {info['cpus']} CPUs ({info['cpu_model']}), Python {info['python']}, "
        f"SQLite {info['sqlite']}, temp dir {info['temp_dir']} ({info['temp_dir_fs']})",
        f"code: {_describe_code(info['code'])}",
        f"queries per size: {config.hits} hit + {config.misses} miss, top k=5; "
        "latencies in ms (warm, in-process); cold = open + one recall, median of "
        f"{config.cold_runs}",
        "",
        head,
        "-" * len(head),
    ]
    for row in figures:
        for label, fig in (("ours", row.ours), ("baseline", row.baseline)):
            lines.append(
                f"{row.size:>7,}  {label:<9} {_ms(fig.hit.p50_ms):>8} {_ms(fig.hit.p95_ms):>8} "
                f"{_ms(fig.miss.p50_ms):>8} {_ms(fig.miss.p95_ms):>8} {_ms(fig.all.p50_ms):>8} "
                f"{_ms(fig.all.p95_ms):>8} {_ms(fig.cold_ms):>8} {fig.writes_per_s:>9,.0f}"
            )
        r = row.ratios
        lines.append(
            f"{'':>7}  {'base/ours':<9} {_x(r['hit_p50']):>8} {_x(r['hit_p95']):>8} "
            f"{_x(r['miss_p50']):>8} {_x(r['miss_p95']):>8} {_x(r['all_p50']):>8} "
            f"{_x(r['all_p95']):>8} {_x(r['cold']):>8} {_x(r['writes_per_s']):>9}"
        )
        lines.append(
            f"{'':>7}  sanity: top-5 overlap (hit queries) {row.top5_overlap:.0%} | source fact "
            f"in top 5: ours {row.ours.target_in_top5:.0%}, baseline "
            f"{row.baseline.target_in_top5:.0%}"
        )
        lines.append(
            f"{'':>7}          miss queries with any result: ours "
            f"{row.ours.miss_queries_with_results}/{config.misses}, baseline "
            f"{row.baseline.miss_queries_with_results}/{config.misses} | cold parts: ours open "
            f"{_ms(row.ours.cold_open_ms)} + recall {_ms(row.ours.cold_recall_ms)}, baseline "
            f"open {_ms(row.baseline.cold_open_ms)} + recall {_ms(row.baseline.cold_recall_ms)}"
        )
    lines += [
        "",
        "base/ours = baseline / ours in every column: above 1x means ours is faster for latency, "
        "and the baseline is faster for writes/s.",
        "writes/s: remember() throughput while the store grew to that size. Ours commits one "
        "transaction per fact with synchronous=FULL (an fsync per write); the baseline appends "
        "without fsync.",
        f"same durability (baseline fsyncs each append), {durable.writes:,} writes per store on "
        f"fresh stores, interleaved in blocks of {durable.block}: ours "
        f"{durable.ours_per_s:,.0f}/s (p50 {_ms(durable.ours_p50_ms)} ms, p99 "
        f"{_ms(durable.ours_p99_ms)} ms), baseline {durable.baseline_per_s:,.0f}/s (p50 "
        f"{_ms(durable.baseline_p50_ms)} ms, p99 {_ms(durable.baseline_p99_ms)} ms), "
        f"base/ours {_x(_ratio(durable.baseline_per_s, durable.ours_per_s))}",
        "The rankers differ on purpose (FTS5 bm25 k1=1.2 with clamped idf and stop-word pruning "
        "vs k1=1.5, b=0.75, no stop words): identical rankings are not expected, overlap is a "
        "sanity check only.",
        "If the peer re-read its JSONL on every recall, its per-query cost would be the baseline's "
        "cold column.",
    ]
    return "\n".join(lines)


def _parse_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"sizes must be integers: {text!r}") from exc
    if not sizes or any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sizes


def parse_args(argv: Sequence[str] | None) -> tuple[Config, str | None]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_parse_sizes, help="corpus sizes, e.g. 1000,10000,50000")
    parser.add_argument("--quick", action="store_true", help="small sizes, short budgets (~10 s)")
    parser.add_argument("--hits", type=int, help="hit queries per size (default 30; quick 20)")
    parser.add_argument("--misses", type=int, help="miss queries per size (default 10; quick 6)")
    parser.add_argument("--seed", type=int, default=20240531)
    parser.add_argument("--budget", type=float, help="timed seconds per store and size")
    parser.add_argument("--cold-runs", type=int, help="cold open + recall repetitions")
    parser.add_argument(
        "--fsync-sample", type=int, help="writes per store for the same-durability comparison"
    )
    parser.add_argument("--dir", help="where the temporary stores go (default: system temp dir)")
    parser.add_argument(
        "--json", metavar="PATH", help="also write the figures as JSON ('-': stdout)"
    )
    args = parser.parse_args(argv)
    if args.hits is not None and args.hits < 1:
        parser.error("--hits must be at least 1")
    if args.misses is not None and args.misses < 0:
        parser.error("--misses must not be negative")
    if args.cold_runs is not None and args.cold_runs < 1:
        parser.error("--cold-runs must be at least 1")
    if args.fsync_sample is not None and args.fsync_sample < 1:
        parser.error("--fsync-sample must be at least 1")
    if args.dir is not None and not Path(args.dir).is_dir():
        parser.error(f"--dir {args.dir}: not an existing directory")
    preset: dict[str, Any] = QUICK if args.quick else DEFAULT
    return Config(
        sizes=args.sizes or preset["sizes"],
        hits=args.hits if args.hits is not None else preset.get("hits", 30),
        misses=args.misses if args.misses is not None else preset.get("misses", 10),
        seed=args.seed,
        budget_s=args.budget if args.budget is not None else preset["budget"],
        min_passes=3,
        max_passes=1000,
        cold_runs=args.cold_runs if args.cold_runs is not None else preset["cold"],
        fsync_sample=args.fsync_sample if args.fsync_sample is not None else preset["fsync"],
        base_dir=args.dir,
    ), args.json


def _finite(value: Any) -> Any:
    """NaN (an empty sample) becomes null, so the JSON output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def main(argv: Sequence[str] | None = None) -> int:
    config, json_path = parse_args(argv)
    info = machine_info(config)
    started = time.perf_counter()
    figures, durable = run(config)
    elapsed = time.perf_counter() - started
    report: dict[str, Any] = {
        "machine": info,
        "config": asdict(config),
        "elapsed_s": round(elapsed, 1),
        "sizes": [asdict(row) for row in figures],
        "durable_writes": asdict(durable),
    }
    if json_path != "-":
        print(render(figures, durable, info, config))
        print(f"\ntotal {elapsed:.1f} s")
    if json_path == "-":
        json.dump(_finite(report), sys.stdout, indent=2, allow_nan=False)
        print()
    elif json_path:
        text = json.dumps(_finite(report), indent=2, allow_nan=False)
        Path(json_path).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

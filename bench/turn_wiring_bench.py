"""What a per-turn host pays to wire memory around one recall, with and without a store pool.

A benchmark, not a test: it prints figures and never asserts timings. Three ways to run the
recall a turn starts with, in one process, on one fact store:

- **(a) bare recall**: ``FactStore.recall(query, k)`` on a store that stays open (the floor).
- **(b) per-turn, no pool**: what a channel or managed bundle's ``build_turn(..., resources)``
  does when its ``HostResources`` lend no pool: ``builtin_catalog(TOOLS, cwd)``,
  ``wire_memory(FRAGMENT, MemoryDeps(..., resources=resources))``, the memory seam's recall,
  then ``wired.close()`` (the fact store is opened, migrated, optimized and closed).
- **(c) per-turn, pooled**: the same with the resources a serving host lends,
  ``runtime.hosts.resources.host_resources()`` (the store is borrowed from its pool and given
  back; closing and its maintenance run on the pool's reaper thread).

Also shown, for reading (c): **(w)**, the pooled wiring and release alone, without the recall.

The fragment and tools come from the spec (default ``examples/managed-concierge.yaml``), lowered
in process exactly as ``codegen fragment`` prints it. The store is filled with the corpus of
``recall_bench.py`` and queried with its hit and miss questions. Modes take turns in blocks, in
a rotating order, each block after an untimed warm-up (``_warm_up_calls``), with the cyclic GC
paused while it runs.

Run from the repository root:

    .venv/bin/python bench/turn_wiring_bench.py                 # 10,000 facts, about 15 s
    .venv/bin/python bench/turn_wiring_bench.py --quick         # 2,000 facts, about 5 s
    .venv/bin/python bench/turn_wiring_bench.py --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import math
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from recall_bench import build_queries, code_identity, generate_corpus, percentile

from specwire.ir import load_spec, lower
from specwire.runtime.core.ids import conversation_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tenancy import Tenant, build_tenant
from specwire.runtime.facts.store import FactStore
from specwire.runtime.hosts.resources import host_resources
from specwire.runtime.tools.builtin import builtin_catalog
from specwire.runtime.wiring import HostResources, MemoryDeps, wire_memory

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SPEC = ROOT / "examples" / "managed-concierge.yaml"
GOAL = 1.5  # (c)/(a) at p50, issue 7 item 4
MODES = ("bare", "cold", "pooled", "wiring")
POOLED = ("pooled", "wiring")
LABELS = {
    "bare": "(a) bare recall, open store",
    "cold": "(b) per-turn, no pool",
    "pooled": "(c) per-turn, host's pool",
    "wiring": "(w) pooled wiring only, no recall",
}
TurnCall = Callable[[HostResources], object]


@dataclass(frozen=True)
class Config:
    spec: str
    facts: int
    rounds: int
    block: int
    seed: int
    base_dir: str | None


@dataclass
class Latency:
    p50_ms: float
    p95_ms: float
    samples: int

    @classmethod
    def of(cls, samples_ns: Sequence[int]) -> Latency:
        ms = [sample / 1e6 for sample in samples_ns]
        return cls(percentile(ms, 0.50), percentile(ms, 0.95), len(ms))


@dataclass(frozen=True)
class Setup:
    fragment: dict[str, Any]
    tools: tuple[str, ...]
    spec_name: str
    target: str
    cwd: Path
    tenant: Tenant | None
    home: Path
    recall_k: int


def _progress(message: str) -> None:
    print(f"[turn-wiring-bench] {message}", file=sys.stderr, flush=True)


def prepare(config: Config, tmp: Path) -> Setup:
    spec = load_spec(Path(config.spec))
    fragment = lower(spec).to_data()
    memory = fragment.get("memory")
    if not isinstance(memory, dict):
        raise SystemExit(f"{config.spec}: the spec wires no fact memory; nothing to measure")
    tenant: Tenant | None = None
    cwd = tmp / "work"
    if spec.target == "managed":
        tenants = [t.id for t in getattr(spec, "tenants", ())]
        tenant = build_tenant(tenants[0] if tenants else "bench-tenant", tmp / "tenants")
        cwd = tenant.workspace
    cwd.mkdir(parents=True, exist_ok=True)
    return Setup(
        fragment=fragment,
        tools=tuple(spec.tools),
        spec_name=spec.name,
        target=spec.target,
        cwd=cwd,
        tenant=tenant,
        home=tmp / "home",
        recall_k=int(memory.get("recall_k") or 5),
    )


def fill(store: FactStore, config: Config) -> list[str]:
    """Write the corpus through ``remember``; return the queries (hits, then misses)."""
    corpus = generate_corpus(config.facts, config.seed)
    started = time.perf_counter()
    for index, fact in enumerate(corpus, 1):
        store.remember(fact.text, fact.tags)
        if index % 2000 == 0:
            _progress(f"wrote {index:,} / {config.facts:,} facts")
    _progress(f"store filled in {time.perf_counter() - started:.1f} s")
    queries = build_queries(corpus, config.facts, 30, 10, config.seed)
    return queries.hits + queries.misses


def turn_calls(setup: Setup, store: FactStore, queries: Sequence[str]) -> dict[str, TurnCall]:
    """One call per mode, given the resources the host lends. A turn does what a generated
    ``build_turn`` does, then recalls.

    Each mode walks the same queries in the same order, from its own cycle.
    """
    sessions = itertools.cycle(
        conversation_session_id(setup.spec_name, setup.target, "bench", f"c{i}") for i in range(8)
    ).__next__

    def wire(resources: HostResources) -> Any:
        catalog = builtin_catalog(setup.tools, setup.cwd)
        deps = MemoryDeps(
            catalog=catalog,
            cwd=setup.cwd,
            tenant=setup.tenant,
            session_scope=sessions(),
            home_dir=setup.home,
            resources=resources,
        )
        return wire_memory(setup.fragment, deps)

    def bare() -> TurnCall:
        next_query = itertools.cycle(queries).__next__
        return lambda resources: store.recall(next_query(), setup.recall_k)

    def turn() -> TurnCall:
        next_query = itertools.cycle(queries).__next__

        def one_turn(resources: HostResources) -> object:
            wired = wire(resources)
            try:
                return wired.options["memory"].recall(next_query(), setup.recall_k)
            finally:
                wired.close()

        return one_turn

    def wiring_only(resources: HostResources) -> object:
        wire(resources).close()
        return None

    return {"bare": bare(), "cold": turn(), "pooled": turn(), "wiring": wiring_only}


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _mode_resources(mode: str) -> contextlib.AbstractContextManager[HostResources]:
    """What the host lends a block's turns: a fresh pool (closed after the block) for the
    pooled modes, resources without a pool otherwise."""
    if mode in POOLED:
        return host_resources()
    return contextlib.nullcontext(HostResources())


def _warm_up_calls(mode: str, queries: int) -> int:
    """Untimed calls before a block. A pooled block opens its store anew (a new pool), so it
    walks every query once, as (a)'s store, open all along, has: a serving process's pooled
    store has a warm page cache too. Every (b) turn starts cold."""
    return queries if mode in ("bare", "pooled") else 1


def measure(calls: dict[str, TurnCall], queries: int, config: Config) -> dict[str, list[int]]:
    samples: dict[str, list[int]] = {mode: [] for mode in MODES}
    for round_index in range(config.rounds):
        shift = round_index % len(MODES)
        for mode in MODES[shift:] + MODES[:shift]:
            call = calls[mode]
            with _mode_resources(mode) as resources:
                for _ in range(_warm_up_calls(mode, queries)):
                    call(resources)
                with _no_gc():
                    for _ in range(config.block):
                        start = time.perf_counter_ns()
                        call(resources)
                        samples[mode].append(time.perf_counter_ns() - start)
        _progress(f"round {round_index + 1} / {config.rounds}")
    return samples


def run(config: Config) -> tuple[Setup, dict[str, Latency]]:
    with tempfile.TemporaryDirectory(prefix="specwire-turn-bench-", dir=config.base_dir) as tmp:
        setup = prepare(config, Path(tmp))
        db = StoreLayout.for_cwd(setup.cwd, setup.spec_name, setup.tenant).facts_db
        with FactStore.open(db) as store:
            queries = fill(store, config)
            samples = measure(turn_calls(setup, store, queries), len(queries), config)
    return setup, {mode: Latency.of(samples[mode]) for mode in MODES}


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else math.nan


def ratios(figures: dict[str, Latency]) -> dict[str, float]:
    bare = figures["bare"]
    cold, pooled = figures["cold"], figures["pooled"]
    return {
        "cold_over_bare_p50": _ratio(cold.p50_ms, bare.p50_ms),
        "cold_over_bare_p95": _ratio(cold.p95_ms, bare.p95_ms),
        "pooled_over_bare_p50": _ratio(pooled.p50_ms, bare.p50_ms),
        "pooled_over_bare_p95": _ratio(pooled.p95_ms, bare.p95_ms),
        "pooled_over_cold_p50": _ratio(pooled.p50_ms, cold.p50_ms),
        "pooled_over_cold_p95": _ratio(pooled.p95_ms, cold.p95_ms),
    }


def machine_info(config: Config) -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpus": os.cpu_count(),
        "cpus_usable": affinity,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "temp_dir": config.base_dir or tempfile.gettempdir(),
        "code": code_identity(),
    }


def render(
    setup: Setup, figures: dict[str, Latency], found: dict[str, float], info: dict[str, Any]
) -> str:
    load = info["load_average"]
    lines = [
        f"turn wiring: spec {setup.spec_name} ({setup.target}), "
        f"tools {', '.join(setup.tools) or 'none'}, "
        f"recall k={setup.recall_k}",
        f"machine: {info['cpus']} CPUs, Python {info['python']}, SQLite {info['sqlite']}"
        + (f", load {load[0]:.2f}" if load else ""),
        "",
        f"{'':36} {'p50 ms':>8} {'p95 ms':>8} {'samples':>8}",
    ]
    for mode in MODES:
        row = figures[mode]
        lines.append(f"{LABELS[mode]:36} {row.p50_ms:8.3f} {row.p95_ms:8.3f} {row.samples:8}")
    verdict = "PASS" if found["pooled_over_bare_p50"] <= GOAL else "MISS"
    lines += [
        "",
        f"(b)/(a): p50 {found['cold_over_bare_p50']:.2f}x  p95 {found['cold_over_bare_p95']:.2f}x",
        f"(c)/(b): p50 {found['pooled_over_cold_p50']:.2f}x  "
        f"p95 {found['pooled_over_cold_p95']:.2f}x   (with the pool / without)",
        f"(c)/(a): p50 {found['pooled_over_bare_p50']:.2f}x  "
        f"p95 {found['pooled_over_bare_p95']:.2f}x   goal: p50 <= {GOAL}x  {verdict}",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> tuple[Config, str | None]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--spec", default=str(DEFAULT_SPEC), help="a channel or managed spec")
    parser.add_argument("--facts", type=int, help="facts in the store (default 10,000)")
    parser.add_argument("--rounds", type=int, help="blocks per mode (default 15)")
    parser.add_argument("--block", type=int, default=20, help="timed calls per block")
    parser.add_argument("--quick", action="store_true", help="2,000 facts, 5 rounds")
    parser.add_argument("--seed", type=int, default=20240531)
    parser.add_argument("--dir", help="where the temporary store goes (default: system temp dir)")
    parser.add_argument(
        "--json", metavar="PATH", help="also write the figures as JSON ('-': stdout)"
    )
    args = parser.parse_args(argv)
    facts = args.facts if args.facts is not None else 2000 if args.quick else 10_000
    rounds = args.rounds if args.rounds is not None else 5 if args.quick else 15
    if facts < 40:
        parser.error("--facts must be at least 40 (30 hit queries and some to miss)")
    if rounds < 1 or args.block < 1:
        parser.error("--rounds and --block must be at least 1")
    if args.dir is not None and not Path(args.dir).is_dir():
        parser.error(f"--dir {args.dir}: not an existing directory")
    if not Path(args.spec).is_file():
        parser.error(f"--spec {args.spec}: not a file")
    return Config(args.spec, facts, rounds, args.block, args.seed, args.dir), args.json


def main(argv: Sequence[str] | None = None) -> int:
    config, json_path = parse_args(argv)
    info = machine_info(config)
    setup, figures = run(config)
    found = ratios(figures)
    report = {
        "machine": info,
        "config": asdict(config),
        "figures": {mode: asdict(row) for mode, row in figures.items()},
        "ratios": found,
        "goal": {
            "pooled_over_bare_p50_at_most": GOAL,
            "met": found["pooled_over_bare_p50"] <= GOAL,
        },
    }
    if json_path != "-":
        print(render(setup, figures, found, info))
    if json_path == "-":
        json.dump(report, sys.stdout, indent=2)
        print()
    elif json_path:
        Path(json_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

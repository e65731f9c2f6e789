"""What the injection scanner catches and what it costs, optionally beside an older scanner.

A benchmark, not a test: it prints tables and asserts nothing.

- **detection**: recall per malicious category and false-positive rate per benign category on
  the labelled corpus (``tests/runtime/safety/injection_corpus.tsv``), on the whole corpus and
  on its ``tune`` and ``heldout`` splits (the rules were written looking at ``tune`` only).
- **scan time**: ``scan`` per text on realistic facts (``recall_bench``'s corpus), on the
  longest fact a Remember accepts (2,000 characters of prose) and on the labelled corpus. With
  ``--baseline REV`` the scanner of that git revision is loaded beside the current one and both
  scan every text in turn (same process, same texts, interleaved), so the ratio is like for like.
- **remember()**: durable ``FactStore.remember`` on two fresh stores in the same directory, one
  with the scanner (the default) and one opened with ``screen=None``, interleaved in blocks of
  50 so disk noise hits both alike. The difference of the medians is what screening costs a
  Remember; the issue's budget is 1 ms.

Run from the repository root:

    .venv/bin/python bench/scanner_bench.py                     # 2,000 facts
    .venv/bin/python bench/scanner_bench.py --quick             # 300
    .venv/bin/python bench/scanner_bench.py --baseline 4bd8b1c  # beside that revision's scanner
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_bench import generate_corpus  # noqa: E402

from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.safety import injection  # noqa: E402
from tests.runtime.safety.labelled_corpus import CorpusItem, load_corpus  # noqa: E402

BLOCK = 50
Scan = Callable[[str], object]


def baseline_scanner(revision: str) -> Scan:
    """``scan`` from ``runtime/safety/injection.py`` as it was at ``revision``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:runtime/safety/injection.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("baseline_injection")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:injection.py", "exec"), module.__dict__)
    scan: Scan = module.scan
    return scan


def detection_table(scan: Scan, items: Sequence[CorpusItem]) -> list[str]:
    lines = [f"{'category':20} {'label':9} {'whole':>13} {'tune':>13} {'heldout':>13}"]
    categories = sorted({(not item.malicious, item.category) for item in items})
    for benign, category in [*categories, (False, "ALL"), (True, "ALL")]:
        group = [
            item
            for item in items
            if item.malicious != benign and category in ("ALL", item.category)
        ]
        cells = []
        for split in (None, "tune", "heldout"):
            chosen = [item for item in group if split in (None, item.split)]
            flagged = sum(1 for item in chosen if scan(item.text) is not None)
            cells.append(f"{flagged:3}/{len(chosen):3} {100 * flagged / max(1, len(chosen)):4.0f}%")
        measure = "fp" if benign else "recall"
        lines.append(f"{category:20} {measure:9} " + " ".join(f"{cell:>13}" for cell in cells))
    return lines


def percentiles(samples_ns: Sequence[int]) -> tuple[float, float]:
    ordered = sorted(samples_ns)
    p50 = ordered[len(ordered) // 2] / 1e6
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] / 1e6
    return p50, p95


def timed(call: Callable[[str], object], texts: Sequence[str], rounds: int) -> list[int]:
    samples: list[int] = []
    for _ in range(rounds):
        for text in texts:
            start = time.perf_counter_ns()
            call(text)
            samples.append(time.perf_counter_ns() - start)
    return samples


def timed_side_by_side(scans: Sequence[Scan], texts: Sequence[str], rounds: int) -> list[list[int]]:
    """Each scanner on each text in turn, so drift in machine load hits them alike; which one
    goes first alternates (the first call on a text is measurably slower: cold caches)."""
    samples: list[list[int]] = [[] for _ in scans]
    turn = 0
    for _ in range(rounds):
        for text in texts:
            order = list(range(len(scans)))
            if turn % 2:
                order.reverse()
            turn += 1
            for index in order:
                start = time.perf_counter_ns()
                scans[index](text)
                samples[index].append(time.perf_counter_ns() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--baseline", metavar="REV", help="also time this revision's scanner")
    args = parser.parse_args()
    count = 300 if args.quick else 2000
    facts = [fact.text for fact in generate_corpus(count * 2, seed=20261201)]
    long_text = " ".join(facts)[:2000]
    corpus = load_corpus()

    scanners: list[tuple[str, Scan]] = [("current", injection.scan)]
    if args.baseline:
        scanners.insert(0, (f"baseline {args.baseline}", baseline_scanner(args.baseline)))

    for name, scan in scanners:
        print(f"detection, {name} scanner (labelled corpus, {len(corpus)} items)")
        print("\n".join(detection_table(scan, corpus)))
        print()

    print(f"{'scan time':28} " + " ".join(f"{name + ' p50/p95 ms':>28}" for name, _ in scanners))
    medians: dict[str, list[float]] = {}
    for label, texts, rounds in (
        ("realistic facts", facts[:count], 3),
        ("2,000-char fact", [long_text], 200),
        ("labelled corpus", [item.text for item in corpus], 5),
    ):
        samples = timed_side_by_side([scan for _, scan in scanners], texts, rounds)
        figures = [percentiles(sample) for sample in samples]
        medians[label] = [p50 for p50, _ in figures]
        cells = " ".join(f"{p50:>18.4f} / {p95:<7.4f}" for p50, p95 in figures)
        print(f"{label:28} {cells}")
    if args.baseline:
        print()
        for label, (old, new) in medians.items():
            print(f"{label:28} median current/baseline = {new / old:.2f}")

    with tempfile.TemporaryDirectory() as tmp:
        screened = FactStore.open(Path(tmp) / "screened.sqlite3")
        plain = FactStore.open(Path(tmp) / "plain.sqlite3", screen=None)
        screened.remember("warm up")
        plain.remember("warm up")
        with_scan: list[int] = []
        without: list[int] = []
        for start in range(0, count, BLOCK):
            block_a = facts[start : start + BLOCK]
            block_b = facts[count + start : count + start + BLOCK]
            with_scan += timed(screened.remember, block_a, 1)
            without += timed(plain.remember, block_b, 1)
        screened.close()
        plain.close()
    print()
    print(f"{'':28} {'p50 ms':>9} {'p95 ms':>9}")
    for label, samples_ns in (
        ("remember() screened", with_scan),
        ("remember() unscreened", without),
    ):
        p50, p95 = percentiles(samples_ns)
        print(f"{label:28} {p50:9.3f} {p95:9.3f}")
    added = statistics.median(with_scan) / 1e6 - statistics.median(without) / 1e6
    ratio = statistics.median(without) / statistics.median(with_scan)
    print(
        f"\nscreening adds {added:.3f} ms to a median remember() "
        f"(unscreened/screened throughput ratio {ratio:.2f}); budget 1 ms"
    )


if __name__ == "__main__":
    main()

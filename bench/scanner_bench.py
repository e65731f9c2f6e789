"""What the injection scanner adds to a Remember, side by side with the same store unscreened.

A benchmark, not a test: it prints a table and asserts nothing.

- **scan alone**: ``runtime.safety.injection.scan`` on realistic facts (``recall_bench``'s
  corpus), on the longest fact a Remember accepts (2,000 characters of prose), and on the
  malicious corpus of the tests (each evasion: homoglyphs, base64, hex, split lines).
- **remember()**: durable ``FactStore.remember`` on two fresh stores in the same directory, one
  with the scanner (the default) and one opened with ``screen=None``, interleaved in blocks of
  50 so disk noise hits both alike. The difference of the medians is what screening costs a
  Remember; the issue's budget is 1 ms.

Run from the repository root:

    .venv/bin/python bench/scanner_bench.py             # 2,000 remembers per store
    .venv/bin/python bench/scanner_bench.py --quick     # 300
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_bench import generate_corpus  # noqa: E402

from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.safety.injection import scan  # noqa: E402
from tests.runtime.safety.injection_corpus import MALICIOUS  # noqa: E402

BLOCK = 50


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    count = 300 if args.quick else 2000
    facts = [fact.text for fact in generate_corpus(count * 2, seed=20261201)]
    long_text = " ".join(facts)[:2000]

    rows: list[tuple[str, float, float]] = []
    for label, texts, rounds in (
        ("scan: realistic facts", facts[:count], 3),
        ("scan: 2,000-char fact", [long_text], 200),
        ("scan: malicious corpus", list(MALICIOUS), 20),
    ):
        rows.append((label, *percentiles(timed(scan, texts, rounds))))

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
    rows.append(("remember() screened", *percentiles(with_scan)))
    rows.append(("remember() unscreened", *percentiles(without)))
    added = statistics.median(with_scan) / 1e6 - statistics.median(without) / 1e6

    print(f"{'':26} {'p50 ms':>9} {'p95 ms':>9}")
    for label, p50, p95 in rows:
        print(f"{label:26} {p50:9.3f} {p95:9.3f}")
    ratio = statistics.median(without) / statistics.median(with_scan)
    print(
        f"\nscreening adds {added:.3f} ms to a median remember() "
        f"(unscreened/screened throughput ratio {ratio:.2f}); budget 1 ms"
    )


if __name__ == "__main__":
    main()

"""What the bash sandbox costs per call: sandboxed vs unconfined vs a bare subprocess.

    python bench/shell_bench.py [--calls N]

Runs the same commands N times each through the ``bash`` tool with the sandbox (user, mount,
PID and network namespaces, a private root, limits, Landlock), with the sandbox and
``network: outbound`` (the egress socket bound in, the relay forked), through the tool with
``SPECWIRE_UNSANDBOXED_BASH=1``, and as a bare ``subprocess.run(["bash", "-c", …])`` baseline, in
one process, and prints p50 / p95 latency and the ratios. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from specwire.runtime.tools.shell import BashInput, run_bash
from specwire.runtime.tools.shell.sandbox import UNSANDBOXED_ENV, shell_path
from specwire.runtime.tools.shell.settings import BashSettings

OUTBOUND = BashSettings(network="outbound")

COMMANDS = ("true", "ls -la > /dev/null", "echo hi > f.txt && cat f.txt")


def timed(call: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100)[int(q) - 1] if len(samples) > 1 else samples[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shell-bench-"))
    (work / ".specwire").mkdir()
    rows: list[tuple[str, str, float, float]] = []
    for command in COMMANDS:
        parsed = BashInput(command=command)

        def tool(parsed: BashInput = parsed) -> object:
            return run_bash(work, parsed)

        def outbound(parsed: BashInput = parsed) -> object:
            return run_bash(work, parsed, OUTBOUND)

        def bare_shell(command: str = command) -> object:
            argv = [shell_path(), "-c", command]
            return subprocess.run(argv, cwd=work, capture_output=True, check=False)

        os.environ.pop(UNSANDBOXED_ENV, None)
        sandboxed = timed(tool, args.calls)
        with_egress = timed(outbound, args.calls)
        os.environ[UNSANDBOXED_ENV] = "1"
        unconfined = timed(tool, args.calls)
        os.environ.pop(UNSANDBOXED_ENV, None)
        bare = timed(bare_shell, args.calls)
        for label, samples in (
            ("sandboxed", sandboxed),
            ("outbound", with_egress),
            ("unconfined", unconfined),
            ("bare", bare),
        ):
            rows.append((command, label, p(samples, 50), p(samples, 95)))
    print(f"{'command':32} {'mode':11} {'p50 ms':>8} {'p95 ms':>8} {'p50 vs bare':>12}")
    bare_p50 = {c: p50 for c, label, p50, _ in rows if label == "bare"}
    for command, label, p50, p95 in rows:
        ratio = p50 / bare_p50[command]
        print(f"{command:32} {label:11} {p50:8.1f} {p95:8.1f} {ratio:11.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

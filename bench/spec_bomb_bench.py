"""Hostile specs against ``codegen check`` and ``codegen build``: wall time and peak memory.

A benchmark, not a test: it prints figures and a PASS/FAIL verdict against the issue's budget
(each command answers in under 2 s and 200 MB, with the expected outcome: a bomb refused with a
located error, a large but valid spec built), and never asserts anything.

Each bomb is generated into a temporary directory; ``codegen check SPEC`` and
``codegen build SPEC --out DIR`` then run in their own process (``python -m emitters.command``),
timed with ``time.perf_counter`` around the process and measured with ``os.wait4``, whose
``ru_maxrss`` is that one child's peak resident set. The **baseline** column runs the same bytes
through plain ruamel (``YAML(typ="rt").load``, the parser specwire uses, without our caps) in a
process of its own, so the figures show what the caps save; a baseline that runs past
``--baseline-timeout`` is stopped and shown as ``>N s``.

Run from the repository root:

    .venv/bin/python bench/spec_bomb_bench.py
    .venv/bin/python bench/spec_bomb_bench.py --only tools-1M,tenants-20k --no-baseline
    .venv/bin/python bench/spec_bomb_bench.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME_BUDGET_S = 2.0
MEMORY_BUDGET_MB = 200.0
HEAD = "name: bomb\ntarget: cli\nagent:\n  model: scripted\n  instructions: hi\n"
MANAGED = "name: bomb\ntarget: managed\nagent: {model: scripted, instructions: hi}\n"


def _tools_1m() -> str:
    return HEAD + "tools: [" + ", ".join(["read"] * 1_000_000) + "]\n"


def _comments_10mb() -> str:
    line = "# " + "x" * 77 + "\n"
    return HEAD + line * (10 * (1 << 20) // len(line))


def _tenants_20k() -> str:
    return MANAGED + "tenants:\n" + "".join(f"  - id: t{n:05d}\n" for n in range(20_000))


def _tenants_at_cap() -> str:
    return (
        MANAGED
        + "tenants:\n"
        + "".join(f"  - {{id: t{n:03d}, budget: {{maxInputTokens: 9000}}}}\n" for n in range(500))
    )


def _instructions_10k_lines() -> str:
    body = "".join(f"    Step {n}: check the ledger first.\n" for n in range(10_000))
    return "name: bomb\ntarget: cli\nagent:\n  model: scripted\n  instructions: |\n" + body


def _deep_nesting() -> str:
    return HEAD + "memory: " + "[" * 100_000 + "]" * 100_000 + "\n"


def _flow_mapping() -> str:
    pairs = ", ".join(f"k{n}: {n}" for n in range(30_000))
    return HEAD + "memory: {" + pairs + "}\n"


def _unknown_keys_under_cap() -> str:
    return HEAD + "".join(f"unknownKey{n}: {n}\n" for n in range(4_900))


def _billion_laughs() -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    return HEAD + "\n".join(lines) + "\n"


def _long_line() -> str:
    return (
        "name: bomb\ntarget: cli\nagent: {model: scripted, instructions: "
        + "word " * 104_800
        + "}\n"
    )


def _long_line_2mb() -> str:
    return (
        "name: bomb\ntarget: cli\nagent: {model: scripted, instructions: "
        + "word " * 400_000
        + "}\n"
    )


def _many_nodes() -> str:
    roles = "".join(f"  r{n}: [" + ", ".join(["x"] * 99) + "]\n" for n in range(100))
    return HEAD + "roles:\n" + roles


REFUSED = 2
BUILT = 0


@dataclass(frozen=True)
class Bomb:
    name: str
    what: str
    make: Callable[[], str]
    expect: int = REFUSED  # the exit status a correct compiler gives


BOMBS: tuple[Bomb, ...] = (
    Bomb("tools-1M", "a 1,000,000-item tools list", _tools_1m),
    Bomb("comments-10MB", "10 MB of comments", _comments_10mb),
    Bomb("tenants-20k", "20,000 tenants", _tenants_20k),
    Bomb("tenants-500", "500 tenants with budgets (the cap: builds)", _tenants_at_cap, BUILT),
    Bomb(
        "instructions-10k", "10,000 lines of instructions (builds)", _instructions_10k_lines, BUILT
    ),
    Bomb("deep-nesting", "100,000 nested flow lists", _deep_nesting),
    Bomb("flow-mapping", "one flow mapping of 30,000 keys", _flow_mapping),
    Bomb("unknown-keys", "4,900 unknown top-level keys", _unknown_keys_under_cap),
    Bomb("nodes-10k", "100 lists of 99 items (10,000 nodes)", _many_nodes),
    Bomb("billion-laughs", "aliases nested 10 deep, 10 wide", _billion_laughs),
    Bomb("long-line", "a 524,000-character line of instructions (builds)", _long_line, BUILT),
    Bomb("long-line-2MB", "a 2,000,000-character line of instructions", _long_line_2mb),
)


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mb: float
    exit: int | None  # None: stopped at the timeout
    first_line: str


def _run(argv: list[str], cwd: Path, timeout: float | None) -> Run:
    """Run ``argv`` to completion; its wall time, its own peak RSS, exit status, first output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / ".typing")}
    env.pop("SPECWIRE_DEBUG", None)
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        child = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
        exit_code, rusage = _wait(child.pid, start, timeout)
        seconds = time.perf_counter() - start
        child.returncode = exit_code if exit_code is not None else -9  # reaped by os.wait4
        output.seek(0)
        first = output.read(4000).decode("utf-8", "replace").strip().splitlines()
    return Run(seconds, rusage.ru_maxrss / 1024, exit_code, first[0][:110] if first else "")


def _wait(
    pid: int, start: float, timeout: float | None
) -> tuple[int | None, resource.struct_rusage]:
    """``os.wait4``: the exit status and this one child's resource use (``ru_maxrss`` in KiB)."""
    while True:
        done, status, rusage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status), rusage
        if timeout is not None and time.perf_counter() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            _, _, rusage = os.wait4(pid, 0)
            return None, rusage
        time.sleep(0.005)


BASELINE = (
    "import sys\n"
    "from ruamel.yaml import YAML\n"
    "text = open(sys.argv[1], encoding='utf-8').read()\n"
    "YAML(typ='rt').load(text)\n"
)


def _measure(bomb: Bomb, workdir: Path, baseline_timeout: float | None) -> dict[str, object]:
    text = bomb.make()
    spec = workdir / f"{bomb.name}.yaml"
    spec.write_text(text, encoding="utf-8")
    python = sys.executable
    check = _run([python, "-m", "specwire.emitters.command", "check", str(spec)], workdir, None)
    out = workdir / f"out-{bomb.name}"
    build = _run(
        [python, "-m", "specwire.emitters.command", "build", str(spec), "--out", str(out)],
        workdir,
        None,
    )
    baseline = (
        _run([python, "-c", BASELINE, str(spec)], workdir, baseline_timeout)
        if baseline_timeout is not None
        else None
    )
    passed = all(
        run.seconds < TIME_BUDGET_S and run.peak_mb < MEMORY_BUDGET_MB and run.exit == bomb.expect
        for run in (check, build)
    )
    return {
        "bomb": bomb.name,
        "what": bomb.what,
        "bytes": len(text.encode("utf-8")),
        "expect": "built" if bomb.expect == BUILT else "refused",
        "check": asdict(check),
        "build": asdict(build),
        "baseline": asdict(baseline) if baseline is not None else None,
        "wrote": sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
        if out.exists()
        else [],
        "verdict": "PASS" if passed else "FAIL",
    }


def _size(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB" if size >= 1 << 20 else f"{size / 1024:.0f} KiB"


def _baseline_cell(row: dict[str, object], timeout: float | None) -> str:
    run = row["baseline"]
    if not isinstance(run, dict):
        return "-"
    if run["exit"] is None:
        return f">{timeout:.0f} s / {run['peak_mb']:.0f}"
    return f"{run['seconds']:.2f} s / {run['peak_mb']:.0f}"


def _print_table(rows: list[dict[str, object]], timeout: float | None) -> None:
    header = (
        f"{'bomb':<17} {'size':>9} {'expect':>7}  {'check s':>7} {'MB':>5}  {'build s':>7} "
        f"{'MB':>5} {'exit':>4}  {'ruamel alone s / MB':>20}  verdict"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        check, build = row["check"], row["build"]
        assert isinstance(check, dict) and isinstance(build, dict)
        print(
            f"{row['bomb']:<17} {_size(int(str(row['bytes']))):>9} {row['expect']!s:>7}  "
            f"{check['seconds']:>7.2f} {check['peak_mb']:>5.0f}  "
            f"{build['seconds']:>7.2f} {build['peak_mb']:>5.0f} {build['exit']!s:>4}  "
            f"{_baseline_cell(row, timeout):>20}  {row['verdict']}"
        )
    print(
        f"\nbudget: under {TIME_BUDGET_S:.0f} s and {MEMORY_BUDGET_MB:.0f} MB per command, with "
        "the expected outcome (exit 2: refused with a located error; 0: built)"
    )
    print("what each command said (first line of build):")
    for row in rows:
        build = row["build"]
        assert isinstance(build, dict)
        print(f"  {row['bomb']:<17} {build['first_line']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated bomb names")
    parser.add_argument("--baseline-timeout", type=float, default=60.0, metavar="S")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    args = parser.parse_args()
    chosen = [b for b in BOMBS if not args.only or b.name in args.only.split(",")]
    timeout = None if args.no_baseline else args.baseline_timeout
    load = ", ".join(f"{figure:.1f}" for figure in os.getloadavg())
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load}; {len(chosen)} bombs",
        flush=True,
    )
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="specwire-bombs-") as tmp:
        for bomb in chosen:
            print(f"  {bomb.name} …", file=sys.stderr)
            rows.append(_measure(bomb, Path(tmp), timeout))
    _print_table(rows, timeout)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

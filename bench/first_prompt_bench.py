"""A cli bundle's time to first prompt, as a ratio to a bare ``python -c pass`` in the same run.

A benchmark, not a test: it prints figures and the goal beside them and exits 0 whatever they
are (only a broken script exits otherwise). It uses the standard library only and imports
nothing from specwire: every command runs as a fresh process, as a user runs it.

1. ``codegen build`` builds the bundles once (default: ``support-bot``, a cli bundle with facts
   and continuity, and ``cli-plain``, the same target without memory) into a temporary folder.
2. Each round times, in turn (the first round untimed, to warm the OS and bytecode caches):
   - **floor**: ``python -c pass``, the interpreter's own start;
   - **message**: ``python agent.py --message hi`` with ``SPECWIRE_MODEL=scripted`` in a fresh
     working directory, from spawn until the process exits after its one answer;
   - **prompt**: ``python agent.py`` on a pseudo-terminal (POSIX only), from spawn until the
     ``> `` prompt appears; then end of input is sent and the process reaped (not timed).
3. Each median is reported over the floor's median (goal: at most 5x, issue 20). Beside it, for
   the runs to exit, the median CPU time (user + system) over the floor's: on a machine shared
   with other work the wall times wait for a core, the CPU times much less. ``--importtime``
   adds where a bundle's import time goes (``python -X importtime agent.py --message hi``).

Run from the repository root:

    .venv/bin/python bench/first_prompt_bench.py                 # about a minute
    .venv/bin/python bench/first_prompt_bench.py --repeats 20 --importtime
    .venv/bin/python bench/first_prompt_bench.py --spec examples/ops-notes.yaml --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from build_bench import run_timed

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SPECS = (REPO / "examples" / "support-bot.yaml", REPO / "examples" / "cli-plain.yaml")
RATIO_GOAL = 5.0  # a bundle's first prompt / python -c pass
PROMPT = b"> "
RUN_TIMEOUT_S = 120.0


@dataclass
class Timing:
    label: str
    samples_ms: list[float] = field(default_factory=list)
    error: str | None = None
    # CPU time (user + system) of each recorded run, when it was measured (runs to exit only).
    cpu_samples_ms: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms) if self.samples_ms else math.nan

    @property
    def cpu_median_ms(self) -> float:
        return statistics.median(self.cpu_samples_ms) if self.cpu_samples_ms else math.nan

    @property
    def p90_ms(self) -> float:
        if len(self.samples_ms) < 2:
            return self.median_ms
        return statistics.quantiles(self.samples_ms, n=10, method="inclusive")[-1]

    def add(
        self,
        elapsed_ms: float | None,
        error: str | None,
        *,
        record: bool,
        cpu_ms: float | None = None,
    ) -> None:
        if error is not None:
            self.error = self.error or error
        elif record and elapsed_ms is not None:
            self.samples_ms.append(elapsed_ms)
            if cpu_ms is not None:
                self.cpu_samples_ms.append(cpu_ms)

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "runs": len(self.samples_ms),
            "median_ms": _finite(self.median_ms),
            "p90_ms": _finite(self.p90_ms),
            "samples_ms": [round(sample, 1) for sample in self.samples_ms],
            "cpu_median_ms": _finite(self.cpu_median_ms),
            "error": self.error,
        }


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 1)


def progress(message: str) -> None:
    print(f"[first-prompt-bench] {message}", file=sys.stderr, flush=True)


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()][-2:]
    return " | ".join(lines)[:300] or "(no output)"


# --------------------------------------------------------------------------------------------
# One timed process
# --------------------------------------------------------------------------------------------


def run_to_exit(
    cmd: Sequence[str | Path], *, cwd: Path, env: dict[str, str]
) -> tuple[float, str | None, float | None]:
    """Spawn ``cmd`` and wait for it (``build_bench.run_timed``): wall milliseconds, an error
    unless it exited 0, and the process's CPU milliseconds (user + system; None where the
    platform does not say)."""
    run = run_timed(cmd, cwd=cwd, env=env)
    return run.wall_ms, run.error, run.cpu_ms


def run_to_prompt(
    cmd: Sequence[str | Path], *, cwd: Path, env: dict[str, str]
) -> tuple[float, str | None]:
    """Spawn ``cmd`` on a pseudo-terminal: wall milliseconds until its output ends with the
    prompt. End of input is then sent and the process reaped, outside the timed span."""
    import pty

    controller, terminal = pty.openpty()
    start = time.perf_counter()
    try:
        process = subprocess.Popen(
            [str(part) for part in cmd],
            cwd=cwd,
            env=env,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            close_fds=True,
        )
    except OSError as exc:
        os.close(controller)
        os.close(terminal)
        return 0.0, f"{type(exc).__name__}: {exc}"
    os.close(terminal)
    seen = b""
    elapsed: float | None = None
    error: str | None = None
    deadline = start + RUN_TIMEOUT_S
    try:
        while elapsed is None:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                shown = _tail(seen.decode(errors="replace"))
                error = f"no prompt within {RUN_TIMEOUT_S:.0f} s: {shown}"
                break
            ready, _, _ = select.select([controller], [], [], remaining)
            if not ready:
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the process ended before prompting
                chunk = b""
            if not chunk:
                error = f"ended before prompting: {_tail(seen.decode(errors='replace'))}"
                break
            seen += chunk
            if seen.endswith(PROMPT):
                elapsed = (time.perf_counter() - start) * 1000
    finally:
        try:
            os.write(controller, b"\x04")  # end of input: the session ends cleanly
            process.wait(timeout=RUN_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        os.close(controller)
    return (elapsed or 0.0), error


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


@dataclass
class Config:
    repeats: int
    specs: tuple[Path, ...]
    importtime: bool
    codegen: Path
    python: Path
    prompt: bool


@dataclass
class BundleFigures:
    spec: str
    message: Timing
    prompt: Timing | None


class Bench:
    def __init__(self, config: Config, work: Path) -> None:
        self.config = config
        self.work = work
        env = dict(os.environ)
        for name in ("SPECWIRE_MODEL", "PYTHONDONTWRITEBYTECODE", "SPECWIRE_CACHE_DIR"):
            env.pop(name, None)  # bytecode is written and reused, as on a user's machine
        self.env = env
        self._runs = 0

    def _fresh_cwd(self) -> Path:
        self._runs += 1
        folder = self.work / "runs" / f"r{self._runs:04d}"
        folder.mkdir(parents=True)
        return folder

    def build(self) -> dict[str, Path]:
        out = self.work / "bundles"
        cmd = [str(self.config.codegen), "build", *map(str, self.config.specs), "--out", str(out)]
        env = {**self.env, "XDG_CACHE_HOME": str(self.work / "build-cache")}
        done = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=600, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"first-prompt-bench: codegen build failed: {_tail(done.stderr)}")
        agents: dict[str, Path] = {}
        for spec in self.config.specs:
            found = sorted(out.glob("*/agent.py"))
            match = [agent for agent in found if agent.parent.name == spec.stem]
            if not match:
                raise SystemExit(f"first-prompt-bench: no bundle for {spec} (folder {spec.stem})")
            agents[spec.stem] = match[0]
        return agents

    def measure(self, agents: dict[str, Path]) -> tuple[Timing, list[BundleFigures]]:
        python = self.config.python
        floor = Timing("python -c pass")
        figures = [
            BundleFigures(
                stem,
                Timing(f"{stem}: agent.py --message hi"),
                Timing(f"{stem}: agent.py, until the prompt (tty)") if self.config.prompt else None,
            )
            for stem in agents
        ]
        scripted = {**self.env, "SPECWIRE_MODEL": "scripted"}
        progress(f"{len(agents)} bundle(s) x {self.config.repeats} rounds (+1 warm-up)")
        for round_index in range(self.config.repeats + 1):
            record = round_index > 0
            floor_cmd = [python, "-c", "pass"]
            wall, error, cpu = run_to_exit(floor_cmd, cwd=self._fresh_cwd(), env=self.env)
            floor.add(wall, error, record=record, cpu_ms=cpu)
            for figure in figures:
                agent = agents[figure.spec]
                cmd = [python, agent, "--message", "hi"]
                wall, error, cpu = run_to_exit(cmd, cwd=self._fresh_cwd(), env=scripted)
                figure.message.add(wall, error, record=record, cpu_ms=cpu)
                if figure.prompt is not None:
                    cmd = [python, agent]
                    figure.prompt.add(
                        *run_to_prompt(cmd, cwd=self._fresh_cwd(), env=scripted), record=record
                    )
        return floor, figures

    def importtime(self, agent: Path) -> dict[str, Any]:
        cmd = [str(self.config.python), "-X", "importtime", str(agent), "--message", "hi"]
        env = {**self.env, "SPECWIRE_MODEL": "scripted"}
        done = subprocess.run(
            cmd,
            cwd=self._fresh_cwd(),
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            return {"error": _tail(done.stderr)}
        return summarize_importtime(done.stderr)


def summarize_importtime(stderr: str, top: int = 12) -> dict[str, Any]:
    """Top imports by cumulative time, and self time summed per package (two name levels for
    specwire, so the runtime's parts show)."""
    entries: list[tuple[int, int, int, str]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        raw = parts[2][1:] if parts[2].startswith(" ") else parts[2]
        depth = (len(raw) - len(raw.lstrip(" "))) // 2
        entries.append((int(parts[0]), int(parts[1]), depth, raw.strip()))
    per_package: dict[str, int] = defaultdict(int)
    for self_us, _, _, name in entries:
        parts = name.split(".")
        key = ".".join(parts[:3]) if parts[0] == "specwire" else parts[0]
        per_package[key] += self_us
    ranked = sorted(entries, key=lambda entry: entry[1], reverse=True)[:top]
    return {
        "modules": len(entries),
        "total_ms": round(sum(entry[0] for entry in entries) / 1000, 1),
        "top_cumulative": [
            {"module": name, "depth": depth, "cumulative_ms": round(cum / 1000, 1)}
            for _, cum, depth, name in ranked
        ],
        "self_by_package": [
            {"package": name, "self_ms": round(us / 1000, 1)}
            for name, us in sorted(per_package.items(), key=lambda item: -item[1])[:top]
        ],
    }


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def _ratio(ours: Timing, floor: Timing) -> float | None:
    if not (ours.ok and floor.ok) or floor.median_ms <= 0:
        return None
    return round(ours.median_ms / floor.median_ms, 2)


def _cpu_ratio(ours: Timing, floor: Timing) -> float | None:
    """The median CPU time over the floor's: what a loaded machine moves less than wall time
    (a process waiting for a core is not charged for the wait)."""
    if not (ours.ok and floor.ok) or not (ours.cpu_samples_ms and floor.cpu_samples_ms):
        return None
    if floor.cpu_median_ms <= 0:
        return None
    return round(ours.cpu_median_ms / floor.cpu_median_ms, 2)


def render(floor: Timing, figures: list[BundleFigures], importtime: dict[str, Any]) -> str:
    rows: list[tuple[str, ...]] = [("measure", "median", "p90", "x floor", "cpu x floor", "goal")]

    def row(timing: Timing, judged: bool) -> None:
        if timing.error is not None:
            rows.append((timing.label, "-", "-", "-", "-", f"ERROR {timing.error}"))
            return
        ratio = _ratio(timing, floor)
        cpu_ratio = _cpu_ratio(timing, floor)
        verdict = ""
        if judged and ratio is not None:
            verdict = f"<= {RATIO_GOAL:.0f}x {'PASS' if ratio <= RATIO_GOAL else 'MISS'}"
        rows.append(
            (
                timing.label,
                f"{timing.median_ms:.0f} ms",
                f"{timing.p90_ms:.0f} ms",
                "-" if ratio is None else f"{ratio:.2f}x",
                "-" if cpu_ratio is None else f"{cpu_ratio:.2f}x",
                verdict,
            )
        )

    row(floor, judged=False)
    for figure in figures:
        row(figure.message, judged=True)
        if figure.prompt is not None:
            row(figure.prompt, judged=True)
    widths = [max(len(cells[i]) for cells in rows) for i in range(5)]
    out = [
        f"{cells[0]:<{widths[0]}}  {cells[1]:>{widths[1]}}  {cells[2]:>{widths[2]}}  "
        f"{cells[3]:>{widths[3]}}  {cells[4]:>{widths[4]}}  {cells[5]}".rstrip()
        for cells in rows
    ]
    for label, summary in importtime.items():
        out.append("")
        if "error" in summary:
            out.append(f"-X importtime, {label}: ERROR {summary['error']}")
            continue
        out.append(
            f"-X importtime, {label}: {summary['modules']} modules, {summary['total_ms']:.0f} ms "
            "of import (importtime inflates it)"
        )
        for entry in summary["top_cumulative"]:
            out.append(
                f"  {entry['cumulative_ms']:>7.1f} ms  {'  ' * entry['depth']}{entry['module']}"
            )
        packages = ", ".join(
            f"{p['package']} {p['self_ms']:.0f}" for p in summary["self_by_package"]
        )
        out.append(f"  self time by package (ms): {packages}")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _default_codegen() -> Path:
    sibling = Path(sys.executable).parent / "codegen"
    if sibling.exists():
        return sibling
    return Path(shutil.which("codegen") or REPO / ".venv" / "bin" / "codegen")


def parse_args(argv: Sequence[str] | None) -> tuple[Config, str | None]:
    parser = argparse.ArgumentParser(
        description="A cli bundle's time to first prompt, beside python -c pass."
    )
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds (15)")
    parser.add_argument(
        "--spec",
        action="append",
        type=Path,
        help="a cli spec to build and time (repeatable; default: support-bot and cli-plain)",
    )
    parser.add_argument("--no-prompt", action="store_true", help="skip the pseudo-terminal runs")
    parser.add_argument("--importtime", action="store_true", help="show where import time goes")
    parser.add_argument("--codegen", type=Path, help="the codegen command (default: beside python)")
    parser.add_argument(
        "--json", metavar="PATH", help="also write the figures as JSON ('-': stdout)"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    codegen = args.codegen or _default_codegen()
    if not codegen.exists():
        parser.error(f"no codegen at {codegen} (pass --codegen)")
    specs = tuple(path.resolve() for path in (args.spec or DEFAULT_SPECS))
    for spec in specs:
        if not spec.is_file():
            parser.error(f"no spec at {spec}")
    python = codegen.parent / "python"
    config = Config(
        repeats=args.repeats,
        specs=specs,
        importtime=args.importtime,
        codegen=codegen,
        python=python if python.exists() else Path(sys.executable),
        prompt=not args.no_prompt and os.name == "posix",
    )
    return config, args.json


def main(argv: Sequence[str] | None = None) -> int:
    config, json_path = parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="specwire-first-prompt-") as tmp:
        bench = Bench(config, Path(tmp))
        agents = bench.build()
        floor, figures = bench.measure(agents)
        importtime = (
            {f"{stem} --message hi": bench.importtime(agent) for stem, agent in agents.items()}
            if config.importtime
            else {}
        )
    try:
        load = [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        load = None
    header = (
        f"specwire first-prompt bench · Python {platform.python_version()} · "
        f"{os.cpu_count()} CPUs · load {load[0] if load else '?'} · median of {config.repeats} "
        "rounds, each a new process; x floor: median over python -c pass's median"
    )
    report = {
        "python": platform.python_version(),
        "load_average": load,
        "repeats": config.repeats,
        "goal": RATIO_GOAL,
        "floor": floor.summary(),
        "bundles": [
            {
                "spec": figure.spec,
                "message": figure.message.summary(),
                "message_ratio": _ratio(figure.message, floor),
                "message_cpu_ratio": _cpu_ratio(figure.message, floor),
                "prompt": None if figure.prompt is None else figure.prompt.summary(),
                "prompt_ratio": None if figure.prompt is None else _ratio(figure.prompt, floor),
            }
            for figure in figures
        ],
        "importtime": importtime,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    if json_path != "-":
        print(header)
        print()
        print(render(floor, figures, importtime))
        print(f"\ntotal {report['elapsed_s']} s")
    if json_path == "-":
        json.dump(report, sys.stdout, indent=2)
        print()
    elif json_path:
        Path(json_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

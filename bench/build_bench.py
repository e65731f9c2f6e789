"""Build speed: ``codegen`` side by side with datamodel-codegen and openapi-python-client.

A benchmark, not a test: it prints figures and the issue's goals beside them, and exits 0 whatever
the figures are (only a broken script exits otherwise). It uses the standard library only and
imports nothing from specwire: every tool runs as a fresh subprocess, as a user runs it.

1. **Peers** are installed by this script into a throwaway venv (``--peers-venv``; by default a
   folder in the system temp dir named after the pinned versions), reused when it is already
   there, so after the first install the bench runs offline. If the install fails, the peers are
   marked unavailable and the specwire-only parts still run.
2. **One small input per tool**: ``examples/support-bot.yaml`` for ``codegen build``; a JSON
   Schema of six fields (one enum, one nested object) for datamodel-codegen; an OpenAPI 3 document
   of two operations and two schemas for openapi-python-client (its ``post_hooks`` set to ``[]``,
   so it runs no formatter afterwards; datamodel-codegen formats with black and isort, specwire
   with black). Each tool runs once untimed (warm OS and bytecode caches), then ``--repeats``
   times, the tools taking turns, each into a fresh output directory with a fresh working
   directory and ``XDG_CACHE_HOME``. Median and p90 wall times, and codegen's median over each
   peer's (goal: at most 0.5x, issue 20).
3. **specwire only**: ``codegen --help`` and ``codegen check`` (and whether they load libcst,
   black or jinja2); 100 specs (the examples copied with new ``name:`` values, all five
   targets) built into an empty folder, then built again unchanged, and with ``--jobs 2``
   when ``codegen build`` offers it; a built bundle's time to first prompt
   (``agent.py --message hello`` with ``SPECWIRE_MODEL=scripted`` in a fresh working
   directory) over ``python -c pass`` in the same run (goal: at most 5x, issue 20; see also
   ``bench/first_prompt_bench.py``), and with ``--importtime`` where its import time goes.

Run from the repository root:

    .venv/bin/python bench/build_bench.py                  # about 2 minutes (+ the first install)
    .venv/bin/python bench/build_bench.py --repeats 5 --batch-repeats 1 --importtime
    .venv/bin/python bench/build_bench.py --no-peers --json out.json
    .venv/bin/python bench/build_bench.py --json -         # JSON only, on stdout
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:
    import resource
except ImportError:  # not on Windows: CPU times are left out there
    resource = None  # type: ignore[assignment]

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
ONE_SPEC = "support-bot.yaml"

RATIO_GOAL = 0.5  # codegen's median / a peer's median, one small input (issue 20)
FRESH_GOAL_S = 3.0  # GOAL_SPECS specs into an empty folder
GOAL_SPECS = 100
UNCHANGED_GOAL = 0.2  # 100 unchanged specs, as a share of the fresh build
TTFP_GOAL_RATIO = 5.0  # a bundle's time to first prompt / python -c pass (issue 20)
HEAVY_MODULES = ("libcst", "black", "jinja2")  # `codegen --help` and `check` load none
REPORTED_MODULES = ("libcst", "black", "jinja2", "pydantic", "ruamel")
RUN_TIMEOUT_S = 300.0
INSTALL_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Peer:
    package: str
    version: str
    command: str


PEERS: tuple[Peer, ...] = (
    Peer("datamodel-code-generator", "0.89.0", "datamodel-codegen"),
    Peer("openapi-python-client", "0.29.1", "openapi-python-client"),
)

# --------------------------------------------------------------------------------------------
# The peers' inputs: about the size of support-bot.yaml (a handful of fields)
# --------------------------------------------------------------------------------------------

JSON_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "SupportTicket",
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "customer": {"type": "string"},
        "plan": {"type": "string", "enum": ["free", "pro", "enterprise"]},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string"}},
        "notes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"author": {"type": "string"}, "text": {"type": "string"}},
                "required": ["text"],
            },
        },
    },
    "required": ["id", "customer", "plan"],
}

OPENAPI_DOCUMENT = """\
openapi: 3.0.3
info: {title: Support Tickets, version: 1.0.0}
paths:
  /tickets/{ticket_id}:
    get:
      operationId: get_ticket
      parameters:
        - {name: ticket_id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: The ticket
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Ticket"}
  /tickets:
    post:
      operationId: create_ticket
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewTicket"}
      responses:
        "201":
          description: Created
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Ticket"}
components:
  schemas:
    NewTicket:
      type: object
      required: [customer, plan]
      properties:
        customer: {type: string}
        plan: {type: string, enum: [free, pro, enterprise]}
        priority: {type: integer, minimum: 1, maximum: 5}
    Ticket:
      type: object
      required: [id, customer, plan]
      properties:
        id: {type: string}
        customer: {type: string}
        plan: {type: string, enum: [free, pro, enterprise]}
        priority: {type: integer}
        tags: {type: array, items: {type: string}}
"""

# No post hooks: openapi-python-client would otherwise run `ruff check --fix` and `ruff format`
# from PATH on what it generated.
OPENAPI_CONFIG: dict[str, Any] = {"post_hooks": []}

# Runs a console script (argv[2]) with its arguments and reports which of REPORTED_MODULES it
# had imported: at exit, or just before os._exit (codegen build and check end with it).
_LOADED_PROBE = """\
import atexit, os, runpy, sys
wanted = set(sys.argv[1].split(","))
def _report():
    names = sorted({name.split(".")[0] for name in sys.modules} & wanted)
    sys.stderr.write("\\n@@loaded " + ",".join(names) + "\\n")
    sys.stderr.flush()
atexit.register(_report)
_hard_exit = os._exit
def _exit_now(code):
    _report()
    _hard_exit(code)
os._exit = _exit_now
script = sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""

# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One finished subprocess: wall time, its CPU time (user + sys, children included)."""

    wall_ms: float
    cpu_ms: float | None
    done: subprocess.CompletedProcess[str] | None
    error: str | None


@dataclass
class Timing:
    """Wall and CPU times of one command, in ms; ``error`` is set when any run failed."""

    label: str
    samples_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    error: str | None = None

    def add(self, run: Run, *, record: bool = True) -> None:
        if run.error is not None:
            if self.error is None:
                self.error = run.error
            return
        if record:
            self.samples_ms.append(run.wall_ms)
            if run.cpu_ms is not None:
                self.cpu_ms.append(run.cpu_ms)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms) if self.samples_ms else math.nan

    @property
    def p90_ms(self) -> float:
        return p90(self.samples_ms)

    @property
    def cpu_median_ms(self) -> float:
        return statistics.median(self.cpu_ms) if self.cpu_ms else math.nan

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "runs": len(self.samples_ms),
            "median_ms": _round(self.median_ms),
            "p90_ms": _round(self.p90_ms),
            "cpu_median_ms": _round(self.cpu_median_ms),
            "samples_ms": [round(sample, 1) for sample in self.samples_ms],
            "cpu_samples_ms": [round(sample, 1) for sample in self.cpu_ms],
            "error": self.error,
        }


def _ratio(ours: float, theirs: float) -> float | None:
    if math.isnan(ours) or math.isnan(theirs) or theirs <= 0:
        return None
    return round(ours / theirs, 3)


def _round(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 1)


def p90(samples: Sequence[float]) -> float:
    if not samples:
        return math.nan
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=10, method="inclusive")[-1]


def progress(message: str) -> None:
    print(f"[build-bench] {message}", file=sys.stderr, flush=True)


def _tail(text: str, lines: int = 3) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[:300] or "(no output)"


def _children_cpu_s() -> float | None:
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(cmd: Sequence[str | Path], *, cwd: Path, env: dict[str, str]) -> Run:
    """One cold run of ``cmd``, timed from spawn to exit."""
    cpu_before = _children_cpu_s()
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [str(part) for part in cmd],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        wall = (time.perf_counter() - start) * 1000
        return Run(wall, None, None, f"{type(exc).__name__}: {exc}")
    wall = (time.perf_counter() - start) * 1000
    cpu_after = _children_cpu_s()
    cpu = None if cpu_before is None or cpu_after is None else (cpu_after - cpu_before) * 1000
    error = None
    if done.returncode != 0:
        error = f"exit {done.returncode}: {_tail(done.stderr or done.stdout)}"
    return Run(wall, cpu, done, error)


def fresh_env(base: dict[str, str], cache: Path, **extra: str) -> dict[str, str]:
    """The user's environment with a private cache dir, so nothing is reused across runs."""
    env = dict(base)
    env["XDG_CACHE_HOME"] = str(cache)
    env.update(extra)
    return env


def has_python_file(folder: Path) -> bool:
    return folder.is_dir() and any(folder.rglob("*.py"))


# --------------------------------------------------------------------------------------------
# Peers in a throwaway venv
# --------------------------------------------------------------------------------------------


@dataclass
class PeerEnv:
    status: str  # "ok" | "unavailable" | "skipped"
    venv: str | None = None
    reused: bool = False
    versions: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    install_s: float | None = None

    def command(self, peer: Peer) -> Path:
        assert self.venv is not None
        return _bin_dir(Path(self.venv)) / peer.command


def _bin_dir(root: Path) -> Path:
    return root / ("Scripts" if os.name == "nt" else "bin")


def default_peers_venv() -> Path:
    key = "-".join(f"{peer.command}{peer.version}" for peer in PEERS)
    py = f"py{sys.version_info.major}.{sys.version_info.minor}"
    return Path(tempfile.gettempdir()) / f"specwire-build-bench-peers-{key}-{py}"


def _peer_versions(root: Path) -> dict[str, str] | None:
    """Each peer's ``--version`` line when every peer reports its pinned version, else None."""
    found: dict[str, str] = {}
    for peer in PEERS:
        exe = _bin_dir(root) / peer.command
        if not exe.exists():
            return None
        try:
            done = subprocess.run(
                [str(exe), "--version"],
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        line = (done.stdout or done.stderr).strip().splitlines()
        if done.returncode != 0 or not line or peer.version not in line[0]:
            return None
        found[peer.package] = peer.version
    return found


def ensure_peers(root: Path) -> PeerEnv:
    """Reuse the peers' venv when it already holds the pinned versions; otherwise install them."""
    versions = _peer_versions(root)
    if versions is not None:
        return PeerEnv("ok", str(root), reused=True, versions=versions)
    if root.exists() and any(root.iterdir()) and not (root / "pyvenv.cfg").exists():
        return PeerEnv(
            "unavailable", str(root), reason=f"{root} exists and is not a venv: not touching it"
        )
    pins = [f"{peer.package}=={peer.version}" for peer in PEERS]
    progress(f"installing {', '.join(pins)} into {root} (once; reused afterwards)")
    started = time.perf_counter()
    try:
        if not (root / "pyvenv.cfg").exists():
            venv.EnvBuilder(with_pip=True, symlinks=os.name != "nt").create(root)
        python = _bin_dir(root) / ("python.exe" if os.name == "nt" else "python")
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *pins],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return PeerEnv("unavailable", str(root), reason=f"{type(exc).__name__}: {exc}")
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "ERROR" in line] or [done.stderr]
        reason = "pip install failed: " + _tail("\n".join(errors), 2)
        return PeerEnv("unavailable", str(root), reason=reason)
    versions = _peer_versions(root)
    if versions is None:
        return PeerEnv("unavailable", str(root), reason="installed, but --version did not match")
    return PeerEnv(
        "ok", str(root), versions=versions, install_s=round(time.perf_counter() - started, 1)
    )


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


@dataclass
class Config:
    repeats: int
    batch_repeats: int
    specs: int
    jobs: int
    importtime: bool
    peers: bool
    peers_venv: str
    codegen: str
    python: str


# Given a fresh run dir: the command, and the folder it must write a .py file into (or None).
Builder = Callable[[Path], tuple[list[str | Path], Path | None]]


@dataclass
class Row:
    section: str
    measure: str
    median: str = ""
    p90: str = ""
    cpu: str = ""
    goal: str = ""
    result: str = ""
    note: str = ""


def _ms(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:.0f} ms"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def timing_row(
    section: str, timing: Timing, *, goal: str = "", result: str = "", note: str = ""
) -> Row:
    """A row of wall median, p90 and CPU median; a failed run's error replaces the note."""
    return Row(
        section,
        timing.label,
        _ms(timing.median_ms),
        _ms(timing.p90_ms),
        _ms(timing.cpu_median_ms),
        goal=goal,
        result=result if timing.ok or not result else "n/a",
        note=f"ERROR {timing.error}" if timing.error else note,
    )


def ratio_row(section: str, measure: str, ours: Timing, theirs: Timing, goal: float) -> Row:
    """Our median over theirs, wall time (judged) and CPU time (shown)."""
    if not (ours.ok and theirs.ok):
        return Row(section, measure, goal=f"<= {goal:.2f}x", result="n/a", note="a run failed")
    wall = ours.median_ms / theirs.median_ms
    cpu = ours.cpu_median_ms / theirs.cpu_median_ms if ours.cpu_ms and theirs.cpu_ms else math.nan
    return Row(
        section,
        measure,
        f"{wall:.2f}x",
        cpu="-" if math.isnan(cpu) else f"{cpu:.2f}x",
        goal=f"<= {goal:.2f}x",
        result=_verdict(wall <= goal),
    )


class Bench:
    def __init__(self, config: Config, work: Path) -> None:
        self.config = config
        self.work = work
        self.codegen = Path(config.codegen)
        self.python = Path(config.python)
        self.base_env = dict(os.environ)
        self.base_env.pop("SPECWIRE_MODEL", None)
        # Every tool, peers too, may write and reuse its bytecode as it would on a user's
        # machine (a machine that sets PYTHONDONTWRITEBYTECODE recompiles every module per run),
        # and specwire's build cache follows XDG_CACHE_HOME like the peers' caches do.
        self.base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.base_env.pop("SPECWIRE_CACHE_DIR", None)
        self.rows: list[Row] = []
        self.details: dict[str, Any] = {}
        self._runs = 0

    # -- helpers ------------------------------------------------------------------------------

    def _run_dir(self) -> Path:
        self._runs += 1
        run = self.work / "runs" / f"r{self._runs:04d}"
        (run / "out").mkdir(parents=True)
        (run / "cwd").mkdir()
        (run / "cache").mkdir()
        return run

    def _once(
        self,
        timing: Timing,
        build: Builder,
        *,
        record: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str] | None:
        """Run ``build(run_dir) -> (cmd, folder)`` once in a fresh run dir, into ``timing``.

        When ``folder`` is not None, the run counts only if it wrote a ``.py`` file there.
        """
        run = self._run_dir()
        cmd, check = build(run)
        env = fresh_env(self.base_env, run / "cache", **(extra_env or {}))
        result = run_timed(cmd, cwd=run / "cwd", env=env)
        if result.error is None and check is not None and not has_python_file(check):
            result = Run(result.wall_ms, result.cpu_ms, result.done, "no .py file written")
        timing.add(result, record=record)
        shutil.rmtree(run, ignore_errors=True)
        return result.done

    def _codegen_help(self) -> str:
        try:
            done = subprocess.run(
                [str(self.codegen), "build", "--help"],
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout

    def _loaded_modules(self, *args: str) -> tuple[list[str] | None, str | None]:
        """Which of REPORTED_MODULES ``codegen ARGS`` imports (None when it could not tell)."""
        run = self._run_dir()
        cmd: list[str | Path] = [self.python, "-c", _LOADED_PROBE, ",".join(REPORTED_MODULES)]
        cmd += [self.codegen, *args]
        env = fresh_env(self.base_env, run / "cache")
        result = run_timed(cmd, cwd=run / "cwd", env=env)
        shutil.rmtree(run, ignore_errors=True)
        if result.done is None:
            return None, result.error
        found = re.search(r"^@@loaded (.*)$", result.done.stderr, re.MULTILINE)
        if found is None:
            return None, result.error or "no report from the probe"
        return [name for name in found.group(1).split(",") if name], result.error

    # -- 1 + 2: one small input per tool ------------------------------------------------------

    def one_input(self, peers: PeerEnv) -> None:
        inputs = self.work / "inputs"
        inputs.mkdir()
        schema = inputs / "ticket.schema.json"
        schema.write_text(json.dumps(JSON_SCHEMA, indent=2) + "\n", encoding="utf-8")
        openapi = inputs / "openapi.yaml"
        openapi.write_text(OPENAPI_DOCUMENT, encoding="utf-8")
        openapi_config = inputs / "openapi-config.json"
        openapi_config.write_text(json.dumps(OPENAPI_CONFIG) + "\n", encoding="utf-8")
        spec = EXAMPLES / ONE_SPEC

        def codegen(run: Path) -> tuple[list[str | Path], Path]:
            return [self.codegen, "build", spec, "--out", run / "out"], run / "out"

        tools: list[tuple[str, str, Builder]] = [("codegen", f"codegen build {ONE_SPEC}", codegen)]
        if peers.status == "ok":
            dmcg = peers.command(PEERS[0])
            opc = peers.command(PEERS[1])

            def datamodel(run: Path) -> tuple[list[str | Path], Path]:
                cmd: list[str | Path] = [dmcg, "--input", schema, "--input-file-type"]
                cmd += ["jsonschema", "--output", run / "out" / "models.py"]
                cmd += ["--formatters", "black", "isort"]
                return cmd, run / "out"

            def openapi_client(run: Path) -> tuple[list[str | Path], Path]:
                cmd: list[str | Path] = [opc, "generate", "--path", openapi, "--output-path"]
                cmd += [run / "out" / "client", "--overwrite", "--config", openapi_config]
                return cmd, run / "out"

            tools.append(
                ("datamodel-codegen", "datamodel-codegen (JSON Schema, 6 fields)", datamodel)
            )
            tools.append(
                (
                    "openapi-python-client",
                    "openapi-python-client (2 ops, 2 schemas)",
                    openapi_client,
                )
            )

        timings = {key: Timing(label) for key, label, _ in tools}
        progress(f"one small input: {', '.join(timings)} x {self.config.repeats} (+1 warm-up)")
        for key, _, build in tools:
            self._once(timings[key], build, record=False)
        for index in range(self.config.repeats):
            # The tools take turns, starting each round with the next one, so that drift in the
            # machine's load falls on all of them alike.
            order = tools[index % len(tools) :] + tools[: index % len(tools)]
            for key, _, build in order:
                self._once(timings[key], build)

        section = f"one small input, cold process, median of {self.config.repeats}"
        for key, _, _ in tools:
            self.rows.append(timing_row(section, timings[key]))
        ratios: dict[str, Any] = {}
        ours = timings["codegen"]
        for peer in PEERS:
            measure = f"codegen / {peer.command}"
            theirs = timings.get(peer.command)
            if theirs is None:
                goal = f"<= {RATIO_GOAL:.2f}x"
                self.rows.append(Row(section, measure, goal=goal, result="n/a", note=peers.status))
                ratios[peer.command] = None
                continue
            row = ratio_row(section, measure, ours, theirs, RATIO_GOAL)
            self.rows.append(row)
            ratios[peer.command] = {
                "wall": _ratio(ours.median_ms, theirs.median_ms),
                "cpu": _ratio(ours.cpu_median_ms, theirs.cpu_median_ms),
                "goal": RATIO_GOAL,
            }
        self.details["one_input"] = {
            "timings": {key: timing.summary() for key, timing in timings.items()},
            "ratios": ratios,
            "inputs": {
                "codegen": str(spec.relative_to(REPO)),
                "datamodel-codegen": JSON_SCHEMA,
                "openapi-python-client": OPENAPI_DOCUMENT,
            },
        }

    # -- 3a, 3b: --help and check -------------------------------------------------------------

    def light_commands(self) -> None:
        section = f"specwire only, median of {self.config.repeats}"
        spec = EXAMPLES / ONE_SPEC
        commands: list[tuple[str, list[str]]] = [
            ("codegen --help", ["--help"]),
            (f"codegen check {ONE_SPEC}", ["check", str(spec)]),
        ]
        progress(f"codegen --help and check x {self.config.repeats}")
        details: dict[str, Any] = {}
        for label, args in commands:
            timing = Timing(label)

            def build(run: Path, args: list[str] = args) -> tuple[list[str | Path], None]:
                return [self.codegen, *args], None

            self._once(timing, build, record=False)
            for _ in range(self.config.repeats):
                self._once(timing, build)
            loaded, probe_error = self._loaded_modules(*args)
            heavy = sorted(set(loaded or ()) & set(HEAVY_MODULES))
            if loaded is None:
                note = f"probe failed: {probe_error}"
            else:
                note = "loads " + (", ".join(loaded) or "none of " + ", ".join(REPORTED_MODULES))
            self.rows.append(
                timing_row(
                    section,
                    timing,
                    goal=f"no {' / '.join(HEAVY_MODULES)}",
                    result="n/a" if loaded is None else _verdict(not heavy),
                    note=note,
                )
            )
            details[label] = {**timing.summary(), "loads": loaded}
        self.details["light_commands"] = details

    # -- 3c: 100 specs ------------------------------------------------------------------------

    def write_specs(self) -> list[Path]:
        """``self.config.specs`` copies of the examples, each with its own ``name:``."""
        examples = sorted(EXAMPLES.glob("*.yaml"))
        folder = self.work / "specs"
        folder.mkdir()
        specs: list[Path] = []
        name_line = re.compile(r"^name:.*$", re.MULTILINE)
        for index in range(self.config.specs):
            source = examples[index % len(examples)]
            text = source.read_text(encoding="utf-8")
            name = f"{source.stem}-{index:03d}"
            renamed, count = name_line.subn(f"name: {name}", text, count=1)
            if count != 1:  # a spec that takes its name from elsewhere: give it one
                renamed = f"name: {name}\n{text}"
            path = folder / f"{name}.yaml"
            path.write_text(renamed, encoding="utf-8")
            specs.append(path)
        return specs

    def many_specs(self) -> None:
        specs = self.write_specs()
        count = len(specs)
        targets = sorted(
            {
                match.group(1)
                for spec in specs
                if (match := re.search(r"^target:\s*(\w+)", spec.read_text(), re.MULTILINE))
            }
        )
        supports_jobs = "--jobs" in self._codegen_help()
        variants: list[tuple[str, list[str]]] = [("", [])]
        if supports_jobs:
            variants.append((f", --jobs {self.config.jobs}", ["--jobs", str(self.config.jobs)]))
        rounds = self.config.batch_repeats
        section = f"specwire only, {count} specs ({', '.join(targets)}), median of {rounds}"
        details: dict[str, Any] = {"specs": count, "targets": targets, "jobs": supports_jobs}
        for suffix, extra in variants:
            fresh = Timing(f"build {count} specs, empty out dir{suffix}")
            unchanged = Timing(f"build {count} specs again, unchanged{suffix}")
            built: list[int] = []
            progress(f"{count} specs{suffix}: fresh + unchanged x {rounds}")
            for _ in range(rounds):
                run = self._run_dir()
                cmd: list[str | Path] = [self.codegen, "build", *specs, "--out", run / "out"]
                cmd += extra
                env = fresh_env(self.base_env, run / "cache")
                for timing in (fresh, unchanged):
                    timing.add(run_timed(cmd, cwd=run / "cwd", env=env))
                built.append(sum(1 for bundle in (run / "out").glob("*/agent.py")))
                shutil.rmtree(run, ignore_errors=True)
            note = "" if all(n == count for n in built) else f"bundles written: {built}"
            fresh_ok = fresh.ok and fresh.median_ms / 1000 <= FRESH_GOAL_S
            if count == GOAL_SPECS:
                goal, verdict = f"<= {FRESH_GOAL_S:.0f} s", _verdict(fresh_ok)
            else:
                goal, verdict = "", ""
                note = note or f"the {FRESH_GOAL_S:.0f} s goal is for {GOAL_SPECS} specs"
            self.rows.append(timing_row(section, fresh, goal=goal, result=verdict, note=note))
            self.rows.append(timing_row(section, unchanged))
            share = ratio_row(
                section, f"unchanged / fresh{suffix}", unchanged, fresh, UNCHANGED_GOAL
            )
            self.rows.append(share)
            details[f"fresh{suffix}"] = fresh.summary()
            details[f"unchanged{suffix}"] = unchanged.summary()
            details[f"unchanged_over_fresh{suffix}"] = {
                "wall": _ratio(unchanged.median_ms, fresh.median_ms),
                "cpu": _ratio(unchanged.cpu_median_ms, fresh.cpu_median_ms),
                "goal": UNCHANGED_GOAL,
            }
        if not supports_jobs:
            self.rows.append(
                Row(section, "build --jobs N", note="not offered by `codegen build --help` yet")
            )
        self.details["many_specs"] = details

    # -- 3d: a bundle's time to first prompt --------------------------------------------------

    def first_prompt(self) -> None:
        section = f"bundle ({ONE_SPEC}), full process, median of {self.config.repeats}"
        bundles = self.work / "bundle"
        built_env = fresh_env(self.base_env, self.work / "bundle-cache")
        cmd: list[str | Path] = [self.codegen, "build", EXAMPLES / ONE_SPEC, "--out", bundles]
        error = run_timed(cmd, cwd=self.work, env=built_env).error
        agent = bundles / Path(ONE_SPEC).stem / "agent.py"
        if error is not None or not agent.exists():
            self.rows.append(Row(section, "time to first prompt", note=f"ERROR build: {error}"))
            return
        progress(f"bundle time to first prompt x {self.config.repeats}")
        floor = Timing("python -c pass (interpreter floor)")
        fresh = Timing("agent.py --message hello, new working dir")
        again = Timing("agent.py --message hello, same working dir")
        reused = self.work / "reused-cwd"
        reused.mkdir()
        scripted = {"SPECWIRE_MODEL": "scripted"}

        def interpreter(run: Path) -> tuple[list[str | Path], None]:
            return [self.python, "-c", "pass"], None

        def agent_run(run: Path) -> tuple[list[str | Path], None]:
            return [self.python, agent, "--message", "hello"], None

        self._once(floor, interpreter, record=False)
        self._once(fresh, agent_run, record=False, extra_env=scripted)
        for _ in range(self.config.repeats):
            self._once(floor, interpreter)
            self._once(fresh, agent_run, extra_env=scripted)
            env = fresh_env(self.base_env, self.work / "reused-cache", **scripted)
            again.add(run_timed([self.python, agent, "--message", "hello"], cwd=reused, env=env))
        self.rows.append(timing_row(section, fresh, note="time to first prompt"))
        self.rows.append(timing_row(section, again))
        self.rows.append(timing_row(section, floor))
        self.rows.append(
            ratio_row(section, "first prompt / python -c pass", fresh, floor, TTFP_GOAL_RATIO)
        )
        self.details["first_prompt"] = {
            "fresh_cwd": fresh.summary(),
            "same_cwd": again.summary(),
            "interpreter_floor": floor.summary(),
            "over_floor": {
                "wall": _ratio(fresh.median_ms, floor.median_ms),
                "cpu": _ratio(fresh.cpu_median_ms, floor.cpu_median_ms),
                "goal": TTFP_GOAL_RATIO,
            },
        }
        if self.config.importtime:
            self.details["importtime"] = {
                "bundle": self._importtime(
                    [self.python, "-X", "importtime", agent, "--message", "hello"], scripted
                ),
                "codegen --help": self._importtime(
                    [self.python, "-X", "importtime", self.codegen, "--help"], {}
                ),
            }

    def _importtime(self, cmd: list[str | Path], extra_env: dict[str, str]) -> dict[str, Any]:
        run = self._run_dir()
        env = fresh_env(self.base_env, run / "cache", **extra_env)
        result = run_timed(cmd, cwd=run / "cwd", env=env)
        shutil.rmtree(run, ignore_errors=True)
        if result.done is None or result.error is not None:
            return {"error": result.error}
        return summarize_importtime(result.done.stderr)


def summarize_importtime(stderr: str, top: int = 10) -> dict[str, Any]:
    """Top ``top`` imports by cumulative time, and self time summed per top-level package."""
    entries: list[tuple[int, int, int, str]] = []  # self us, cumulative us, depth, name
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        raw = parts[2][1:] if parts[2].startswith(" ") else parts[2]
        name = raw.strip()
        depth = (len(raw) - len(raw.lstrip(" "))) // 2
        entries.append((int(parts[0]), int(parts[1]), depth, name))
    per_package: dict[str, int] = defaultdict(int)
    for self_us, _, _, name in entries:
        per_package[name.split(".")[0]] += self_us
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
            for name, us in sorted(per_package.items(), key=lambda item: item[1], reverse=True)[
                :top
            ]
        ],
    }


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def render(rows: list[Row], header: list[str], importtime: dict[str, Any] | None) -> str:
    measure_width = max(len("measure"), *(len(row.measure) for row in rows)) + 4
    goal_width = max(len("goal"), *(len(row.goal) for row in rows)) + 2

    def line(cells: Row) -> str:
        text = (
            f"{cells.measure:<{measure_width}}{cells.median:>9}{cells.p90:>9}{cells.cpu:>9}"
            f"  {cells.goal:<{goal_width}}{cells.result:<7}{cells.note}"
        )
        return text.rstrip()

    out = [*header, ""]
    out.append(line(Row("", "measure", "median", "p90", "cpu", "goal", "result", "note")))
    section = None
    for row in rows:
        if row.section != section:
            section = row.section
            out.append(section)
        out.append(
            line(
                Row(
                    row.section,
                    "  " + row.measure,
                    row.median,
                    row.p90,
                    row.cpu,
                    row.goal,
                    row.result,
                    row.note,
                )
            )
        )
    for label, summary in (importtime or {}).items():
        out.append("")
        if "error" in summary:
            out.append(f"-X importtime, {label}: ERROR {summary['error']}")
            continue
        out.append(
            f"-X importtime, {label}: {summary['modules']} modules, "
            f"{summary['total_ms']:.0f} ms of import (importtime inflates it)"
        )
        out.append("  top cumulative:")
        for entry in summary["top_cumulative"]:
            indent = "  " * entry["depth"]
            out.append(f"    {entry['cumulative_ms']:>7.1f} ms  {indent}{entry['module']}")
        packages = ", ".join(
            f"{item['package']} {item['self_ms']:.0f}" for item in summary["self_by_package"]
        )
        out.append(f"  self time by package (ms): {packages}")
    return "\n".join(out)


def _finite(value: Any) -> Any:
    """NaN (an empty sample) becomes null, so the JSON output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


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
        description="codegen build speed beside datamodel-codegen and openapi-python-client.",
    )
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per command (10)")
    parser.add_argument(
        "--batch-repeats", type=int, default=3, help="rounds of the many-spec build (3)"
    )
    parser.add_argument("--specs", type=int, default=100, help="specs in the many-spec build")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs value, when build offers it")
    parser.add_argument(
        "--peers-venv",
        metavar="DIR",
        help=f"venv for the peers, created or reused (default: {default_peers_venv()})",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip the peers entirely")
    parser.add_argument(
        "--importtime", action="store_true", help="also show where import time goes"
    )
    parser.add_argument("--codegen", help="the codegen command (default: beside this python)")
    parser.add_argument(
        "--json", metavar="PATH", help="also write the figures as JSON ('-': stdout)"
    )
    args = parser.parse_args(argv)
    for name in ("repeats", "batch_repeats", "specs", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    codegen = Path(args.codegen) if args.codegen else _default_codegen()
    if not codegen.exists():
        parser.error(f"no codegen at {codegen} (pass --codegen)")
    python = codegen.parent / "python"
    config = Config(
        repeats=args.repeats,
        batch_repeats=args.batch_repeats,
        specs=args.specs,
        jobs=args.jobs,
        importtime=args.importtime,
        peers=not args.no_peers,
        peers_venv=str(Path(args.peers_venv) if args.peers_venv else default_peers_venv()),
        codegen=str(codegen),
        python=str(python if python.exists() else Path(sys.executable)),
    )
    return config, args.json


def _load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def main(argv: Sequence[str] | None = None) -> int:
    config, json_path = parse_args(argv)
    started = time.perf_counter()
    load_before = _load_average()
    if config.peers:
        peers = ensure_peers(Path(config.peers_venv))
    else:
        peers = PeerEnv("skipped", reason="--no-peers")
    if peers.status == "ok":
        how = "reused" if peers.reused else f"installed in {peers.install_s} s"
        peer_line = (
            "peers: "
            + ", ".join(f"{name} {version}" for name, version in peers.versions.items())
            + f" (venv {peers.venv}, {how})"
        )
    else:
        peer_line = f"peers: unavailable ({peers.reason}); specwire-only figures follow"
    print(peer_line, file=sys.stderr if json_path == "-" else sys.stdout, flush=True)

    with tempfile.TemporaryDirectory(prefix="specwire-build-bench-") as tmp:
        bench = Bench(config, Path(tmp))
        bench.one_input(peers)
        bench.light_commands()
        bench.many_specs()
        bench.first_prompt()
    elapsed = time.perf_counter() - started
    load_after = _load_average()

    machine = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
    }
    load = (
        f" · load {load_before[0]:.1f} -> {load_after[0]:.1f}" if load_before and load_after else ""
    )
    header = [
        f"specwire build bench · Python {machine['python']} · {machine['cpus']} CPUs{load}",
        "every run is a new process; median, p90: wall time; cpu: median user+sys time of the",
        "process and its children (steadier than wall time on a busy machine); goals: issues 6",
        "and 20, judged on wall time",
    ]
    report: dict[str, Any] = {
        "machine": machine,
        "config": asdict(config),
        "peers": asdict(peers),
        "elapsed_s": round(elapsed, 1),
        "rows": [asdict(row) for row in bench.rows],
        **bench.details,
    }
    if json_path != "-":
        print(render(bench.rows, header, bench.details.get("importtime")))
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

"""The ``codegen`` command: init, build, check, fragment, schema, run (and the runtime's
``memory`` and ``eval``).

``build`` reads every spec, serves the ones whose bundle the cache (``emitters.cache``) knows to
be on disk already, compiles the rest (``emitters.jobs``: here or in ``--jobs`` worker
processes, results in spec order) and writes once everything compiled.

Spec errors print every issue (``file:line:col: key: message``) on stderr and exit 2 with
nothing written. A bundle file that cannot be written (``codegen: cannot write PATH: reason``)
exits 2 too: every destination is checked before the first write, so a build writes all of its
bundles or none (short of the disk changing mid-build). Any other failure is an internal error:
one line on stderr, exit 1 (the traceback only with ``SPECWIRE_DEBUG=1``).

Run as the program (``main()`` without arguments, as the ``codegen`` script calls it), ``build``
and ``check`` keep Python's cyclic garbage collector off while the compiler's libraries load and
the first spec compiles (then freeze what is alive and turn it back on: later specs collect as
usual), and end with ``os._exit`` once stdout and stderr are flushed, skipping the interpreter's
teardown of every module (about a quarter of a cold build's CPU time, and nothing left to do: the
files are written and closed). ``main(argv)``, the click group and tests keep the usual exit.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from specwire.emitters.terminal import ProgressLine, Style

if TYPE_CHECKING:
    from specwire.emitters.bundle import Bundle
    from specwire.emitters.cache import BuildCache, Entry
    from specwire.emitters.writer import BundleWriteError
    from specwire.ir import IrSpec

# Every heavy dependency (pydantic models, ruamel, jinja2, black) is imported inside the
# command that needs it: `codegen --help` loads none, `codegen check` no emitter, and a build
# served from the cache neither the emitters nor the spec models.

DEBUG_ENV = "SPECWIRE_DEBUG"
# pydantic looks for plugins in every installed distribution's entry points when it builds its
# first model (a few ms in a small venv, more in a large environment); specwire uses none. `main`
# turns the scan off unless the user set the variable (pydantic honours "__all__", "1", "true"
# or a comma-separated list of plugin names).
PLUGINS_ENV = "PYDANTIC_DISABLE_PLUGINS"
AGENT_FILE = "agent.py"  # emitters.common.AGENT_FILE (not imported: it loads the emitters)
DEFAULT_OUT = Path("build")
EXIT_DRIFT = 1
EXIT_INTERNAL = 1
EXIT_SPEC = 2
_plugins_env_set_by_us = False
# Set by `main()` run as the program; `build` and `check` then pause the collector and end the
# process with `os._exit` (see the module doc). Tests and callers with argv leave them False.
_as_program = False
_exit_hard = False


class SpecFailure(Exception):
    """Spec problems to report, one line each (exit 2)."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = tuple(lines)


class WriteFailure(SpecFailure):
    """Bundle files that cannot be written, one line each (exit 2)."""

    def __init__(self, errors: Sequence[BundleWriteError]) -> None:
        super().__init__(list(dict.fromkeys(f"codegen: {error}" for error in errors)))


@dataclass
class Compiled:
    """A spec on its way to disk: from the cache (``entry``, already on disk) or compiled
    (``bundle``)."""

    path: Path
    name: str
    bundle: Bundle | None = None
    entry: Entry | None = None
    key: str | None = None


@contextmanager
def _compiling() -> Iterator[Callable[[], None]]:
    """Run as the program: the cyclic collector off until the returned ``warmed()`` is called
    (once the compiler is imported and a first spec compiled: most of what a cold build
    allocates is the libraries' module state, which a collection would scan in vain), then
    ``gc.freeze()`` (those objects are never scanned again) and back on. The process ends with
    ``os._exit`` after the command (``main``). Anywhere else (tests, ``main(argv)``): nothing."""
    global _exit_hard
    if not _as_program or not gc.isenabled():
        yield lambda: None
        return
    _exit_hard = True
    gc.disable()
    resumed = False

    def warmed() -> None:
        nonlocal resumed
        if not resumed:
            resumed = True
            gc.freeze()
            gc.enable()

    try:
        yield warmed
    finally:
        warmed()


def _load(
    paths: Sequence[Path], warmed: Callable[[], None] = lambda: None
) -> list[tuple[Path, IrSpec]]:
    """Load every spec; raise one ``SpecFailure`` with every issue of every failing spec."""
    from specwire.ir import SpecError, load_spec

    loaded: list[tuple[Path, IrSpec]] = []
    problems: list[str] = []
    for path in paths:
        try:
            loaded.append((path, load_spec(path, display_path=str(path))))
        except SpecError as exc:
            problems.extend(str(issue) for issue in exc.issues)
        warmed()
    if problems:
        raise SpecFailure(problems)
    return loaded


def _compile(
    paths: Sequence[Path],
    *,
    jobs: int = 1,
    cache: BuildCache | None = None,
    out: Path | None = None,
    warmed: Callable[[], None] | None = None,
) -> list[Compiled]:
    """Every spec compiled, or taken from the cache when its bundle is already on disk under
    ``out``; one ``SpecFailure`` with every problem of every failing spec."""
    from specwire.emitters.jobs import Compiled as Done
    from specwire.emitters.jobs import Task, compile_all
    from specwire.ir.errors import SpecError
    from specwire.ir.read import read_spec_bytes

    problems: dict[int, list[str]] = {}
    cached: dict[int, Compiled] = {}
    keys: dict[int, str] = {}
    tasks: dict[int, Task] = {}
    for index, path in enumerate(paths):
        shown = str(path)
        try:
            raw = read_spec_bytes(path, shown)
        except SpecError as exc:
            problems[index] = [str(issue) for issue in exc.issues]
            continue
        # A spec that may carry a warning (``thredz`` on a target that does not wire it) is
        # compiled every time, so the warning is printed every time: the cache keeps bundles only.
        if cache is not None and b"thredz" not in raw:
            from specwire.emitters.cache import entry_key

            keys[index] = key = entry_key(raw, shown)
            entry = cache.lookup(key)
            if entry is not None and out is not None and entry.on_disk(out / entry.name):
                cached[index] = Compiled(path, entry.name, entry=entry, key=key)
                continue
        tasks[index] = Task(raw, shown)
    progress = ProgressLine(sys.stderr)
    try:
        done = compile_all(list(tasks.values()), jobs, progress, warmed)
        results = dict(zip(tasks, done, strict=True))
    finally:
        progress.clear()
    compiled: list[Compiled] = []
    for index, path in enumerate(paths):
        result = results.get(index)
        if index in cached:
            compiled.append(cached[index])
        elif isinstance(result, Done):
            _warn(result.notes)
            compiled.append(Compiled(path, result.name, result.bundle, key=keys.get(index)))
        elif result is not None:
            problems[index] = list(result.lines)
    if problems:
        raise SpecFailure([line for index in sorted(problems) for line in problems[index]])
    return compiled


def _warn(notes: Sequence[str]) -> None:
    """A spec's located warnings, on stderr (the spec still compiles)."""
    style = Style.for_stream(sys.stderr)
    for line in notes:
        click.echo(style.warn(line), err=True)


def _remember(cache: BuildCache | None, compiled: Sequence[Compiled]) -> None:
    """Record every freshly compiled bundle (the cache is a memo: what the spec compiles to)."""
    if cache is None:
        return
    for item in compiled:
        if item.bundle is not None and item.key is not None:
            bundle = item.bundle
            cache.store(item.key, item.name, [(rel, bundle.encoded(rel)) for rel in bundle])


def _bundle_dirs(out: Path, compiled: Sequence[Compiled]) -> dict[Path, Path]:
    """Each spec's bundle directory, ``<out>/<storage name>/`` (the spec's name made safe as one
    path component exactly as its stores are: "tenant svc:v1" → "tenant-svc-v1-<hash>");
    collisions are spec errors."""
    dirs: dict[Path, Path] = {}
    owners: dict[Path, Path] = {}
    problems: list[str] = []
    for item in compiled:
        name = item.name
        target = out / name
        if target in owners:
            problems.append(
                f"{item.path}: name: {name!r} is also the name of {owners[target]}; "
                f"both would be written to {target}"
            )
            continue
        owners[target] = item.path
        dirs[item.path] = target
    if problems:
        raise SpecFailure(problems)
    return dirs


class _Codegen(click.Group):
    """Turns spec failures into exit 2 and unexpected exceptions into one line, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except SpecFailure as failure:
            style = Style.for_stream(sys.stderr)
            for line in failure.lines:
                click.echo(style.error(line), err=True)
            ctx.exit(EXIT_SPEC)
        except Exception as exc:
            if os.environ.get(DEBUG_ENV) == "1":
                raise
            _internal_error(ctx, exc)


def _internal_error(ctx: click.Context, exc: BaseException) -> NoReturn:
    message = str(exc).strip().splitlines()
    detail = message[0] if message else type(exc).__name__
    click.echo(
        f"codegen: internal error: {type(exc).__name__}: {detail} "
        f"(set {DEBUG_ENV}=1 for the traceback)",
        err=True,
    )
    ctx.exit(EXIT_INTERNAL)


SPEC_PATHS = click.argument(
    "specs", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False)
)


# Subcommands that hand every argument (``--help`` too) to a runtime command of their own.
_HANDED_ON: dict[str, Any] = {
    "ignore_unknown_options": True,
    "allow_interspersed_args": False,
    "help_option_names": [],
}


@click.group(cls=_Codegen, context_settings={"help_option_names": ["-h", "--help"]})
def codegen() -> None:
    """Compile YAML agent specs into runnable agent bundles."""


def _jobs(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """A positive number of worker processes, or ``auto`` (one per available CPU)."""
    if value.strip().lower() == "auto":
        from specwire.emitters.jobs import available_cpus

        return available_cpus()
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise click.BadParameter(f"{value!r} is not a positive integer nor auto")
    return number


@codegen.command()
@SPEC_PATHS
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help=(
        "Output root; each spec is written to OUT/<spec name>/, the name made path-safe "
        "(default: ./build)."
    ),
)
@click.option("--check", "check_only", is_flag=True, help="Exit 1 if a bundle would change.")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print what would change as a unified diff; writes nothing and exits 0 even when "
    "something would change (use --check to fail on drift).",
)
@click.option(
    "-j",
    "--jobs",
    metavar="N|auto",
    default="1",
    callback=_jobs,
    show_default=True,
    help="Compile specs in N worker processes ('auto': one per CPU). Output and messages "
    "are the same for every N.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Compile every spec, neither reading nor writing the build cache "
    "($SPECWIRE_CACHE_DIR, else $XDG_CACHE_HOME/specwire).",
)
@click.pass_context
def build(
    ctx: click.Context,
    specs: tuple[Path, ...],
    out: Path | None,
    check_only: bool,
    show_diff: bool,
    jobs: int,
    no_cache: bool,
) -> None:
    """Compile SPEC… into bundles (unchanged files are not rewritten; a spec whose bundle is
    already on disk, as the cache remembers it, is not even compiled)."""
    from specwire.emitters.cache import BuildCache

    root = out if out is not None else DEFAULT_OUT
    cache = None if no_cache else BuildCache.default()
    with _compiling() as warmed:
        compiled = _compile(specs, jobs=jobs, cache=cache, out=root, warmed=warmed)
    dirs = _bundle_dirs(root, compiled)
    style = Style.for_stream(sys.stdout)
    if check_only or show_diff:
        from specwire.emitters.writer import diff, drift

        drifted = False
        for item in compiled:
            target = dirs[item.path]
            if item.bundle is None:  # from the cache: verified on disk, no drift
                if check_only:
                    click.echo(style.ok(_drift_line(target, (), (), ())))
                continue
            if show_diff:
                click.echo(diff(item.bundle, target), nl=False)
            found = drift(item.bundle, target)
            drifted = drifted or bool(found)
            if check_only:
                line = _drift_line(target, found.changed, found.missing, found.stale)
                click.echo(style.warn(line) if found else style.ok(line))
        _remember(cache, compiled)
        if check_only and drifted:
            ctx.exit(EXIT_DRIFT)
        return
    from specwire.emitters.writer import BundleWriteError, write_bundle, write_problems

    # Every destination of every spec is checked first: a build writes all or nothing.
    problems = [
        problem
        for item in compiled
        if item.bundle is not None
        for problem in write_problems(item.bundle, dirs[item.path])
    ]
    if problems:
        raise WriteFailure(problems)
    for item in compiled:
        target = dirs[item.path]
        if item.bundle is None:
            assert item.entry is not None
            click.echo(f"{target}: 0 written, {len(item.entry.files)} unchanged")
            continue
        try:
            result = write_bundle(item.bundle, target)
        except BundleWriteError as error:  # the disk changed under us, or filled up
            raise WriteFailure([error]) from error
        line = f"{target}: {len(result.written)} written, {len(result.unchanged)} unchanged"
        if result.removed:
            line += f", {len(result.removed)} stale removed"
        click.echo(line)
    _remember(cache, compiled)


def _drift_line(
    target: Path, changed: Sequence[str], missing: Sequence[str], stale: Sequence[str]
) -> str:
    parts = [
        *(f"{rel} (changed)" for rel in changed),
        *(f"{rel} (missing)" for rel in missing),
        *(f"{rel} (stale)" for rel in stale),
    ]
    return f"drift {target}: {', '.join(parts)}" if parts else f"ok {target}"


@codegen.command()
@SPEC_PATHS
def check(specs: tuple[Path, ...]) -> None:
    """Validate SPEC… (load, resolve and lower; write nothing).

    The emitters are not run: emitting is a pure function of a valid IR, and its failures are
    compiler bugs, not spec errors (`codegen build --check` runs them)."""
    from specwire.ir import lower

    with _compiling() as warmed:
        loaded = _load(specs, warmed)
        for _, spec in loaded:
            lower(spec)
    for _, spec in loaded:
        _warn(getattr(spec, "notes", ()))
    style = Style.for_stream(sys.stdout)
    for path, _ in loaded:
        click.echo(style.ok(f"ok {path}"))


@codegen.command()
@click.argument("spec", type=click.Path(path_type=Path, dir_okay=False))
def fragment(spec: Path) -> None:
    """Print SPEC's memory wiring fragment as JSON."""
    from specwire.ir import lower

    [(_, ir)] = _load([spec])
    click.echo(json.dumps(lower(ir).to_data(), indent=2, ensure_ascii=False))


def schema_text() -> str:
    """The JSON Schema of the spec language, as `codegen schema` prints it (sorted keys)."""
    from specwire.ir import spec_json_schema

    return json.dumps(spec_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@codegen.command()
def schema() -> None:
    """Print the JSON Schema of the spec language (for editors)."""
    click.echo(schema_text(), nl=False)


@codegen.command()
@click.option(
    "--target",
    "-t",
    type=click.Choice(["cli", "channel", "managed", "research", "crew"]),
    default="cli",
    show_default=True,
    help="The kind of agent.",
)
@click.option(
    "--schema",
    "schema_ref",
    metavar="PATH|URL",
    default=None,
    help="What the spec's first line points editors at (default: specwire.schema.json beside "
    "the spec, written there when it is missing).",
)
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False), default="agent.yaml")
def init(target: str, schema_ref: str | None, path: Path) -> None:
    """Write a commented starter spec for TARGET to PATH (default: agent.yaml); never
    overwrites a file."""
    from specwire.emitters.init import DEFAULT_NAME, SCHEMA_FILE, name_for, starter
    from specwire.ir import SpecError, load_spec_text

    if os.path.lexists(path):
        raise SpecFailure([f"codegen: {path} already exists; not overwriting it"])
    ref = schema_ref if schema_ref is not None else SCHEMA_FILE
    text = starter(target, name_for(path.stem), ref)
    try:
        load_spec_text(text, str(path))
    except SpecError:  # a file name that makes no valid spec name
        text = starter(target, DEFAULT_NAME, ref)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except FileExistsError:
        raise SpecFailure([f"codegen: {path} already exists; not overwriting it"]) from None
    except OSError as exc:
        raise SpecFailure([f"codegen: cannot write {path}: {exc.strerror or exc}"]) from None
    click.echo(f"wrote {path} (target {target})")
    if schema_ref is None:
        schema_path = path.parent / SCHEMA_FILE
        if not os.path.lexists(schema_path):
            try:
                with schema_path.open("x", encoding="utf-8", newline="\n") as handle:
                    handle.write(schema_text())
            except OSError:
                pass  # editors lose completion, nothing else
            else:
                click.echo(f"wrote {schema_path} (the spec's JSON Schema, for editors)")
    click.echo(f"next: codegen check {path} && codegen build {path}")


@codegen.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.argument("spec", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx: click.Context, spec: Path, args: tuple[str, ...]) -> None:
    """Run SPEC directly: the bundle's agent.py, emitted in memory (ARGS go to the agent)."""
    [item] = _compile([spec])
    assert item.bundle is not None
    if _plugins_env_set_by_us:  # the agent runs as its bundle would: pydantic as configured
        os.environ.pop(PLUGINS_ENV, None)
    ctx.exit(run_agent_source(item.bundle[AGENT_FILE], item.name, args))


@codegen.command(context_settings=_HANDED_ON)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def memory(ctx: click.Context, args: tuple[str, ...]) -> None:
    """See, export, correct and delete what an agent remembers (ARGS: `codegen memory --help`)."""
    if _plugins_env_set_by_us:
        os.environ.pop(PLUGINS_ENV, None)
    # The owner's command belongs to the runtime (it works on the stores as the runtime does);
    # the compiler's CLI only hands it the arguments, as ``run`` hands a bundle its own.
    # ``runtime.console.command`` assembles the owner's verbs and the console's.
    owner = importlib.import_module("specwire.runtime.console.command")
    ctx.exit(owner.main(list(args)))


@codegen.command(name="eval", context_settings=_HANDED_ON)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def eval_(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Run continuity scenarios against their bundles, memory on and off; `codegen eval exam
    SPEC` scores a learning spec's exam before and after a study pass (ARGS: `codegen eval
    --help`, `codegen eval exam --help`)."""
    if args[:1] == ("exam",):
        exams = importlib.import_module("specwire.runtime.learning.eval_command")
        ctx.exit(exams.main(list(args[1:]), _exam_loader(exams)))
    # The eval command belongs to the runtime (it runs bundles and reads their stores); the
    # compiler hands it the arguments and a way to build a scenario's spec.
    evals = importlib.import_module("specwire.runtime.evals.command")
    ctx.exit(evals.main(list(args), _eval_builder(evals)))


def _exam_loader(exams: Any) -> Any:
    """``(spec path) -> fragment data``: the spec compiled and lowered as ``build`` does."""

    def load(spec: Path) -> Any:
        from specwire.ir import lower
        from specwire.ir.errors import SpecError
        from specwire.ir.load import load_spec_bytes
        from specwire.ir.read import read_spec_bytes

        shown = str(spec)
        try:
            ir = load_spec_bytes(read_spec_bytes(spec, shown), shown)
        except SpecError as exc:
            raise exams.SpecProblem([str(issue) for issue in exc.issues]) from None
        return lower(ir).to_data()

    return load


def _eval_builder(evals: Any) -> Any:
    """``(spec path, memory on?) -> runtime.evals.BuiltAgent``: the spec compiled as ``build``
    compiles it, or (memory off) the same spec with its memory and continuity removed."""

    def build(spec: Path, memory: bool) -> Any:
        from specwire.emitters.registry import emit
        from specwire.ir.errors import SpecError
        from specwire.ir.load import load_spec_bytes
        from specwire.ir.read import read_spec_bytes

        shown = str(spec)
        try:
            ir = load_spec_bytes(read_spec_bytes(spec, shown), shown)
        except SpecError as exc:
            raise evals.BuildFailed([str(issue) for issue in exc.issues]) from None
        if not memory:
            ir = ir.model_copy(update={"memory": None, "continuity": None})
        return evals.BuiltAgent(ir.name, ir.target, emit(ir)[AGENT_FILE])

    return build


@codegen.command(context_settings=_HANDED_ON)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def dream(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Consolidate an agent's memory now, or see the last run (ARGS: `codegen dream --help`)."""
    if _plugins_env_set_by_us:
        os.environ.pop(PLUGINS_ENV, None)
    # The owner's command with the hosts' model session (``run --bundle`` in ``mode: full``).
    entry = importlib.import_module("specwire.runtime.hosts.dream_command")  # like ``memory``
    ctx.exit(entry.main(list(args)))


@contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


def run_agent_source(source: str, spec_name: str, args: Sequence[str]) -> int:
    """Execute generated ``agent.py`` source as ``__main__``; return its exit status."""
    filename = f"<codegen run {spec_name}>/{AGENT_FILE}"
    code = compile(source, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": filename}
    with _argv([filename, *args]):
        try:
            exec(code, namespace)
        except SystemExit as done:
            return _exit_status(done.code)
    return 0


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    click.echo(str(code), err=True)
    return 1


def main(argv: Sequence[str] | None = None) -> None:
    """The ``codegen`` program (``argv`` None: ``sys.argv``, and ``build``/``check`` end the
    process with ``os._exit``, see the module doc), or the command on ``argv`` in this process."""
    global _plugins_env_set_by_us, _as_program
    if PLUGINS_ENV not in os.environ:
        os.environ[PLUGINS_ENV] = "__all__"
        _plugins_env_set_by_us = True
    if argv is not None:
        codegen.main(args=list(argv), prog_name="codegen")
        return
    _as_program = True
    try:
        codegen.main(prog_name="codegen")
    except SystemExit as done:
        if _exit_hard and (done.code is None or isinstance(done.code, int)):
            _exit_now(done.code or 0)
        raise


def _exit_now(code: int) -> None:
    """End the process now: flush stdout and stderr, then ``os._exit`` (no module teardown, no
    atexit handlers; a build registers none and has closed every file it wrote). A stream that
    cannot be flushed (a closed pipe) returns, so Python exits as usual and reports it; a
    stream that is not there (the program started with it closed) has nothing to flush."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return
    os._exit(code)


if __name__ == "__main__":
    main()

"""The ``codegen`` command: build, check, fragment, schema, run.

Spec errors print every issue (``file:line:col: key: message``) on stderr and exit 2 with
nothing written. A bundle file that cannot be written (``codegen: cannot write PATH: reason``)
exits 2 too: every destination is checked before the first write, so a build writes all of its
bundles or none (short of the disk changing mid-build). Any other failure is an internal error:
one line on stderr, exit 1 (the traceback only with ``SPECWIRE_DEBUG=1``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from emitters.bundle import Bundle
from emitters.writer import BundleWriteError, diff, drift, write_bundle, write_problems
from ir import IrSpec, SpecError, load_spec, lower, spec_json_schema
from runtime.fragment import storage_name

DEBUG_ENV = "SPECWIRE_DEBUG"
AGENT_FILE = "agent.py"  # emitters.common.AGENT_FILE (not imported: see ``emit``)
DEFAULT_OUT = Path("build")
EXIT_DRIFT = 1
EXIT_INTERNAL = 1
EXIT_SPEC = 2


class SpecFailure(Exception):
    """Spec problems to report, one line each (exit 2)."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = tuple(lines)


class WriteFailure(SpecFailure):
    """Bundle files that cannot be written, one line each (exit 2)."""

    def __init__(self, errors: Sequence[BundleWriteError]) -> None:
        super().__init__(list(dict.fromkeys(f"codegen: {error}" for error in errors)))


@dataclass(frozen=True)
class Compiled:
    path: Path
    spec: IrSpec
    bundle: Bundle


def _load(paths: Sequence[Path]) -> list[tuple[Path, IrSpec]]:
    """Load every spec; raise one ``SpecFailure`` with every issue of every failing spec."""
    loaded: list[tuple[Path, IrSpec]] = []
    problems: list[str] = []
    for path in paths:
        try:
            loaded.append((path, load_spec(path, display_path=str(path))))
        except SpecError as exc:
            problems.extend(str(issue) for issue in exc.issues)
    if problems:
        raise SpecFailure(problems)
    return loaded


def emit(spec: IrSpec) -> Bundle:
    """The target's bundle. The emitters (jinja2, black, libcst) are imported on first use, so a
    spec refused while loading is refused without loading them."""
    from emitters.registry import emit as emit_bundle

    return emit_bundle(spec)


def _compile(paths: Sequence[Path]) -> list[Compiled]:
    return [Compiled(path, spec, emit(spec)) for path, spec in _load(paths)]


def _bundle_dirs(out: Path, compiled: Sequence[Compiled]) -> dict[Path, Path]:
    """Each spec's bundle directory, ``<out>/<storage name>/`` (the spec's name, made safe as
    one path component exactly as its stores are: "tenant svc:v1" → "tenant-svc-v1-<hash>");
    collisions are spec errors."""
    dirs: dict[Path, Path] = {}
    owners: dict[Path, Path] = {}
    problems: list[str] = []
    for item in compiled:
        name = item.spec.name
        target = out / storage_name(name)
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
            for line in failure.lines:
                click.echo(line, err=True)
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


@click.group(cls=_Codegen, context_settings={"help_option_names": ["-h", "--help"]})
def codegen() -> None:
    """Compile YAML agent specs into runnable agent bundles."""


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
@click.pass_context
def build(
    ctx: click.Context, specs: tuple[Path, ...], out: Path | None, check_only: bool, show_diff: bool
) -> None:
    """Compile SPEC… into bundles (unchanged files are not rewritten)."""
    compiled = _compile(specs)
    dirs = _bundle_dirs(out if out is not None else DEFAULT_OUT, compiled)
    if check_only or show_diff:
        drifted = False
        for item in compiled:
            target = dirs[item.path]
            if show_diff:
                click.echo(diff(item.bundle, target), nl=False)
            found = drift(item.bundle, target)
            drifted = drifted or bool(found)
            if check_only:
                click.echo(_drift_line(target, found.changed, found.missing, found.stale))
        if check_only and drifted:
            ctx.exit(EXIT_DRIFT)
        return
    # Every destination of every spec is checked first: a build writes all or nothing.
    problems = [
        problem for item in compiled for problem in write_problems(item.bundle, dirs[item.path])
    ]
    if problems:
        raise WriteFailure(problems)
    for item in compiled:
        target = dirs[item.path]
        try:
            result = write_bundle(item.bundle, target)
        except BundleWriteError as error:  # the disk changed under us, or filled up
            raise WriteFailure([error]) from error
        line = f"{target}: {len(result.written)} written, {len(result.unchanged)} unchanged"
        if result.removed:
            line += f", {len(result.removed)} stale removed"
        click.echo(line)


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
    """Validate SPEC… (load, resolve, lower and emit in memory; write nothing)."""
    for item in _compile(specs):
        click.echo(f"ok {item.path}")


@codegen.command()
@click.argument("spec", type=click.Path(path_type=Path, dir_okay=False))
def fragment(spec: Path) -> None:
    """Print SPEC's memory wiring fragment as JSON."""
    [(_, ir)] = _load([spec])
    click.echo(json.dumps(lower(ir).to_data(), indent=2, ensure_ascii=False))


@codegen.command()
def schema() -> None:
    """Print the JSON Schema of the spec language (for editors)."""
    click.echo(json.dumps(spec_json_schema(), indent=2, sort_keys=True, ensure_ascii=False))


@codegen.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.argument("spec", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx: click.Context, spec: Path, args: tuple[str, ...]) -> None:
    """Run SPEC directly: the bundle's agent.py, emitted in memory (ARGS go to the agent)."""
    [item] = _compile([spec])
    ctx.exit(run_agent_source(item.bundle[AGENT_FILE], item.spec.name, args))


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
    codegen.main(args=list(argv) if argv is not None else None, prog_name="codegen")


if __name__ == "__main__":
    main()

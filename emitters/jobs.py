"""Compiling many specs: in this process, or in a pool of ``--jobs`` worker processes.

A task is a spec's bytes and the path it is shown as; a result is the bundle (its name and files)
or the spec's located problems. Results come back in the order of the tasks whatever the number
of workers, so messages and output are the same with ``--jobs 1`` and ``--jobs 8``. Nothing here
writes a file: the command writes only once every spec compiled.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from specwire.emitters.bundle import Bundle

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

Progress = Callable[[int, int, str], None]  # (done, total, shown path)


@dataclass(frozen=True)
class Task:
    raw: bytes
    shown: str


@dataclass(frozen=True)
class Compiled:
    """A compiled spec: the bundle's name (its folder) and its files, in the emitter's order."""

    name: str
    files: tuple[tuple[str, str], ...]
    # Located warnings (``IrSpec.notes``: a key accepted but not wired on this target).
    notes: tuple[str, ...] = ()

    @property
    def bundle(self) -> Bundle:
        return Bundle(self.files)


@dataclass(frozen=True)
class Failed:
    """A spec's problems, one located line each."""

    lines: tuple[str, ...]


Result = Compiled | Failed


def compile_task(task: Task) -> Result:
    """Load, resolve, lower and emit one spec (no file is read or written)."""
    from specwire.emitters.registry import emit
    from specwire.ir.errors import SpecError
    from specwire.ir.load import load_spec_bytes
    from specwire.runtime.core.fragment import storage_name

    try:
        spec = load_spec_bytes(task.raw, task.shown)
    except SpecError as exc:
        return Failed(tuple(str(issue) for issue in exc.issues))
    notes = tuple(getattr(spec, "notes", ()))
    return Compiled(storage_name(spec.name), tuple(emit(spec).items()), notes)


def available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _context() -> BaseContext:
    import multiprocessing

    # On Linux a forked worker inherits the compiler already imported by this process; elsewhere
    # the platform's default (spawn) is the safe choice.
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def compile_all(
    tasks: Sequence[Task],
    jobs: int,
    progress: Progress | None = None,
    warmed: Callable[[], None] | None = None,
) -> list[Result]:
    """Every task's result, in task order. ``warmed`` is called once the compiler is imported:
    after the first task here, before the workers start with ``jobs``."""
    total = len(tasks)
    workers = min(jobs, total)
    if workers <= 1:
        results: list[Result] = []
        for done, task in enumerate(tasks, start=1):
            results.append(compile_task(task))
            if warmed is not None:
                warmed()
            if progress is not None:
                progress(done, total, task.shown)
        return results
    from concurrent.futures import ProcessPoolExecutor  # only a pool needs it

    import specwire.emitters.registry  # noqa: F401  (imported once here, inherited by forked workers)
    import specwire.ir.load  # noqa: F401

    if warmed is not None:
        warmed()

    chunk = max(1, total // (workers * 4))
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        ordered: list[Result] = []
        for done, result in enumerate(pool.map(compile_task, tasks, chunksize=chunk), start=1):
            ordered.append(result)
            if progress is not None:
                progress(done, total, tasks[done - 1].shown)
        return ordered

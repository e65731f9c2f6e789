"""A build formats with black in a forked worker (``emitters.format_worker``): same bytes as
black in-process, the same error when black refuses a source, and a build that still formats
when the worker is gone. Each case runs in a fresh interpreter: the worker starts only where
black is not imported yet and the process has one thread (this test process has more)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from emitter_cases import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]

BUILD_PROBE = """\
import sys
from pathlib import Path
from specwire.emitters.jobs import Task, compile_all
paths = [Path(p) for p in sys.argv[1:]]
tasks = [Task(p.read_bytes(), str(p)) for p in paths]
remote = compile_all(tasks, 1)
assert "black" not in sys.modules, "the worker did not format: black was imported here"
from specwire.emitters.registry import emit
from specwire.ir.load import load_spec_bytes
for task, result in zip(tasks, remote, strict=True):
    here = tuple(emit(load_spec_bytes(task.raw, task.shown)).items())
    assert result.files == here, task.shown
print("ok", len(remote))
"""

WORKER_PROBE = """\
import os, signal
from specwire.emitters.format import FormatError, format_here
from specwire.emitters.format_worker import FormatWorker

source = "x = {'a':1,'b':[1,2,3]}\\nif x :\\n  y=( 1, )\\n"
worker = FormatWorker.start()
assert worker is not None
assert worker.format(source, "a.py") == format_here(source, name="a.py")
assert worker.format("s = '\\\\ud800 é'\\n", "b.py") == format_here("s = '\\\\ud800 é'\\n")

try:
    worker.format("def (:\\n", "broken.py")
except FormatError as remote:
    try:
        format_here("def (:\\n", name="broken.py")
    except FormatError as here:
        assert str(remote) == str(here), (str(remote), str(here))
    else:
        raise AssertionError("black accepted a broken source")
else:
    raise AssertionError("the worker accepted a broken source")
assert worker.format("z=1\\n", "after-error.py") == "z = 1\\n"

os.kill(worker.pid, signal.SIGKILL)
assert worker.format(source, "a.py") is None  # gone: the caller formats in-process
assert worker.format(source, "a.py") is None
worker.close()
print("ok")
"""


def _run(probe: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_worker_formats_every_example_as_black_does_here() -> None:
    out = _run(BUILD_PROBE, *(str(path) for path in EXAMPLES))
    assert out.split() == ["ok", str(len(EXAMPLES))]


def test_the_worker_refuses_as_black_does_and_a_dead_worker_is_replaced_by_black_here() -> None:
    assert _run(WORKER_PROBE).split() == ["ok"]

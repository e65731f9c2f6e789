"""The store lock: O_EXCL file, contention between real processes, stale-lock stealing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from continuity_support import Logs, make_store

from runtime.continuity.lock import FileLock, read_holder
from runtime.errors import LockTimeoutError

HOLDER = """
import sys
from pathlib import Path
from runtime.continuity.lock import FileLock

lock = FileLock(Path(sys.argv[1]), wait_s=5)
lock.acquire()
print("held", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
"""


def _start_holder(lock_path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_two_processes_contend_for_the_lock(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    holder = _start_holder(lock_path)
    try:
        assert read_holder(lock_path).pid == holder.pid
        waiter = FileLock(lock_path, wait_s=0.3)
        started = time.monotonic()
        with pytest.raises(LockTimeoutError, match=f"locked by pid {holder.pid}"):
            waiter.acquire()
        assert time.monotonic() - started >= 0.3
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        holder.wait(timeout=10)
    with FileLock(lock_path, wait_s=0.3):
        assert read_holder(lock_path).pid == os.getpid()
    assert not lock_path.exists()


def test_a_waiter_gets_the_lock_once_the_other_process_releases(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    holder = _start_holder(lock_path)
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    with FileLock(lock_path, wait_s=5):  # polls until the holder lets go
        assert read_holder(lock_path).pid == os.getpid()
    holder.wait(timeout=10)


def test_a_store_mutation_times_out_against_another_process(tmp_path: Path) -> None:
    store = make_store(tmp_path, lock_wait_s=0.2)
    holder = _start_holder(store.lock_path)
    try:
        with pytest.raises(LockTimeoutError, match=f"pid {holder.pid}"):
            store.write_focus("blocked")
        assert store.read_focus() is not None  # reads never lock
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=10)
    store.write_focus("now it works")


def test_a_lock_held_by_a_dead_process_is_stolen(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=10)
    lock_path = tmp_path / ".lock"
    lock_path.write_text(json.dumps({"pid": dead.pid, "acquiredAt": "2026-01-01T00:00:00.000Z"}))
    logs = Logs()
    with FileLock(lock_path, wait_s=0.2, log=logs):
        assert read_holder(lock_path).pid == os.getpid()
    assert len(logs.lines) == 1
    assert "lock_stolen" in logs.lines[0] and f"pid {dead.pid} is dead" in logs.lines[0]


def test_an_old_lock_is_stolen_even_if_its_holder_lives(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    lock_path.write_text(json.dumps({"pid": os.getppid(), "acquiredAt": "x"}))
    old = time.time() - 31
    os.utime(lock_path, (old, old))
    logs = Logs()
    with FileLock(lock_path, wait_s=0.2, log=logs):
        pass
    assert "lock_stolen" in logs.lines[0] and "stale after 30s" in logs.lines[0]


def test_a_fresh_lock_of_a_live_process_is_respected(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    lock_path.write_text(json.dumps({"pid": os.getppid(), "acquiredAt": "x"}))
    with pytest.raises(LockTimeoutError, match=f"pid {os.getppid()}"):
        FileLock(lock_path, wait_s=0.1).acquire()
    assert lock_path.exists()


def test_release_never_removes_someone_elses_lock(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    mine = FileLock(lock_path)
    mine.acquire()
    os.unlink(lock_path)  # as if it had been stolen ...
    lock_path.write_text(json.dumps({"pid": os.getppid()}))  # ... and taken by another
    mine.release()
    assert read_holder(lock_path).pid == os.getppid()


def test_lock_file_content_and_mode(tmp_path: Path) -> None:
    lock_path = tmp_path / "sub" / ".lock"
    with FileLock(lock_path):
        data = json.loads(lock_path.read_text())
        assert data["pid"] == os.getpid() and data["acquiredAt"].endswith("Z")
        assert lock_path.stat().st_mode & 0o777 == 0o600


WRITER = """
import sys
from pathlib import Path
from runtime.continuity.store import ContinuityStore
from runtime.paths import StoreLayout

store = ContinuityStore(StoreLayout(Path(sys.argv[1]), "demo"), lock_wait_s=20)
for n in range(int(sys.argv[3])):
    store.write_goal(f"{sys.argv[2]} {n}")
"""


def test_two_processes_writing_at_once_lose_no_update(tmp_path: Path) -> None:
    root = (tmp_path / ".specwire").resolve()
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), name, "12"])
        for name in ("left", "right")
    ]
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    store = make_store(tmp_path)
    goals = store.list_goals()
    assert len(goals) == 24
    assert [g.id for g in goals] == [f"goal-{n:04d}" for n in range(1, 25)]
    assert sorted(g.title for g in goals) == sorted(
        [f"left {n}" for n in range(12)] + [f"right {n}" for n in range(12)]
    )
    assert not store.lock_path.exists()

"""The store lock (``runtime.fs.locking``, an ``flock``): contention between real processes, a
killed holder's lock free at once, a live holder never taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from continuity_support import make_store

from specwire.runtime.core.errors import LockTimeoutError, UnsafeFileError
from specwire.runtime.fs.locking import FileLock, read_holder

HOLDER = """
import sys
from pathlib import Path
from specwire.runtime.fs.locking import FileLock

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


class CountingLock(FileLock):
    """A ``FileLock`` that counts its attempts to take the lock."""

    tries: int = 0

    def try_acquire(self) -> bool:
        self.tries += 1
        return super().try_acquire()


def test_two_processes_contend_for_the_lock(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    holder = _start_holder(lock_path)
    try:
        assert read_holder(lock_path).pid == holder.pid
        waiter = CountingLock(lock_path, wait_s=0.3, poll_s=0.02)
        with pytest.raises(LockTimeoutError, match=f"locked by pid {holder.pid}"):
            waiter.acquire()
        assert waiter.tries >= 2  # it waited for the holder, trying again, before giving up
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


def test_a_killed_holders_lock_is_free_at_once(tmp_path: Path) -> None:
    # Replaces "a lock held by a dead process is stolen": nothing is stolen any more, the OS
    # releases an flock when its holder dies.
    lock_path = tmp_path / ".lock"
    holder = _start_holder(lock_path)
    with pytest.raises(LockTimeoutError):
        FileLock(lock_path, wait_s=0).acquire()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    assert lock_path.exists()  # the killed holder could not remove its file: it blocks nobody
    lock = FileLock(lock_path, wait_s=0)  # no waiting at all
    lock.acquire()
    assert read_holder(lock_path).pid == os.getpid()
    lock.release()
    assert not lock_path.exists()


WAITER = """
import sys
from pathlib import Path
from specwire.runtime.core.errors import LockTimeoutError
from specwire.runtime.fs.locking import FileLock

try:
    FileLock(Path(sys.argv[1]), wait_s=float(sys.argv[2])).acquire()
except LockTimeoutError as exc:
    print("timeout:", exc)
else:
    print("acquired")
"""


def test_a_live_holder_is_never_taken_over(tmp_path: Path) -> None:
    # Replaces "an old lock is stolen even if its holder lives" (30 s takeover): a live holder
    # keeps its lock however old the file looks; a second process waits, then gives up.
    lock_path = tmp_path / ".lock"
    holder = _start_holder(lock_path)
    try:
        old = time.time() - 3600
        os.utime(lock_path, (old, old))
        waiter = subprocess.run(
            [sys.executable, "-c", WAITER, str(lock_path), "0.5"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert waiter.stdout.startswith("timeout: continuity store is locked by pid "), waiter
        assert f"pid {holder.pid} since " in waiter.stdout and "gave up after 0.5s" in waiter.stdout
        assert read_holder(lock_path).pid == holder.pid  # still the holder's
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"  # it held it all along
        holder.wait(timeout=10)


def test_a_leftover_lock_file_blocks_nobody(tmp_path: Path) -> None:
    # Replaces "a fresh lock of a live process is respected": the lock is the flock, not the
    # file, so a file naming a live pid (an earlier version's O_EXCL lock, or one a killed
    # holder left) is simply locked and reused.
    lock_path = tmp_path / ".lock"
    lock_path.write_text(json.dumps({"pid": os.getppid(), "acquiredAt": "x"}))
    with FileLock(lock_path, wait_s=0):
        assert read_holder(lock_path).pid == os.getpid()
    assert not lock_path.exists()


def test_two_locks_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    lock_path = tmp_path / ".lock"
    with (
        FileLock(lock_path),
        pytest.raises(LockTimeoutError, match=f"locked by pid {os.getpid()}"),
    ):
        FileLock(lock_path, wait_s=0.05).acquire()
    with FileLock(lock_path, wait_s=0):
        pass


def test_a_lock_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / ".lock"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFileError, match=r"\.lock is a FIFO \(named pipe\), not a regular"):
        FileLock(fifo, wait_s=0).acquire()
    link = tmp_path / "link.lock"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeFileError, match="is a symbolic link"):
        FileLock(link, wait_s=0).acquire()
    assert not (tmp_path / "elsewhere").exists()


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
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout

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

"""The one cross-process lock of the runtime: ``fcntl.flock`` on a lock file.

Used by the continuity store (``.lock`` in its folder), ``retention.json``
(``.retention.lock``) and per-conversation turns (``sessions/<sess_…>.lock``).

The lock is the ``flock``, not the file: the operating system releases it when its holder's
descriptor closes, including when the holder is killed, so a dead holder never blocks anyone and
a live one is never taken over, however long it holds. A waiter polls (``LOCK_NB``) until its
wait budget runs out, then raises ``LockTimeoutError`` naming the holder, which writes its pid
and the time into the file for that message only.

The holder removes the file when it releases (while still holding it). A waiter that locked a
file which was meanwhile removed or replaced sees that the path no longer names its descriptor's
file, lets go and tries again, so two processes never hold "the" lock on two different files.
A file left behind by a killed holder (or by the ``O_EXCL`` lock of earlier versions) is just
locked and reused.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import field
from pathlib import Path
from types import TracebackType

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.errors import LockTimeoutError, UnsafeFileError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.fs.safe_open import open_regular_fd

DEFAULT_WAIT_S = 2.0
POLL_S = 0.02
LOCK_FILE_MODE = 0o600


@lazy_dataclass(frozen=True)
class LockHolder:
    """Who holds a lock file, as far as the file says."""

    pid: int | None
    acquired_at: str | None


def parse_holder(raw_bytes: bytes) -> LockHolder:
    try:
        raw = json.loads(raw_bytes.decode("utf-8"))
    except ValueError:
        return LockHolder(None, None)
    if not isinstance(raw, dict):
        return LockHolder(None, None)
    pid = raw.get("pid")
    at = raw.get("acquiredAt")
    return LockHolder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        at if isinstance(at, str) else None,
    )


def read_holder(path: Path) -> LockHolder:
    """Who holds the lock, as far as its file says (fields are None when unreadable)."""
    try:
        fd = open_regular_fd(path)
    except (OSError, UnsafeFileError):
        return LockHolder(None, None)
    try:
        return parse_holder(os.read(fd, 4096))
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (held.st_dev, held.st_ino)


@lazy_methods_dataclass
class FileLock:
    """``with FileLock(path):`` — exclusive across processes and across threads (each
    acquisition opens its own descriptor). Not re-entrant."""

    path: Path
    wait_s: float = DEFAULT_WAIT_S
    what: str = "continuity store"
    poll_s: float = POLL_S
    now: Clock = utc_now
    _fd: int | None = field(default=None, init=False, repr=False)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this FileLock")
        deadline = time.monotonic() + self.wait_s
        while True:
            if self.try_acquire():
                return
            if time.monotonic() >= deadline:
                raise self._timeout()
            time.sleep(self.poll_s)

    def try_acquire(self) -> bool:
        """Take the lock if it is free right now; never waits."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this FileLock")
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            except BaseException:
                os.close(fd)
                raise
            if _same_file(fd, self.path):
                break
            os.close(fd)  # its holder removed it on release: lock the file now at the path
        try:
            body = json.dumps({"pid": os.getpid(), "acquiredAt": iso(self.now())})
            os.ftruncate(fd, 0)
            os.pwrite(fd, body.encode("utf-8"), 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # Removed while still held, and only if the path still names our file.
            if _same_file(fd, self.path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
        finally:
            os.close(fd)  # closing releases the flock

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return open_regular_fd(
            self.path, os.O_RDWR | os.O_CREAT, label=str(self.path), mode=LOCK_FILE_MODE
        )

    def _timeout(self) -> LockTimeoutError:
        holder = read_holder(self.path)
        who = f"pid {holder.pid}" if holder.pid is not None else "another process"
        since = f" since {holder.acquired_at}" if holder.acquired_at else ""
        return LockTimeoutError(
            f"{self.what} is locked by {who}{since} ({self.path.name} in {self.path.parent}); "
            f"gave up after {self.wait_s:g}s — retry shortly"
        )

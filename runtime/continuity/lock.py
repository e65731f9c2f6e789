"""A cross-process file lock: an ``O_EXCL`` lock file holding ``{pid, acquiredAt}``.

Waiters poll every 50 ms up to a wait budget (2 s by default). A lock whose holder process is
dead, or whose file is older than 30 s, is stolen with a ``lock_stolen`` warning; otherwise the
waiter gives up with ``LockTimeoutError`` naming the holder's pid. Release removes the lock file
only if it is still ours (same inode and content), so a stolen-and-retaken lock is never
removed by mistake.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from runtime.errors import LockTimeoutError
from runtime.events import Clock, iso, utc_now

DEFAULT_WAIT_S = 2.0
POLL_S = 0.05
STALE_AFTER_S = 30.0


def _drop(line: str) -> None:
    return None


@dataclass(frozen=True)
class LockHolder:
    pid: int | None
    acquired_at: str | None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


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
    return parse_holder(_read_bytes(path))


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class FileLock:
    path: Path
    wait_s: float = DEFAULT_WAIT_S
    poll_s: float = POLL_S
    stale_after_s: float = STALE_AFTER_S
    log: Callable[[str], None] = _drop
    now: Clock = utc_now
    _inode: int | None = field(default=None, init=False, repr=False)
    _body: bytes = field(default=b"", init=False, repr=False)

    def acquire(self) -> None:
        if self._inode is not None:
            raise RuntimeError(f"{self.path} is already held by this FileLock")
        deadline = time.monotonic() + self.wait_s
        while True:
            if self._try_create():
                return
            try:
                stat = os.stat(self.path)
            except FileNotFoundError:
                continue  # released between our attempt and the stat: try again at once
            content = _read_bytes(self.path)
            holder = parse_holder(content)
            reason = self._stale_reason(holder, stat.st_mtime)
            if reason is not None:
                self._steal(stat.st_ino, content, reason)
                continue
            if time.monotonic() >= deadline:
                who = f"pid {holder.pid}" if holder.pid is not None else "an unknown process"
                since = f" since {holder.acquired_at}" if holder.acquired_at else ""
                raise LockTimeoutError(
                    f"continuity store is locked by {who}{since} ({self.path.name} in "
                    f"{self.path.parent}); gave up after {self.wait_s:g}s — retry shortly"
                )
            time.sleep(self.poll_s)

    def release(self) -> None:
        inode, self._inode = self._inode, None
        if inode is None:
            return
        # Same inode *and* same content: an inode number can be reused by a newer lock file.
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_ino == inode and self.path.read_bytes() == self._body:
                os.unlink(self.path)

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

    def _try_create(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        try:
            body = json.dumps({"pid": os.getpid(), "acquiredAt": iso(self.now())})
            self._body = body.encode("utf-8")
            os.write(fd, self._body)
            os.fsync(fd)
            self._inode = os.fstat(fd).st_ino
        finally:
            os.close(fd)
        return True

    def _stale_reason(self, holder: LockHolder, mtime: float) -> str | None:
        if holder.pid is not None and not pid_alive(holder.pid):
            return f"holder pid {holder.pid} is dead"
        age = time.time() - mtime
        if age > self.stale_after_s:
            who = f"pid {holder.pid}" if holder.pid is not None else "unknown holder"
            return f"{who} held it for {age:.0f}s (stale after {self.stale_after_s:g}s)"
        return None

    def _steal(self, inode: int, content: bytes, reason: str) -> None:
        """Move the stale lock aside; put it back if a fresher one was moved by mistake."""
        aside = self.path.with_name(f"{self.path.name}.stale-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # someone else stole or released it first
        try:
            if os.stat(aside).st_ino != inode or _read_bytes(aside) != content:
                # Another waiter stole it first and already holds a fresh lock: give it back.
                with contextlib.suppress(FileExistsError):
                    os.link(aside, self.path)
                return
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(aside)
        self.log(f"[memory] lock_stolen: {self.path} ({reason})\n")

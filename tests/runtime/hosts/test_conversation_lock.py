"""The per-conversation turn lock is the runtime's one lock (``runtime.fs.locking``): a live host
is waited for and then reported, a killed one frees the conversation at once."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hosts_support import echo_catalog

from specwire.runtime.core.errors import LockTimeoutError
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.hosts.turns import conversation_lock, run_turn
from specwire.runtime.hosts.types import TurnSetup
from specwire.runtime.models import ScriptedModel

SESSION = "sess_00000000000000c1"

HOLDER = """
import sys
from pathlib import Path
from specwire.runtime.hosts.turns import conversation_lock

lock = conversation_lock(Path(sys.argv[1]), sys.argv[2])
lock.acquire()
print("held", flush=True)
sys.stdin.readline()
"""


def _hold(sessions: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(sessions), SESSION],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _turn(sessions: Path, released: list[bool], wait_s: float) -> list[str]:
    setup = TurnSetup(echo_catalog(), close=lambda: released.append(True))
    _, replies = run_turn(
        model=ScriptedModel(),
        instructions="Answer.",
        setup=setup,
        sessions_dir=sessions,
        session_id=SESSION,
        message="hello",
        spec_name="demo",
        target="channel",
        info={},
        log=lambda line: None,
        lock_wait_s=wait_s,
    )
    return replies


def test_the_conversation_lock_is_the_shared_file_lock(tmp_path: Path) -> None:
    lock = conversation_lock(tmp_path, SESSION)
    assert isinstance(lock, FileLock)
    assert lock.path == tmp_path / f"{SESSION}.lock"


def test_a_turn_waits_for_a_live_host_then_says_who_holds_the_conversation(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    holder = _hold(sessions)
    released: list[bool] = []
    try:
        with pytest.raises(LockTimeoutError) as caught:
            _turn(sessions, released, wait_s=0.2)
        assert str(caught.value).startswith(
            f"conversation {SESSION} is locked by pid {holder.pid} since "
        )
        assert released == [True]  # the turn's wiring was released all the same
        assert not (sessions / f"{SESSION}.jsonl").exists()  # the turn never ran
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    assert _turn(sessions, released, wait_s=0) == ["Noted: hello."]


def test_a_killed_host_leaves_the_conversation_free(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    holder = _hold(sessions)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    assert _turn(sessions, [], wait_s=0) == ["Noted: hello."]
    assert not (sessions / f"{SESSION}.lock").exists()

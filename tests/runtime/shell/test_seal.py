"""The sandbox's seal: no network, no host sockets, bounded resources, no host secrets.

Each test drives the real ``bash`` tool. Commands that need more than the shell run the
system's ``python3`` (from ``/usr``; the test is skipped where there is none).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from specwire.runtime.tools.shell import BashInput, run_bash
from specwire.runtime.tools.shell.host_code import (
    InterpreterInsideWorkspaceError,
    launcher_interpreter,
)
from specwire.runtime.tools.shell.sandbox import (
    SandboxPolicy,
    SandboxUnavailableError,
    require_sandbox,
)
from specwire.runtime.tools.shell.settings import BashSettings
from tests.runtime.shell.servers import CountingListener

SYSTEM_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
needs_python = pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no system python3 in /usr")


def bash(work: Path, command: str, settings: BashSettings | None = None, timeout_ms: int = 60_000):  # type: ignore[no-untyped-def]
    return run_bash(work, BashInput(command=command, timeoutMs=timeout_ms), settings)


def py(code: str) -> str:
    return f"{SYSTEM_PYTHON} -c '{code}' 2>&1"


def test_bash_cannot_reach_a_loopback_port_of_the_host(
    tmp_path: Path, tcp_listener: tuple[CountingListener, int]
) -> None:
    listener, port = tcp_listener
    # The listener answers the host itself: the test sees a working service first.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        assert conn.recv(64).startswith(b"host-service-banner")
    before = listener.accepted
    result = bash(
        tmp_path,
        f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -c 64 <&3 || echo refused",
    )
    assert "host-service-banner" not in result.text and "refused" in result.text
    assert listener.accepted == before


def test_loopback_inside_the_sandbox_is_up_and_its_own(tmp_path: Path) -> None:
    if SYSTEM_PYTHON is None:
        pytest.skip("no system python3 in /usr")
    # A server and a client in the same call talk over the sandbox's own loopback.
    code = (
        'import socket;s=socket.socket();s.bind(("127.0.0.1",0));s.listen();'
        'c=socket.create_connection(s.getsockname());a,_=s.accept();a.sendall(b"own-lo");'
        "print(c.recv(9).decode())"
    )
    result = bash(tmp_path, py(code))
    assert not result.is_error, result.text
    assert result.text.startswith("own-lo")


@needs_python
def test_bash_cannot_reach_a_unix_socket_outside_the_workspace(
    tmp_path: Path, unix_listener: tuple[CountingListener, Path]
) -> None:
    listener, path = unix_listener
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        assert conn.recv(64).startswith(b"host-service-banner")
    before = listener.accepted
    code = (
        f'import socket;s=socket.socket(socket.AF_UNIX);s.connect("{path}");'
        "print(s.recv(64).decode())"
    )
    result = bash(tmp_path, py(code))
    assert "host-service-banner" not in result.text
    assert "No such file" in result.text  # the folder does not exist in the sandbox's root
    assert listener.accepted == before


@needs_python
def test_an_abstract_unix_socket_of_the_host_is_unreachable(tmp_path: Path) -> None:
    name = f"\0specwire-seal-{uuid.uuid4().hex[:8]}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(name)
    listener = CountingListener(sock)
    try:
        code = (
            f'import socket;s=socket.socket(socket.AF_UNIX);s.connect("\\0{name[1:]}");'
            "print(s.recv(64).decode())"
        )
        result = bash(tmp_path, py(code))
        assert "host-service-banner" not in result.text and "Error" in result.text
        assert listener.accepted == 0
    finally:
        listener.close()


@needs_python
def test_a_3_gib_allocation_is_refused_by_default(tmp_path: Path) -> None:
    result = bash(tmp_path, py('b = bytearray(3 << 30); print("allocated")'))
    assert "MemoryError" in result.text and "allocated" not in result.text
    small = bash(tmp_path, py('b = bytearray(256 << 20); print("allocated")'))
    assert small.text.startswith("allocated"), small.text


@needs_python
def test_a_spec_knob_raises_the_memory_limit(tmp_path: Path) -> None:
    settings = BashSettings.from_spec({"memoryMb": 5120})
    result = bash(tmp_path, py('b = bytearray(3 << 30); print("allocated")'), settings)
    assert result.text.startswith("allocated"), result.text


FORK_COUNT = (
    "import os,time\n"
    "n=0\n"
    "for i in range(600):\n"
    "    try:\n"
    "        pid=os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if pid==0:\n"
    "        time.sleep(5)\n"
    "        os._exit(0)\n"
    "    n+=1\n"
    'print("forked",n)\n'
)


@needs_python
def test_600_processes_are_refused_by_default(tmp_path: Path) -> None:
    (tmp_path / "forks.py").write_text(FORK_COUNT, encoding="utf-8")
    result = bash(tmp_path, f"{SYSTEM_PYTHON} forks.py")
    forked = int(result.text.split("forked ")[1].split()[0])
    assert 100 < forked < 600, result.text  # processes work, up to the limit


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def test_a_fork_bomb_ends_with_the_call_and_the_host_survives(tmp_path: Path) -> None:
    marker = f"bomb{uuid.uuid4().hex[:8]}"
    # Every fork of the shell keeps its command line: the marker finds them on the host.
    result = bash(tmp_path, f"{marker}() {{ {marker} | {marker} & }}; {marker}", timeout_ms=3000)
    assert result.is_error or "[exit code" in result.text
    assert _processes_with(marker) == []
    done = subprocess.run(["true"], check=False)  # the host still forks
    assert done.returncode == 0
    assert bash(tmp_path, "echo alive").text.startswith("alive")


def test_a_2_gib_file_is_refused_by_default(tmp_path: Path) -> None:
    # truncate extends without writing data: the limit is checked all the same.
    result = bash(tmp_path, "truncate -s 2G big.bin; echo status=$?; truncate -s 512M ok.bin")
    assert "status=0" not in result.text, result.text
    assert not (tmp_path / "big.bin").exists() or (tmp_path / "big.bin").stat().st_size < 2 << 30
    assert (tmp_path / "ok.bin").stat().st_size == 512 << 20


def test_a_written_file_stops_at_the_file_size_limit(tmp_path: Path) -> None:
    settings = BashSettings.from_spec({"fileSizeMb": 1})
    result = bash(tmp_path, "head -c 3000000 /dev/zero > out.bin; echo status=$?", settings)
    assert "status=0" not in result.text
    assert (tmp_path / "out.bin").stat().st_size <= 1 << 20


def test_cpu_time_is_limited(tmp_path: Path) -> None:
    settings = BashSettings.from_spec({"cpuSeconds": 1})
    result = bash(tmp_path, "while :; do :; done", settings, timeout_ms=20_000)
    assert "timed out" not in result.text  # the CPU limit ended it, not the wall clock
    assert "[exit code 137]" in result.text or "[exit code 152]" in result.text, result.text


@pytest.mark.skipif(os.getuid() != 0, reason="only root can read /etc/shadow on the host")
def test_etc_shadow_is_unreadable_even_as_root(tmp_path: Path) -> None:
    shadow = Path("/etc/shadow")
    if not shadow.is_file() or not shadow.read_text(encoding="utf-8", errors="replace").strip():
        pytest.skip("no /etc/shadow with content on this host")
    first = shadow.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    result = bash(tmp_path, "id -u; cat /etc/shadow /etc/gshadow; ls /etc/ssh 2>&1; echo end")
    assert result.text.startswith("0\n")  # root inside
    assert first not in result.text and "root:" not in result.text
    keys = sorted(Path("/etc/ssh").glob("ssh_host_*_key")) if Path("/etc/ssh").is_dir() else []
    for key in keys:
        assert "PRIVATE KEY" not in bash(tmp_path, f"cat {key}").text


def test_the_state_folder_mask_cannot_be_unmounted(tmp_path: Path) -> None:
    (tmp_path / ".specwire").mkdir()
    (tmp_path / ".specwire" / "log.jsonl").write_text("real\n", encoding="utf-8")
    result = bash(
        tmp_path, "umount -l .specwire; umount -l /; echo count=$(ls -A .specwire | wc -l)"
    )
    assert "count=0" in result.text, result.text


def test_an_interpreter_inside_the_workspace_refuses_bash_in_one_line(tmp_path: Path) -> None:
    interpreter_home = Path(os.path.realpath(sys.executable)).parent
    with pytest.raises(InterpreterInsideWorkspaceError) as refused:
        launcher_interpreter(interpreter_home)
    assert "\n" not in str(refused.value) and "lies in the workspace" in str(refused.value)
    from specwire.runtime.tools.shell import sandbox

    sandbox._cached_probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailableError) as unavailable:
            require_sandbox(interpreter_home)
        assert "\n" not in str(unavailable.value)
        assert not (interpreter_home / ".specwire").exists()  # refused before anything is made
    finally:
        sandbox._cached_probe.cache_clear()


def test_the_launcher_runs_on_a_resolved_interpreter_with_its_code_in_memory(
    tmp_path: Path,
) -> None:
    (tmp_path / "s").mkdir()
    argv = SandboxPolicy(tmp_path.resolve()).launcher_argv("true", tmp_path / "s", {})
    assert argv[0] == os.path.realpath(sys.executable)
    assert argv[1:4] == ["-I", "-S", "-c"]
    assert not any(arg.endswith(".py") for arg in argv)  # no file is named, none is read

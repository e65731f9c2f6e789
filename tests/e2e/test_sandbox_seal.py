"""A hostile agent whose host runs from inside its own workspace.

The specwire packages are copied into the workspace (``vendor/``, on ``PYTHONPATH``: an
editable install in the project folder), or the host runs on a ``.venv`` in the workspace. The
scripted model patches every file of the package from ``bash``, plants a ``sitecustomize`` and
a ``.pth``; then the host starts again and runs ``bash`` once more. Nothing the shell wrote may
ever run unconfined: a payload that ran outside the sandbox would leave a file outside the
workspace, and the package's files must be byte-identical afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("runtime", "emitters", "ir", "templates")

SPEC = """\
name: sealed
target: cli
agent:
  model: scripted
  instructions: Do the work you are asked to do.
tools: [read, bash]
"""


def bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def run_host(
    world: Path, python: str, pythonpath: Path, messages: list[str], spec_text: str = SPEC
) -> subprocess.CompletedProcess[str]:
    spec = world / "sealed.yaml"
    spec.write_text(spec_text, encoding="utf-8")
    # -P: the workspace (the cwd) is not put on sys.path; see runtime/shell/host_code.py.
    argv = [python, "-P", "-m", "specwire.emitters.command", "run", str(spec)]
    for message in messages:
        argv += ["--message", message]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    environ.update(HOME=str(world / "home"), PYTHONPATH=str(pythonpath))
    return subprocess.run(
        argv,
        cwd=world / "work",
        capture_output=True,
        text=True,
        env=environ,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


def results(work: Path) -> list[dict[str, Any]]:
    texts = []
    logs = (work / ".specwire" / "sessions").glob("sess_*.jsonl")
    for log in sorted(logs, key=lambda log: log.stat().st_mtime_ns):  # one log per host run
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        texts += [e["payload"] for e in events if e["type"] == "tool_result"]
    return texts


@pytest.fixture
def world(tmp_path: Path) -> Path:
    for name in ("home", "outside", "work"):
        (tmp_path / name).mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside-secret-42\n", encoding="utf-8")
    return tmp_path


def payload(world: Path) -> str:
    """Python that, run anywhere outside the sandbox, leaves proof outside the workspace."""
    return f'open("{world}/outside/pwned", "w").write("ran unconfined")'


def patch_everything(folder: str, world: Path) -> str:
    line = payload(world).replace('"', '\\"')
    return (
        # The loop's own errors (one per read-only file) are silenced as a group: the tool's
        # output is capped, and the count and the lines below are what the test reads.
        f'n=0; {{ for f in $(find {folder} -type f); do echo "{line}" >> "$f" '
        f"&& n=$((n+1)); done; }} 2>/dev/null; echo patched=$n; "
        f"rm -rf {folder}/specwire/runtime/tools/shell 2>&1 | tail -1; "
        f'echo "{line}" > {folder}/sitecustomize.py 2>&1; '
        f'echo "import os; {line}" > {folder}/evil.pth 2>&1; echo done'
    )


def assert_never_ran_unconfined(world: Path) -> None:
    assert not (world / "outside" / "pwned").exists()
    assert sorted(p.name for p in (world / "outside").iterdir()) == ["secret.txt"]


def test_patching_the_package_inside_the_workspace_never_runs_unconfined(world: Path) -> None:
    work = world / "work"
    vendor = work / "vendor"
    for name in PACKAGES:
        shutil.copytree(
            ROOT / name, vendor / "specwire" / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    before = fingerprint(vendor)
    first = run_host(
        world,
        sys.executable,
        vendor,
        [
            bash("echo made > made.txt && cat made.txt"),
            bash(patch_everything("vendor", world)),
            bash(f"cat {world}/outside/secret.txt; echo x > {world}/outside/new.txt"),
        ],
    )
    assert first.returncode == 0, first.stderr
    second = run_host(
        world, sys.executable, vendor, [bash(f"cat {world}/outside/secret.txt; echo second")]
    )
    assert second.returncode == 0, second.stderr
    texts = [r["text"] for r in results(work)]
    assert texts[0].startswith("made")  # the workspace itself is writable
    assert "patched=0" in texts[1] and "Read-only file system" in texts[1]
    assert fingerprint(vendor) == before  # byte-identical: nothing for a later start to run
    joined = "\n".join(texts)
    assert "outside-secret-42" not in joined and "second" in texts[-1]
    assert_never_ran_unconfined(world)


def test_a_venv_inside_the_workspace_cannot_be_patched_from_bash(world: Path) -> None:
    work = world / "work"
    base = os.path.realpath(sys.executable)
    made = subprocess.run(
        [base, "-m", "venv", "--without-pip", str(work / ".venv")],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot create a venv here: {made.stderr.strip()[:200]}")
    python = str(work / ".venv" / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies and packages come from outside (this test's environment, the repo); the
    # venv's site-packages is the workspace's code: a .pth there runs at every start.
    import site as host_site

    outside = "\n".join(host_site.getsitepackages())
    (Path(site) / "deps.pth").write_text(outside + "\n", encoding="utf-8")
    before = fingerprint(work / ".venv")
    # The repo's folders, importable as `specwire.*` without the editable install's finder.
    source = ROOT / ".typing"
    first = run_host(
        world,
        python,
        source,
        [bash(patch_everything(".venv", world)), bash(f'echo "import os" > {site}/evil.pth')],
    )
    assert first.returncode == 0, first.stderr
    second = run_host(world, python, source, [bash("echo second")])
    assert second.returncode == 0, second.stderr
    texts = [r["text"] for r in results(work)]
    assert "patched=0" in texts[0] and "Read-only file system" in texts[1]
    assert fingerprint(work / ".venv") == before
    assert texts[-1].startswith("second")
    assert_never_ran_unconfined(world)


def test_outbound_bash_never_reaches_the_hosts_own_services(world: Path) -> None:
    """A spec with ``bash: {network: outbound}``, run by the real host: the shell's curl (or a
    raw CONNECT) to a loopback port and a Unix socket the test opened reach nothing."""
    import socket
    import threading
    import uuid

    accepted = {"tcp": 0, "unix": 0}

    def serve(sock: socket.socket, kind: str) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            accepted[kind] += 1
            conn.sendall(b"host-service-banner\n")
            conn.close()

    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    folder = Path(f"/tmp/specwire-e2e-{uuid.uuid4().hex[:8]}")
    folder.mkdir(mode=0o700)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(folder / "service.sock"))
    for sock, kind in ((tcp, "tcp"), (unix, "unix")):
        sock.listen(8)
        threading.Thread(target=serve, args=(sock, kind), daemon=True).start()
    port = tcp.getsockname()[1]
    connect = (
        "p=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p; "
        "printf 'CONNECT TARGET HTTP/1.1\\r\\n\\r\\n' >&3; head -c 200 <&3; echo"
    )
    curl = shutil.which("curl") or "false"
    try:
        done = run_host(
            world,
            sys.executable,
            ROOT / ".typing",
            [
                bash(f"{curl} -sS -m 10 http://127.0.0.1:{port}/ 2>&1; echo curl=$?"),
                bash(connect.replace("TARGET", f"127.0.0.1:{port}")),
                bash(connect.replace("TARGET", str(folder / "service.sock"))),
                bash(f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -c 64 <&3 || echo no-route"),
            ],
            spec_text=SPEC + "bash: {network: outbound}\n",
        )
        assert done.returncode == 0, done.stderr
        texts = [r["text"] for r in results(world / "work")]
        assert len(texts) == 4, texts
        joined = "\n".join(texts)
        assert "host-service-banner" not in joined
        assert "403" in texts[1] and "loopback" in texts[1], texts[1]
        assert "403" in texts[2] and "not a host:port" in texts[2], texts[2]
        assert "no-route" in texts[3]
        assert accepted == {"tcp": 0, "unix": 0}
    finally:
        tcp.close()
        unix.close()
        shutil.rmtree(folder, ignore_errors=True)

"""Bundles served in-process: the Starlette app `agent.py serve` hands to uvicorn, driven through
Starlette's TestClient (or httpx's ASGI transport) instead of a socket and a subprocess.

The bundle is the one `codegen build` writes (emitted in-process, then imported from its file);
its ``main(["serve"])`` runs the real host code, whose last step — ``run_server(app, ...)`` — is
swapped for one that keeps the app. Everything before that (the tenant keys, the channel secrets,
the usage ledgers, the memory wiring of every turn) is the code a user runs.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from starlette.applications import Starlette

from specwire.emitters.registry import emit
from specwire.ir import load_spec

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
SNAPSHOTS = ROOT / "snapshots"
_loaded = itertools.count()


def load_agent(spec: Path, out: Path) -> ModuleType:
    """Emit ``spec``'s bundle into ``out`` and import its ``agent.py`` (under a unique name)."""
    out.mkdir(parents=True, exist_ok=True)
    for relative, text in emit(load_spec(spec)).items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return _imported(out / "agent.py")


def example_agent(name: str) -> ModuleType:
    """An example's bundle as ``codegen build`` writes it: its golden copy under snapshots/,
    which tests/emitters/test_snapshots.py keeps byte-identical to the build (no emit here)."""
    return _imported(SNAPSHOTS / name / "agent.py")


def _imported(agent_py: Path) -> ModuleType:
    module_name = f"inprocess_agent_{next(_loaded)}"
    found = importlib.util.spec_from_file_location(module_name, agent_py)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    # No __pycache__ beside a golden bundle: snapshots/ holds exactly what `codegen build` writes.
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        found.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def serve_app(
    agent: ModuleType, workdir: Path, monkeypatch: pytest.MonkeyPatch, host_module: str
) -> tuple[Starlette, str]:
    """``agent.py serve`` run in ``workdir`` up to the point it would listen: the app and the
    banner it would print. ``host_module`` is the host that calls ``run_server``
    (``managed`` or ``channel``)."""
    kept: dict[str, Any] = {}

    def keep(app: Starlette, host: str, port: int, banner: str) -> int:
        kept.update(app=app, banner=banner)
        return 0

    monkeypatch.setattr(f"specwire.runtime.hosts.{host_module}.run_server", keep)
    # The host closes its store pool when `serve` returns; here `serve` returns before the app
    # answers, so the pool lives on until `stores_kept_open` closes it.
    monkeypatch.setattr(f"specwire.runtime.hosts.{host_module}.host_resources", _lasting_resources)
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(workdir):
        assert agent.main(["serve", "--host", "127.0.0.1", "--port", "0"]) == 0
    return kept["app"], kept["banner"]


_open_pools: list[Any] = []


@contextlib.contextmanager
def _lasting_resources(**_tuning: Any) -> Iterator[Any]:
    from specwire.runtime.facts.pool import FactStorePool
    from specwire.runtime.wiring import HostResources

    pool = FactStorePool(max_open=64, idle_s=300.0)
    _open_pools.append(pool)
    yield HostResources(fact_stores=pool)


@contextlib.contextmanager
def stores_kept_open() -> Iterator[None]:
    """The app's turns share the host's store pool; it is closed on the way out, as the host
    closes it when its server stops."""
    try:
        yield
    finally:
        while _open_pools:
            _open_pools.pop().close()


def files_text(root: Path) -> str:
    """Every file under ``root`` as text: what a refused request must not have changed."""
    if not root.exists():
        return ""
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    )


def ask_as(http: Any, key: str, model: str, user: str | None, session: str, text: str) -> str:
    """One managed chat turn through a test client: the tenant ``key``, the request's ``user``
    (None: an anonymous request) and ``X-Session-Id``; the answer's text (status 200 asserted)."""
    body: dict[str, object] = {"model": model, "messages": [{"role": "user", "content": text}]}
    if user is not None:
        body["user"] = user
    answer = http.post(
        "/v1/chat/completions",
        headers={"authorization": f"Bearer {key}", "X-Session-Id": session},
        json=body,
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["choices"][0]["message"]["content"])

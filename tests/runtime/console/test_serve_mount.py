"""The console on ``agent.py serve`` (``/console/``): off by default, on with
``SPECWIRE_CONSOLE=1``, the same login, links under the mount, every other path the bundle's."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from specwire.runtime.core.errors import ServeConfigError
from specwire.runtime.hosts.http.console_mount import with_console
from tests.runtime.console.console_client import BASE, TOKEN
from tests.runtime.console.demo_memory import SPEC, build


async def _health(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


BUNDLE_APP = Starlette(routes=[Route("/healthz", _health)])


def test_off_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECWIRE_CONSOLE", raising=False)
    app, close = with_console(BUNDLE_APP, SPEC, tmp_path, lambda line: None)
    assert app is BUNDLE_APP
    close()


def test_mounted_with_the_same_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = build(tmp_path)
    monkeypatch.setenv("SPECWIRE_CONSOLE", "1")
    monkeypatch.setenv("SPECWIRE_CONSOLE_TOKEN", TOKEN)
    lines: list[str] = []
    app, close = with_console(BUNDLE_APP, SPEC, tmp_path, lines.append)
    try:
        browser = TestClient(app, base_url=BASE, follow_redirects=False)
        assert browser.get("/healthz").text == "ok"
        assert browser.get("/console/").headers["location"] == "/console/login"
        wrong = browser.post("/console/login", data={"token": "x" * 20}, headers={"origin": BASE})
        assert wrong.headers["location"] == "/console/login?failed=1"
        login = browser.post("/console/login", data={"token": TOKEN}, headers={"origin": BASE})
        assert "Path=/console" in login.headers["set-cookie"]
        page = browser.get("/console/")
        assert demo.deploy_fact in page.text
        assert f'href="/console/facts/{demo.deploy_fact}"' in page.text
        assert 'href="/console/static/console.css"' in page.text
        assert lines == []  # a configured token is never printed
    finally:
        close()


def test_a_managed_bundle_names_its_tenant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECWIRE_CONSOLE", "1")
    monkeypatch.delenv("SPECWIRE_CONSOLE_TENANT", raising=False)
    with pytest.raises(ServeConfigError, match="SPECWIRE_CONSOLE_TENANT"):
        with_console(BUNDLE_APP, SPEC, tmp_path, lambda line: None, tenants=["acme"])
    monkeypatch.setenv("SPECWIRE_CONSOLE_TENANT", "globex")
    with pytest.raises(ServeConfigError, match="acme"):
        with_console(BUNDLE_APP, SPEC, tmp_path, lambda line: None, tenants=["acme"])


def test_a_bundle_with_its_facts_elsewhere_does_not_mount_the_file_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mounted console reads the file store under the bundle's directory. A bundle whose
    facts are in PostgreSQL (a file store left there by ``codegen memory migrate``) showed that
    stale copy, and its Erase redacted the copy and said "clean" while the database kept the
    subject: serve refuses the console and says which command opens the real one."""
    build(tmp_path)
    monkeypatch.setenv("SPECWIRE_CONSOLE", "1")
    monkeypatch.setenv("SPECWIRE_CONSOLE_TOKEN", TOKEN)
    with pytest.raises(ServeConfigError, match="codegen memory console --backend postgres"):
        with_console(BUNDLE_APP, SPEC, tmp_path, lambda line: None, facts_backend="postgres")
    app, close = with_console(BUNDLE_APP, SPEC, tmp_path, lambda line: None, facts_backend="file")
    close()
    assert app is not BUNDLE_APP

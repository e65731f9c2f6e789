"""A logged-in TestClient on the console over a demo memory (tests' helper)."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from specwire.runtime.console.app import console_app
from specwire.runtime.console.auth import ConsoleAuth
from specwire.runtime.console.data import BackendOptions, ConsoleData
from specwire.runtime.owner.selection import select

TOKEN = "test-owner-token-0123456789"
BASE = "http://127.0.0.1:8765"


def console_data(root: Path, tenant: str | None = None) -> ConsoleData:
    return ConsoleData(select(root, None, tenant, None), BackendOptions(tenant=tenant))


def client(data: ConsoleData) -> TestClient:
    return TestClient(console_app(data, ConsoleAuth(TOKEN)), base_url=BASE, follow_redirects=False)


def logged_in(data: ConsoleData) -> TestClient:
    browser = client(data)
    answer = browser.post("/login", data={"token": TOKEN}, headers={"origin": BASE})
    assert answer.status_code == 303, answer.text
    return browser


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "no CSRF field in the page"
    return found.group(1)

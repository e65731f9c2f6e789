"""Listeners the shell tests open on the host: a loopback port and a Unix socket outside the
workspace, each counting the connections it accepted (a sealed shell must leave both at 0)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.shell import servers
from tests.runtime.shell.servers import CountingListener


@pytest.fixture
def tcp_listener() -> Iterator[tuple[CountingListener, int]]:
    with servers.tcp_listener() as running:
        yield running


@pytest.fixture
def unix_listener() -> Iterator[tuple[CountingListener, Path]]:
    with servers.unix_listener() as running:
        yield running

"""Issue 23 item 3: ``codegen memory mcp`` driven by the official MCP client (``ClientSession``).

A managed bundle serves two tenants; Alice of tenant acme tells it a fact (the agent remembers
it) and sets her focus. Over stdio and over streamable HTTP the MCP client recalls it as Alice of
acme; as Bob of acme, or as Alice of globex, it is not there; without ``--allow-writes`` no tool
writes. ``--user`` serves that person's focus (continuity follows the request's user).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import openai
import pytest
from serving_support import build_bundle, clean_env, served

pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

pytestmark = pytest.mark.e2e

KEY_ACME = "sk-mcp-acme-0123456789abcdef0123"
KEY_GLOBEX = "sk-mcp-globex-0123456789abcdef01"
FACT = "my locker code is 4417"
FOCUS = "renew alice's locker lease"
SPEC = """\
name: mcp-concierge
target: managed
agent:
  model: scripted
  instructions: You help the guests.
tenants:
  - id: acme
  - id: globex
memory:
  autoRecall: false
"""


@dataclass(frozen=True)
class Agent:
    bundle: Path
    workdir: Path


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    base = tmp_path_factory.mktemp("mcp-concierge")
    spec = base / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    bundle = build_bundle(spec, base / "out")
    work = base / "work"
    env = clean_env(SPECWIRE_TENANT_KEY_ACME=KEY_ACME, SPECWIRE_TENANT_KEY_GLOBEX=KEY_GLOBEX)
    with served(bundle, work, env) as server:
        for key, user in ((KEY_ACME, "alice"), (KEY_GLOBEX, "carol")):
            client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
            told = client.chat.completions.create(
                model="mcp-concierge",
                messages=[{"role": "user", "content": f"remember: {FACT}"}],
                user=user,
            )
            assert "remembered" in (told.choices[0].message.content or "")
        # Alice's working memory (continuity follows the request's user on managed).
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY_ACME, max_retries=0)
        focused = client.chat.completions.create(
            model="mcp-concierge",
            messages=[{"role": "user", "content": f"focus: {FOCUS}"}],
            user="alice",
            extra_headers={"X-Session-Id": "alice-desk"},
        )
        assert "focus updated" in (focused.choices[0].message.content or "")
    return Agent(bundle, work)


def mcp_argv(agent: Agent, *options: str) -> list[str]:
    return [
        "-m",
        "specwire.runtime.owner",
        "--root",
        str(agent.workdir),
        *options[:2],
        "mcp",
        "--bundle",
        str(agent.bundle),
        *options[2:],
    ]


@asynccontextmanager
async def over_stdio(agent: Agent, *options: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=mcp_argv(agent, *options),
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def http_server(agent: Agent, *options: str) -> Iterator[tuple[str, str]]:
    """``mcp --transport http --port 0``: its URL and printed token."""
    process = subprocess.Popen(
        [sys.executable, *mcp_argv(agent, *options, "--transport", "http", "--port", "0")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    assert process.stderr is not None
    try:
        token = url = ""
        while not url:
            line = process.stderr.readline()
            assert line, f"the server stopped: {process.wait()}"
            if "bearer token" in line:
                token = line.rsplit(" ", 1)[1].strip()
            if "serving " in line:
                url = line.rsplit(" ", 1)[1].strip()
        yield url, token
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def over_http(url: str, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def recall(session: ClientSession) -> str:
    result = await session.call_tool("Recall", {"query": "locker code"})
    return "".join(getattr(block, "text", "") for block in result.content)


def test_stdio_recalls_alices_fact_and_nobody_elses(agent: Agent) -> None:
    async def scenario() -> None:
        async with over_stdio(agent, "--tenant", "acme", "--user", "alice") as alice:
            assert "4417" in await recall(alice)
        async with over_stdio(agent, "--tenant", "acme", "--user", "bob") as bob:
            assert "4417" not in await recall(bob)
        # Carol of globex told the same words; Alice's id in globex sees none of them.
        async with over_stdio(agent, "--tenant", "globex", "--user", "alice") as elsewhere:
            assert "4417" not in await recall(elsewhere)
        async with over_stdio(agent, "--tenant", "globex", "--user", "carol") as carol:
            assert "4417" in await recall(carol)

    anyio.run(scenario)


async def focus(session: ClientSession) -> str:
    result = await session.call_tool("FocusRead", {})
    return "".join(getattr(block, "text", "") for block in result.content)


def test_user_serves_that_persons_focus_and_nobody_elses(agent: Agent) -> None:
    async def scenario() -> None:
        async with over_stdio(agent, "--tenant", "acme", "--user", "alice") as alice:
            assert "locker lease" in await focus(alice)
        async with over_stdio(agent, "--tenant", "acme", "--user", "bob") as bob:
            assert "locker lease" not in await focus(bob)
        # Her session's key names an anonymous session, not her.
        async with over_stdio(agent, "--tenant", "acme", "--conversation", "alice-desk") as desk:
            assert "locker lease" not in await focus(desk)

    anyio.run(scenario)


def test_stdio_is_read_only_without_allow_writes(agent: Agent) -> None:
    async def scenario() -> None:
        async with over_stdio(agent, "--tenant", "acme", "--user", "dave") as reader:
            names = {tool.name for tool in (await reader.list_tools()).tools}
            assert "Recall" in names and "Remember" not in names and "MemoryForget" not in names
            refused = await reader.call_tool("Remember", {"text": "dave likes tea"})
            assert refused.is_error
        async with over_stdio(agent, "--tenant", "acme", "--user", "dave") as reader:
            assert "dave likes tea" not in await recall_text(reader, "tea")
        options = ("--tenant", "acme", "--user", "dave", "--allow-writes")
        async with over_stdio(agent, *options) as writer:
            names = {tool.name for tool in (await writer.list_tools()).tools}
            assert "Remember" in names
            wrote = await writer.call_tool("Remember", {"text": "dave likes tea"})
            assert not wrote.is_error, wrote.content
        async with over_stdio(agent, "--tenant", "acme", "--user", "dave") as reader:
            assert "dave likes tea" in await recall_text(reader, "tea")

    anyio.run(scenario)


async def recall_text(session: ClientSession, query: str) -> str:
    result = await session.call_tool("Recall", {"query": query})
    return "".join(getattr(block, "text", "") for block in result.content)


def test_http_needs_the_token_and_recalls_alices_fact(agent: Agent) -> None:
    with http_server(agent, "--tenant", "acme", "--user", "alice") as (url, token):
        assert url.startswith("http://127.0.0.1:") and len(token) >= 32

        async def scenario() -> None:
            async with over_http(url, token) as alice:
                assert "4417" in await recall(alice)
                names = {tool.name for tool in (await alice.list_tools()).tools}
                assert "Remember" not in names

        anyio.run(scenario)
        import httpx

        refused = httpx.post(url, json={}, headers={"Authorization": "Bearer wrong"})
        assert refused.status_code == 401
        assert httpx.post(url, json={}).status_code == 401

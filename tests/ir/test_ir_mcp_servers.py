"""``mcp_servers``: one located row per rule, and what a valid block resolves to."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.lowering import fragment_version
from specwire.ir.model import IrCli, IrCrew, IrResearch, SecretRef
from specwire.runtime.core.fragment import FRAGMENT_VERSION

HEAD = (
    "name: s\ntarget: cli\nagent: {model: scripted, instructions: i}\nmcp_servers:\n"  # lines 1-4
)


def _issues(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    return [line.removeprefix("spec.yaml:") for line in str(caught.value).splitlines()]


BAD: list[tuple[str, str, str]] = [
    (
        "server-name",
        "  Files: {transport: stdio, command: npx}\n",
        '5:3: mcp_servers.Files: "Files" is not a server name',
    ),
    (
        "no-transport",
        "  files: {command: npx}\n",
        '5:3: mcp_servers: server "files" needs "transport": stdio (a command) or http',
    ),
    (
        "unknown-transport",
        "  files: {transport: sse, url: 'http://h/x'}\n",
        '5:3: mcp_servers: server "files" needs "transport": stdio (a command) or http',
    ),
    (
        "stdio-without-command",
        "  files: {transport: stdio}\n",
        '5:10: mcp_servers.files.stdio: missing required key "command"',
    ),
    (
        "literal-secret-in-env",
        "  files: {transport: stdio, command: npx, env: {API_TOKEN: abc123}}\n",
        "5:10: mcp_servers.files.stdio.env: API_TOKEN: names a secret, so its value must be a "
        "secret reference",
    ),
    (
        "path-in-env",
        "  files: {transport: stdio, command: npx, env: {PATH: /opt/bin}}\n",
        '5:10: mcp_servers.files.stdio.env: "PATH" is the host\'s own',
    ),
    (
        "malformed-ref",
        "  files: {transport: stdio, command: npx, env: {MODE: $lower}}\n",
        '5:10: mcp_servers.files.stdio.env: MODE: malformed secret reference "$lower"',
    ),
    (
        "literal-authorization-header",
        "  web: {transport: http, url: 'http://h/mcp', headers: {Authorization: Bearer x}}\n",
        "5:8: mcp_servers.web.http.headers: Authorization: names a secret",
    ),
    (
        "url-with-credentials",
        "  web: {transport: http, url: 'https://user:pw@h/mcp'}\n",
        "5:8: mcp_servers.web.http.url: must be an http:// or https:// URL without a user",
    ),
    (
        "sandbox-not-a-boolean",
        "  files: {transport: stdio, command: npx, sandbox: 'no'}\n",
        "5:10: mcp_servers.files.stdio.sandbox: must be true (the default: the server runs in the "
        "bash tool's sandbox",
    ),
    (
        "network-unknown",
        "  files: {transport: stdio, command: npx, network: all}\n",
        "5:10: mcp_servers.files.stdio.network: expected one of none, outbound",
    ),
    (
        "network-without-sandbox",
        "  files: {transport: stdio, command: npx, sandbox: false, network: none}\n",
        "5:10: mcp_servers.files.stdio.network: applies to a server in the sandbox only",
    ),
    (
        "http-with-sandbox",
        "  web: {transport: http, url: 'http://h/mcp', sandbox: false}\n",
        '5:8: mcp_servers.web.http.sandbox: unknown key "sandbox"',
    ),
    (
        "http-with-command",
        "  web: {transport: http, url: 'http://h/mcp', command: npx}\n",
        '5:8: mcp_servers.web.http.command: unknown key "command"',
    ),
]


@pytest.mark.parametrize(("text", "expected"), [row[1:] for row in BAD], ids=[r[0] for r in BAD])
def test_a_bad_entry_is_a_located_error(text: str, expected: str) -> None:
    issues = _issues(HEAD + text)
    assert len(issues) == 1, issues
    assert issues[0].startswith(expected), issues[0]


def test_a_valid_block_resolves_sorted_with_its_references() -> None:
    spec = load_spec_text(
        HEAD
        + "  web: {transport: http, url: 'http://127.0.0.1:8/mcp', optional: true,"
        + " headers: {Authorization: $WEB_AUTH, X-Team: blue}}\n"
        + "  files: {transport: stdio, command: npx, args: [-y, srv, .],"
        + " env: {MODE: plain, API_KEY: $FS_KEY}}\n",
        "spec.yaml",
    )
    assert isinstance(spec, IrCli)
    files, web = spec.mcp_servers
    assert (files.name, files.transport, files.command, files.args) == (
        "files",
        "stdio",
        "npx",
        ("-y", "srv", "."),
    )
    assert files.env == (("API_KEY", SecretRef(env="FS_KEY")), ("MODE", "plain"))
    assert files.optional is False
    assert (web.name, web.url, web.optional) == ("web", "http://127.0.0.1:8/mcp", True)
    assert web.headers == (("Authorization", SecretRef(env="WEB_AUTH")), ("X-Team", "blue"))


def test_a_spec_without_the_key_has_no_servers() -> None:
    spec = load_spec_text(HEAD.removesuffix("mcp_servers:\n"), "spec.yaml")
    assert isinstance(spec, IrCli) and spec.mcp_servers == ()


def test_a_stdio_server_is_confined_unless_the_spec_says_sandbox_false() -> None:
    spec = load_spec_text(
        HEAD
        + "  files: {transport: stdio, command: npx}\n"
        + "  loose: {transport: stdio, command: npx, sandbox: false}\n"
        + "  web: {transport: stdio, command: npx, network: outbound}\n",
        "spec.yaml",
    )
    assert isinstance(spec, IrCli)
    files, loose, web = spec.mcp_servers
    assert (files.name, files.sandbox, files.network) == ("files", True, "none")
    assert (loose.name, loose.sandbox) == ("loose", False)
    assert (web.name, web.sandbox, web.network) == ("web", True, "outbound")


CREW = "name: s\ntarget: crew\nmodel: scripted\nentry: r\nroles: {r: {instructions: i}}\n"
RESEARCH = (
    "name: s\ntarget: research\nagent: {model: scripted, instructions: i}\n"
    "goal: g\nbranchingFactor: 2\nmaxDurationMs: 60000\n"
)
SERVERS = (
    "mcp_servers:\n"
    "  web: {transport: http, url: 'http://127.0.0.1:8/mcp', optional: true}\n"
    "  files: {transport: stdio, command: npx, env: {API_KEY: $FS_KEY}}\n"
)


@pytest.mark.parametrize("head", [CREW, RESEARCH], ids=["crew", "research"])
def test_crew_and_research_take_servers_and_need_fragment_version_7(head: str) -> None:
    spec = load_spec_text(head + SERVERS + "continuity: {}\n", "spec.yaml")
    assert isinstance(spec, IrCrew | IrResearch)
    assert [server.name for server in spec.mcp_servers] == ["files", "web"]
    assert spec.mcp_servers[0].env == (("API_KEY", SecretRef(env="FS_KEY")),)
    # Their hosts take ``mcp_servers=`` from version 7: an older runtime refuses in one line.
    assert fragment_version(spec) == FRAGMENT_VERSION
    without = load_spec_text(head + "continuity: {}\n", "spec.yaml")
    assert isinstance(without, IrCrew | IrResearch) and without.mcp_servers == ()
    assert fragment_version(without) < FRAGMENT_VERSION


@pytest.mark.parametrize("head", [CREW, RESEARCH], ids=["crew", "research"])
def test_a_bad_server_on_crew_or_research_is_located(head: str) -> None:
    issues = _issues(head + "mcp_servers:\n  Files: {transport: stdio, command: npx}\n")
    assert len(issues) == 1, issues
    assert issues[0].startswith(f'{head.count(chr(10)) + 2}:3: mcp_servers.Files: "Files" is not')

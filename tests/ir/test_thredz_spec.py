"""``thredz:``: CrewHaus's validation and lowering — located errors for each rule, the synthesized
MCP server (the spec's own wins), the fragment's ``thredz`` block, and bytes kept without it."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.lowering import lower
from specwire.ir.model import IrChannelSpec, IrCli, IrManaged, IrMcpServer, SecretRef
from specwire.ir.thredz_source import agent_handle

CLI = "name: Team Helper\ntarget: cli\nagent: {model: scripted, instructions: i}\n"  # lines 1-3
CHANNEL = (
    "name: s\ntarget: channel\nagent: {model: scripted, instructions: i}\n"
    "channels: {slack: {botToken: $B, signingSecret: $S}}\nrouting: {sessionKey: thread}\n"
)  # lines 1-5
MANAGED = (
    "name: s\ntarget: managed\nagent: {model: scripted, instructions: i}\n"
    "tenants: [{id: a}, {id: b}]\n"
)  # lines 1-4
RESEARCH = (
    "name: s\ntarget: research\nagent: {model: scripted, instructions: i}\n"
    "goal: g\nbranchingFactor: 2\nmaxDurationMs: 60000\n"
)  # lines 1-6
CREW = "name: s\ntarget: crew\nmodel: scripted\nentry: r\nroles: {r: {instructions: i}}\n"  # 1-5

BAD = [
    (
        "thredz-backend-without-block",
        CLI + "memory:\n  backend: thredz\n",
        [
            "5:12: memory.backend: the thredz backend needs the top-level `thredz:` block "
            "(`thredz: true` reads the key from $THREDZ_API_KEY)"
        ],
    ),
    (
        "thredz-with-file-backend",
        CLI + "memory:\n  backend: file\nthredz: true\n",
        [
            "5:12: memory.backend: `thredz:` makes Thredz the memory backend, but the backend is "
            '"file": remove `backend` (or `thredz`)'
        ],
    ),
    (
        "thredz-literal-key",
        CLI + "thredz: tz_live_0123\n",
        [
            "4:9: thredz.apiKey: the api key must be a secret reference ($UPPER_SNAKE, read "
            "from the environment at start): a literal would be baked into the bundle"
        ],
    ),
    (
        "thredz-false",
        CLI + "thredz: false\n",
        [
            "4:9: thredz: expected true, an api key reference or a mapping (got false): remove "
            "`thredz`"
        ],
    ),
    (
        "thredz-bad-visibility",
        CLI + "thredz: {api_key: $TZ, visibility: public}\n",
        ['4:36: thredz.visibility: expected one of private, shared (got "public")'],
    ),
    (
        "thredz-bad-handle",
        CLI + "thredz: {api_key: $TZ, agents: Helper}\n",
        [
            '4:32: thredz.agents: "Helper" is not an agent handle: lower-case letters, digits '
            "and '-', starting with a letter, 3 to 32 long"
        ],
    ),
    (
        "thredz-base-url-with-credentials",
        CLI + "thredz: {api_key: $TZ, base_url: 'https://u:p@thredz.example'}\n",
        ["4:34: thredz.base_url: must be an http:// or https:// URL without a user or password"],
    ),
    (
        "thredz-backend-on-channel-without-block",
        CHANNEL + "memory:\n  backend: thredz\n",
        [
            "7:12: memory.backend: the thredz backend needs the top-level `thredz:` block "
            "(`thredz: true` reads the key from $THREDZ_API_KEY)"
        ],
    ),
    (
        "thredz-goals-from-a-per-conversation-list",
        CHANNEL + "thredz: {api_key: $TZ, goals: true}\n",
        [
            "6:31: thredz.goals: a channel's goals are per conversation (continuity.scope "
            "session), and mirroring them to the one Thredz space would show each "
            "conversation's goals to every other: set `continuity: {scope: spec}` to keep one "
            "goal list for the bot, or remove `goals`"
        ],
    ),
    (
        "thredz-goals-from-per-person-lists",
        MANAGED.replace(", {id: b}", "") + "thredz: {api_key: $TZ, goals: true}\n",
        [
            "5:31: thredz.goals: a managed service's goals are per person (the request's user, "
            "else its session), and mirroring them to the one Thredz space would show each "
            "person's goals to every other: set `continuity: {scope: spec}` to keep one goal "
            "list for the tenant, or remove `goals`"
        ],
    ),
    (
        "thredz-on-managed-with-two-tenants",
        MANAGED + "thredz: true\n",
        [
            "5:1: thredz: one Thredz account serves one tenant, and this spec has 2: every "
            "tenant's wiki and goals would reach the same Thredz space (split the spec per "
            "tenant, or remove `thredz`)"
        ],
    ),
    (
        "bad-thredz-block-on-research",
        RESEARCH + "thredz: {api_key: plain}\n",
        [
            "7:19: thredz.api_key: the api key must be a secret reference ($UPPER_SNAKE, read "
            "from the environment at start): a literal would be baked into the bundle"
        ],
    ),
    (
        "unconfined-server-on-managed-with-two-tenants",
        MANAGED + "mcp_servers:\n  fs:\n    transport: stdio\n    command: x\n    sandbox: false\n",
        [
            "7:5: mcp_servers.fs.sandbox: a server run unconfined could read and write every "
            "tenant's root, and this spec has 2 tenants: keep it in the sandbox (each tenant "
            "gets its own instance, confined to its workspace), or serve one tenant per spec"
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [row[1:] for row in BAD], ids=[r[0] for r in BAD])
def test_a_bad_thredz_spec_is_a_located_error(text: str, expected: list[str]) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert [str(issue) for issue in caught.value.issues] == [f"spec.yaml:{e}" for e in expected]


def _cli(text: str) -> IrCli:
    spec = load_spec_text(text, "spec.yaml")
    assert isinstance(spec, IrCli)
    return spec


def test_thredz_true_synthesizes_the_server_and_turns_memory_on() -> None:
    spec = _cli(CLI + "continuity: {}\nthredz: true\n")
    assert spec.mcp_servers == (
        IrMcpServer(
            name="thredz",
            transport="stdio",
            command="npx",
            args=("-y", "thredz-mcp@0.2.0"),
            env=(
                ("THREDZ_API_KEY", SecretRef(env="THREDZ_API_KEY")),
                ("THREDZ_DEFAULT_VISIBILITY", "private"),
            ),
            network="outbound",  # npx downloads it; it calls the Thredz API
        ),
    )
    fragment = lower(spec).to_data()
    assert fragment["version"] == 6 and fragment["memory"] == {}
    # Goals follow continuity's plans unless the block says otherwise.
    assert fragment["thredz"] == {"server": "thredz", "visibility": "private", "goals": True}


def test_the_block_lowers_every_field() -> None:
    spec = _cli(
        CLI
        + "memory:\n  backend: thredz\n  recallK: 3\n"
        + "thredz: {api_key: $TZ_KEY, base_url: 'https://api.thredz.example', "
        + "visibility: shared, goals: false, agents: true}\n"
    )
    [server] = spec.mcp_servers
    assert server.env == (
        ("THREDZ_API_BASE", "https://api.thredz.example"),
        ("THREDZ_API_KEY", SecretRef(env="TZ_KEY")),
        ("THREDZ_DEFAULT_VISIBILITY", "shared"),
    )
    fragment = lower(spec).to_data()
    assert fragment["memory"] == {"recall_k": 3}  # no facts backend: Thredz is the block
    assert fragment["thredz"] == {
        "server": "thredz",
        "visibility": "shared",
        "goals": False,
        "agent_name": "team-helper",
    }


def test_a_declared_thredz_server_wins() -> None:
    spec = _cli(
        CLI
        + "thredz: true\nmcp_servers:\n  thredz: {transport: http, url: 'http://127.0.0.1:9/mcp'}\n"
    )
    [server] = spec.mcp_servers
    assert (server.transport, server.url) == ("http", "http://127.0.0.1:9/mcp")


def test_a_spec_without_thredz_has_no_block() -> None:
    fragment = lower(_cli(CLI + "memory: {}\n")).to_data()
    assert "thredz" not in fragment and fragment["version"] == 3


@pytest.mark.parametrize(
    ("agents", "name", "handle"),
    [
        (True, "Team Helper", "team-helper"),
        (True, "42", "agent-42"),
        (True, "x", "x-agent"),
        ("my-bot", "whatever", "my-bot"),
        (False, "x", None),
        (None, "x", None),
    ],
)
def test_agent_handles(agents: bool | str | None, name: str, handle: str | None) -> None:
    assert agent_handle(agents, name) == handle


def test_channel_and_managed_carry_the_servers_and_the_block() -> None:
    servers = "mcp_servers:\n  fs: {transport: stdio, command: x}\n"
    channel = load_spec_text(CHANNEL + "continuity: {}\nthredz: true\n" + servers, "s.yaml")
    assert isinstance(channel, IrChannelSpec)
    assert [server.name for server in channel.mcp_servers] == ["fs", "thredz"]
    # A channel's goals are per conversation: not mirrored unless the list is spec-wide.
    assert lower(channel).to_data()["thredz"]["goals"] is False
    spec_wide = CHANNEL + "continuity: {scope: spec}\nthredz: true\n"
    assert lower(load_spec_text(spec_wide, "s.yaml")).to_data()["thredz"]["goals"] is True
    one_tenant = MANAGED.replace(", {id: b}", "") + "continuity: {}\nthredz: true\n" + servers
    managed = load_spec_text(one_tenant, "s.yaml")
    assert isinstance(managed, IrManaged)
    assert [server.name for server in managed.mcp_servers] == ["fs", "thredz"]
    # A managed service's goals are per person (issue 21): mirrored only from a tenant-wide list.
    assert lower(managed).to_data()["thredz"]["goals"] is False
    tenant_wide = one_tenant.replace("continuity: {}", "continuity: {scope: spec}")
    assert lower(load_spec_text(tenant_wide, "s.yaml")).to_data()["thredz"] == {
        "server": "thredz",
        "visibility": "private",
        "goals": True,
    }


def test_a_per_turn_bundle_with_servers_needs_the_runtime_that_starts_them() -> None:
    servers = "memory: {}\nmcp_servers:\n  fs: {transport: stdio, command: x}\n"
    assert lower(load_spec_text(CHANNEL + servers, "s.yaml")).to_data()["version"] == 7
    assert lower(load_spec_text(CHANNEL + "memory: {}\n", "s.yaml")).to_data()["version"] == 4


def test_learning_into_thredz_needs_the_runtime_that_wires_it() -> None:
    """Without a wiki of its own, learning goes to Thredz's wiki: version 7 (a version-6 runtime
    would learn into a local wiki the spec never asked for); with a wiki, version 6 reads it."""
    learning = "learning: {domain: billing}\n"
    thredz = "thredz: true\nmemory: {}\n"
    assert lower(load_spec_text(CLI + thredz + learning, "s.yaml")).version == 7
    wiki = "thredz: true\nmemory: {wiki: {enabled: true}}\n"
    assert lower(load_spec_text(CLI + wiki + learning, "s.yaml")).version == 6


@pytest.mark.parametrize(("head", "target"), [(RESEARCH, "research"), (CREW, "crew")])
def test_thredz_on_research_and_crew_compiles_with_a_located_warning(
    head: str, target: str
) -> None:
    line = head.count("\n") + 2
    spec = load_spec_text(head + "continuity: {}\nthredz: true\n", "spec.yaml")
    assert spec.notes == (
        f"spec.yaml:{line}:1: thredz: warning: thredz is accepted but not wired on the {target} "
        "target: memory stays local and Thredz's server is not started (cli, channel and "
        "managed wire it)",
    )
    # Nothing of Thredz reaches the bundle: no server, no backend, the fragment as without it.
    assert spec.mcp_servers == () and spec.memory is None
    without = load_spec_text(head + "continuity: {}\n", "spec.yaml")
    assert without.notes == ()
    assert lower(spec).to_data() == lower(without).to_data()


def test_the_thredz_backend_with_the_block_on_crew_is_ignored_too() -> None:
    spec = load_spec_text(CREW + "memory: {backend: thredz}\nthredz: true\n", "spec.yaml")
    assert spec.memory is not None and spec.memory.backend is None and len(spec.notes) == 1
    with pytest.raises(SpecError) as caught:  # without the block it is still refused
        load_spec_text(CREW + "memory: {backend: thredz}\n", "spec.yaml")
    assert "wired on the cli, channel and managed targets only" in str(caught.value)


@pytest.mark.parametrize(("head", "target"), [(RESEARCH, "research"), (CREW, "crew")])
def test_learning_into_thredz_on_research_and_crew_compiles_with_a_warning(
    head: str, target: str
) -> None:
    """CrewHaus counts Thredz as learning's home on every shape; research and crew do not wire
    Thredz, so the block is accepted with a located warning and nothing of it is built."""
    line = head.count("\n") + 1
    spec = load_spec_text(head + "learning: {domain: d}\nthredz: true\n", "spec.yaml")
    assert spec.learning is None
    assert spec.notes[-1] == (
        f"spec.yaml:{line}:1: learning: warning: learning is accepted but not wired on the "
        f"{target} target: its only home is Thredz, which this target does not wire (add "
        "`memory: {wiki: {}}` to learn into the agent's own wiki)"
    )
    without = load_spec_text(head, "spec.yaml")
    assert lower(spec).to_data() == lower(without).to_data()
    # With a wiki of its own the learning is built, and only thredz warns.
    wiki = load_spec_text(
        head + "memory: {wiki: {}}\nlearning: {domain: d}\nthredz: true\n", "spec.yaml"
    )
    assert wiki.learning is not None and len(wiki.notes) == 1

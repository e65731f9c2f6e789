"""``thredz:``: the Thredz memory service (CrewHaus's spelling), reached through its MCP server.

``thredz: true`` is ``{api_key: $THREDZ_API_KEY}``; a string is the api key; the block is
``{api_key (a $REF), base_url?, visibility? private|shared (default private), goals? (default:
on when continuity plans are), agents? bool|handle}``. Lowering synthesizes the server entry
``mcp_servers.thredz`` (``npx -y thredz-mcp@0.2.0``, the key as a secret reference) unless the
spec declares its own, and makes Thredz the memory's backend. Wired on the cli, channel and
managed targets; research and crew accept the block (CrewHaus carries it there) and ignore it
with a located warning (``unwired_thredz``): memory stays local, its server is not started.

Cross-key rules (``thredz_checks``): ``memory.backend: thredz`` needs the block; the block with
another ``memory.backend`` is a contradiction; on managed, one Thredz account for several
tenants would let each tenant's wiki and goals reach the others, so it serves one tenant only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any, Final

from pydantic import AfterValidator, WithJsonSchema

from specwire.ir.constants import SECRET_REF_RE
from specwire.ir.errors import SpecIssue
from specwire.ir.fields import fail
from specwire.ir.positions import Locator
from specwire.ir.values import got, quote

THREDZ_BACKEND: Final = "thredz"
THREDZ_TARGETS: Final = ("cli", "channel", "managed")
# Targets that accept ``thredz:`` and do not wire it (CrewHaus 0.4's accepted-but-unwired).
THREDZ_UNWIRED_TARGETS: Final = ("research", "crew")
THREDZ_SERVER: Final = "thredz"
THREDZ_PACKAGE: Final = "thredz-mcp@0.2.0"
THREDZ_DEFAULT_KEY: Final = "$THREDZ_API_KEY"
THREDZ_HANDLE_RE: Final = re.compile(r"[a-z][a-z0-9-]{2,31}")
_URL_RE: Final = re.compile(r"https?://[^\s/?#@]+(?:/[^\s#]*)?")


def thredz_shorthand(value: Any) -> Any:
    """``true`` and a bare key string as the block they stand for."""
    if value is True:
        return {"apiKey": THREDZ_DEFAULT_KEY}
    if value is False:
        fail("expected true, an api key reference or a mapping (got false): remove `thredz`")
    if isinstance(value, str):
        return {"apiKey": value}
    if not isinstance(value, dict):
        fail(f"expected true, an api key reference ($THREDZ_API_KEY) or a mapping {got(value)}")
    return value


def _api_key(value: str) -> str:
    if SECRET_REF_RE.fullmatch(value) is None:
        fail(
            "the api key must be a secret reference ($UPPER_SNAKE, read from the environment "
            "at start): a literal would be baked into the bundle"
        )
    return value


def _base_url(value: str) -> str:
    if _URL_RE.fullmatch(value) is None:
        fail("must be an http:// or https:// URL without a user or password")
    return value


def _handle(value: bool | str) -> bool | str:
    if isinstance(value, str) and THREDZ_HANDLE_RE.fullmatch(value) is None:
        fail(
            f"{quote(value)} is not an agent handle: lower-case letters, digits and '-', "
            "starting with a letter, 3 to 32 long"
        )
    return value


ThredzApiKey = Annotated[
    str, AfterValidator(_api_key), WithJsonSchema({"type": "string", "pattern": r"^\$[A-Z]"})
]
ThredzBaseUrl = Annotated[
    str, AfterValidator(_base_url), WithJsonSchema({"type": "string", "pattern": "^https?://"})
]
ThredzAgents = Annotated[bool | str, AfterValidator(_handle)]


def agent_handle(agents: bool | str | None, spec_name: str) -> str | None:
    """The agent's Thredz handle: a given one, or (``agents: true``) one derived from the spec's
    name (lower-cased, other characters as '-', padded or cut to 3..32)."""
    if agents is None or agents is False:
        return None
    if isinstance(agents, str):
        return agents
    handle = re.sub(r"[^a-z0-9]+", "-", spec_name.lower()).strip("-")
    if not handle or not handle[0].isalpha():
        handle = f"agent-{handle}".rstrip("-")
    handle = handle[:32].rstrip("-")
    return handle if len(handle) >= 3 else f"{handle}-agent"[:32]


def thredz_checks(data: dict[str, Any], target: str, locator: Locator) -> Iterable[SpecIssue]:
    memory = data.get("memory")
    backend = memory.get("backend") if isinstance(memory, dict) else None
    declared = "thredz" in data
    if backend == THREDZ_BACKEND and target in THREDZ_UNWIRED_TARGETS and declared:
        pass  # accepted with the block, ignored with it (``unwired_thredz`` warns)
    elif backend == THREDZ_BACKEND and target not in THREDZ_TARGETS:
        yield locator.at_value(
            ("memory", "backend"),
            "the thredz backend is wired on the cli, channel and managed targets only",
        )
    elif backend == THREDZ_BACKEND and not declared:
        yield locator.at_value(
            ("memory", "backend"),
            "the thredz backend needs the top-level `thredz:` block (`thredz: true` reads the "
            "key from $THREDZ_API_KEY)",
        )
    elif declared and isinstance(backend, str) and backend != THREDZ_BACKEND:
        yield locator.at_value(
            ("memory", "backend"),
            f"`thredz:` makes Thredz the memory backend, but the backend is {quote(backend)}: "
            "remove `backend` (or `thredz`)",
        )
    block = data.get("thredz")
    continuity = data.get("continuity")
    scope = continuity.get("scope") if isinstance(continuity, dict) else None
    if (
        target in ("channel", "managed")
        and isinstance(block, dict)
        and block.get("goals") is True
        and scope != "spec"
    ):
        yield locator.at_value(
            ("thredz", "goals"),
            "a channel's goals are per conversation (continuity.scope session), and mirroring "
            "them to the one Thredz space would show each conversation's goals to every other: "
            "set `continuity: {scope: spec}` to keep one goal list for the bot, or remove "
            "`goals`"
            if target == "channel"
            else "a managed service's goals are per person (the request's user, else its "
            "session), and mirroring them to the one Thredz space would show each person's "
            "goals to every other: set `continuity: {scope: spec}` to keep one goal list for "
            "the tenant, or remove `goals`",
        )
    tenants = data.get("tenants")
    if declared and target == "managed" and isinstance(tenants, list) and len(tenants) > 1:
        yield locator.at_key(
            ("thredz",),
            f"one Thredz account serves one tenant, and this spec has {len(tenants)}: every "
            "tenant's wiki and goals would reach the same Thredz space (split the spec per "
            "tenant, or remove `thredz`)",
        )


def unwired_thredz(data: dict[str, Any], target: str, locator: Locator) -> list[str]:
    """The located warning for ``thredz:`` on a target that does not wire it (none elsewhere)."""
    if target not in THREDZ_UNWIRED_TARGETS or data.get("thredz") in (None, False):
        return []
    issue = locator.at_key(
        ("thredz",),
        f"warning: thredz is accepted but not wired on the {target} target: memory stays "
        "local and Thredz's server is not started (cli, channel and managed wire it)",
    )
    return [str(issue)]

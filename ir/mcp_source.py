"""``mcp_servers``: the MCP tool servers a spec names (CrewHaus's spelling and shape).

``{name: {transport: stdio, command, args?, env?, optional?, sandbox?} | {transport: http,
url, headers?, optional?}}``. A stdio server runs inside the ``bash`` tool's sandbox;
``sandbox: false`` (the literal boolean, nothing that merely reads as false) runs it unconfined;
``network: outbound`` lets a confined one reach public hosts (bash's egress proxy).
A server's name becomes part of its tools' names
(``mcp__<name>__<tool>``), so it is short, lower-case and has no ``__``. A value in ``env`` or
``headers`` whose key names a secret (a token, key, secret, password, cookie or authorization)
must be a ``$REF``: a literal would be baked into the bundle.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from specwire.ir.constants import SECRET_REF_RE
from specwire.ir.fields import NonEmptyStr, OneLineStr, fail
from specwire.ir.values import quote

MCP_SERVER_NAME_RE: Final = re.compile(r"[a-z][a-z0-9-]{0,31}")
_ENV_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_HEADER_NAME_RE: Final = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}")
_URL_RE: Final = re.compile(r"https?://[^\s/?#@]+(?:/[^\s#]*)?")
_SECRET_WORDS: Final = ("token", "key", "secret", "password", "passwd", "cookie", "auth")


def _server_name(value: str) -> str:
    if MCP_SERVER_NAME_RE.fullmatch(value) is None:
        fail(
            f"{quote(value)} is not a server name: lower-case letters, digits and '-', starting "
            "with a letter, at most 32 (it becomes part of each tool's name, mcp__<server>__<tool>)"
        )
    return value


def _names_secret(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def _value(key: str, value: str) -> None:
    if value.startswith("$") and SECRET_REF_RE.fullmatch(value) is None:
        fail(f"{key}: malformed secret reference {quote(value)}: use $UPPER_SNAKE")
    if _names_secret(key) and SECRET_REF_RE.fullmatch(value) is None:
        fail(
            f"{key}: names a secret, so its value must be a secret reference ($UPPER_SNAKE, read "
            "from the environment at start): a literal would be baked into the bundle"
        )
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        fail(f"{key}: the value must be one line without control characters")


def _env(values: dict[str, str]) -> dict[str, str]:
    for key, value in values.items():
        if _ENV_NAME_RE.fullmatch(key) is None:
            fail(f"{quote(key)} is not an environment variable name")
        if key == "PATH":
            fail("\"PATH\" is the host's own (the server gets the host's PATH)")
        _value(key, value)
    return values


def _sandbox(value: object) -> bool:
    if not isinstance(value, bool):
        fail(
            "must be true (the default: the server runs in the bash tool's sandbox, its working "
            "folder the workspace, the state folder out of reach) or false (unconfined: it can "
            "read and write everything this user can)"
        )
    return value


def unconfined_network(network: str | None, sandbox: bool | None) -> str | None:
    """``network`` is a rule of the sandbox: with ``sandbox: false`` it could not be kept."""
    if network is not None and sandbox is False:
        fail(
            "applies to a server in the sandbox only: with `sandbox: false` the server has the "
            "host's whole network (remove one of the two)"
        )
    return network


def _headers(values: dict[str, str]) -> dict[str, str]:
    for key, value in values.items():
        if _HEADER_NAME_RE.fullmatch(key) is None:
            fail(f"{quote(key)} is not an HTTP header name")
        _value(key, value)
    return values


def _url(value: str) -> str:
    if _URL_RE.fullmatch(value) is None:
        fail(
            "must be an http:// or https:// URL without a user or password (credentials go in "
            "`headers`, as a $REF)"
        )
    return value


McpServerName = Annotated[
    str,
    AfterValidator(_server_name),
    WithJsonSchema({"type": "string", "pattern": f"^{MCP_SERVER_NAME_RE.pattern}$"}),
]
McpEnv = Annotated[dict[str, str], AfterValidator(_env)]
McpHeaders = Annotated[dict[str, str], AfterValidator(_headers)]
McpUrl = Annotated[
    str, AfterValidator(_url), WithJsonSchema({"type": "string", "pattern": "^https?://"})
]
McpSandbox = Annotated[bool, BeforeValidator(_sandbox), WithJsonSchema({"type": "boolean"})]
McpNetwork = Literal["none", "outbound"]
McpArgs = list[OneLineStr]
McpCommand = NonEmptyStr
Transport = Literal["stdio", "http"]
TRANSPORT_FIELD: Final = Field(discriminator="transport")

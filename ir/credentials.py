"""Literal credentials in a spec: refused at compile time, never baked into a bundle.

A field that takes a secret (a channel setting, a model id) must name an environment variable
(`$SLACK_BOT_TOKEN`) instead of holding the secret itself. Every other string (instructions,
goals, ids) is scanned for the same token shapes: a key pasted into the instructions would end
up in the generated code just the same. Messages never repeat the secret.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from specwire.ir.constants import ROLE_MODEL_LISTS, SECRET_REF_RE
from specwire.ir.errors import Mark, SpecIssue
from specwire.ir.positions import Loc, Locator


@dataclass(frozen=True)
class Kind:
    label: str  # "a Slack bot token"
    env: str  # the variable the secret usually lives in
    pattern: re.Pattern[str]
    random: bool = False  # the match must look generated (digits, lower and upper case)


def _kind(label: str, env: str, pattern: str, *, random: bool = False) -> Kind:
    return Kind(label, env, re.compile(pattern), random)


# First match wins: the more specific shape comes first.
KINDS: Final[tuple[Kind, ...]] = (
    _kind("a private key", "PRIVATE_KEY", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    _kind("a Slack bot token", "SLACK_BOT_TOKEN", r"\bxoxb-[0-9A-Za-z-]{10,}"),
    _kind("a Slack user token", "SLACK_USER_TOKEN", r"\bxoxp-[0-9A-Za-z-]{10,}"),
    _kind("a Slack token", "SLACK_TOKEN", r"\bxox[ars]-[0-9A-Za-z-]{10,}"),
    _kind("a Slack app token", "SLACK_APP_TOKEN", r"\bxapp-[0-9A-Za-z-]{10,}"),
    _kind(
        "a Slack webhook URL",
        "SLACK_WEBHOOK_URL",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9_-]+/[A-Za-z0-9_-]+/[A-Za-z0-9_-]{8,}",
    ),
    _kind("an Anthropic API key", "ANTHROPIC_API_KEY", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _kind("an OpenAI API key", "OPENAI_API_KEY", r"\bsk-proj-[A-Za-z0-9_-]{20,}"),
    _kind("an API key", "OPENAI_API_KEY", r"\bsk-[A-Za-z0-9_-]{20,}", random=True),
    _kind("an AWS access key id", "AWS_ACCESS_KEY_ID", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    _kind("a GitHub token", "GITHUB_TOKEN", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    _kind("a GitHub token", "GITHUB_TOKEN", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
)
AWS_SECRET: Final = Kind(
    "an AWS secret access key", "AWS_SECRET_ACCESS_KEY", re.compile(r"[A-Za-z0-9/+]{40}"), True
)
# A setting whose name ends in one of these words holds a secret whatever it looks like.
_SECRET_WORDS: Final = frozenset(
    {"token", "secret", "password", "passwd", "passphrase", "credential", "credentials", "apikey"}
)
_KEY_QUALIFIERS: Final = frozenset({"api", "private", "secret", "access", "signing", "client"})
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_CAMEL_HUMP: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_ALNUM: Final = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True)
class Found:
    kind: Kind | None  # None: a setting named like a secret, whatever its shape
    text: str  # what matched, to find it in the source (never shown)


def find_credentials(data: dict[str, Any], locator: Locator, source: str) -> dict[Loc, SpecIssue]:
    """An issue for each string value that holds a literal credential, by the value's place."""
    finder = _SourceFinder(source)
    issues: dict[Loc, SpecIssue] = {}
    for loc, value in _strings(data, ()):
        role = _role(loc)
        found = _token(value)
        if found is None and role == "setting":
            found = _setting_secret(loc, value)
        if found is None:
            continue
        start = locator.value_mark(loc)
        mark = finder.find(found.text, start) if found.kind is not None else None
        message = _message(role, loc, found)
        issues[loc] = locator.at_mark(mark or start, locator.display(loc), message)
    return issues


def _strings(value: Any, loc: Loc) -> Iterator[tuple[Loc, str]]:
    if isinstance(value, str):
        yield loc, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*loc, index))


def _role(loc: Loc) -> str:
    """``setting``, ``model`` (fields that take a secret reference) or ``text``."""
    if len(loc) == 3 and loc[0] == "channels":
        return "setting"
    if loc in (("model",), ("agent", "model")) or (
        len(loc) == 3 and loc[0] == "roles" and loc[2] == "model"
    ):
        return "model"
    if len(loc) == 4 and loc[0] == "roles" and loc[2] in ROLE_MODEL_LISTS:
        return "model"
    return "text"


def _token(value: str) -> Found | None:
    if SECRET_REF_RE.fullmatch(value):
        return None
    for kind in KINDS:
        for match in kind.pattern.finditer(value):
            if not kind.random or _looks_random(match.group()):
                return Found(kind, match.group())
    return None


def _setting_secret(loc: Loc, value: str) -> Found | None:
    channel, key = str(loc[1]), str(loc[2])
    if not value.strip() or SECRET_REF_RE.fullmatch(value) or value.startswith("$"):
        return None
    aws_named = "aws" in f"{channel} {key}".lower()
    if aws_named and AWS_SECRET.pattern.fullmatch(value) and _looks_random(value):
        return Found(AWS_SECRET, value)
    words = [word.lower() for word in _WORDS.findall(key)]
    if not words:
        return None
    last = words[-1]
    if last in _SECRET_WORDS or (last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS):
        return Found(None, value)
    return None


def _looks_random(token: str) -> bool:
    """Digits and letters of both cases, as a generated key has (hyphenated prose does not)."""
    return (
        any(c.isdigit() for c in token)
        and any(c.islower() for c in token)
        and any(c.isupper() for c in token)
    )


def _message(role: str, loc: Loc, found: Found) -> str:
    what = f" ({found.kind.label})" if found.kind is not None else ""
    if role == "setting":
        env = env_name(str(loc[1]), str(loc[2]))
        return (
            f"looks like a literal credential{what}; put it in an environment variable and "
            f'write "${env}" here'
        )
    assert found.kind is not None
    env = found.kind.env
    if role == "model":
        return (
            f"looks like a literal credential{what}, not a model id; keep it in an environment "
            f'variable such as {env} and write a model id (or a "$MODEL_ID" reference) here'
        )
    return (
        f"contains what looks like a literal credential{what}, which would be baked into the "
        f"bundle; remove it and keep the secret in an environment variable such as {env}"
    )


def env_name(*parts: str) -> str:
    """``("slack", "botToken")`` → ``SLACK_BOT_TOKEN``; ``("s3", "key-id")`` → ``S3_KEY_ID``."""
    spaced = "_".join(_CAMEL_HUMP.sub("_", part) for part in parts)
    name = _NOT_ALNUM.sub("_", spaced).strip("_").upper() or "SECRET"
    return name if name[0].isalpha() else f"SECRET_{name}"


class _SourceFinder:
    """Where a matched token sits in the source, searched from its value's position (a token in
    a block of instructions is reported on its own line, not at the block's start)."""

    def __init__(self, source: str) -> None:
        self.source = source.removeprefix("\ufeff")
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0, *(m.end() for m in re.finditer("\n", self.source))]
        return self._starts

    def find(self, needle: str, start: Mark) -> Mark | None:
        first_line = needle.split("\n", 1)[0]
        if start.line > len(self.starts) or not first_line:
            return None
        offset = self.source.find(first_line, self.starts[start.line - 1] + start.col - 1)
        if offset < 0:
            return None
        line = bisect.bisect_right(self.starts, offset)
        return Mark(line, offset - self.starts[line - 1] + 1)

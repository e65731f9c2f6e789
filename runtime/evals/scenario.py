"""Scenario files: which spec to build, what the user says in each session, what should hold.

::

    scenario: returning-customer      # optional; the file's stem by default
    spec: ../support-bot.yaml         # the spec to build, relative to this file (target cli)
    samples: 1                        # optional (1..20): each sample runs in fresh stores
    sessions:                         # run one after the other, in the same stores
      - user:                         # one bundle run each: these messages, then exit
          - "remember: invoices for ACME go out in EUR"
      - user:
          - "ask about invoices: Which currency should the invoices use?"
    expect:                           # all optional
      requirements:                   # the user's own words, stated in some session
        - "invoices for ACME go out in EUR"
      pickup:                         # a later session should resume this pending step
        session: 2
        step: "Patch the exporter"
      proven:                         # plan steps that should end proven
        - "Reproduce the export bug"

Every problem is one located line, ``file:line:col: key: message`` (``ScenarioError``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.yaml_text import Located, LocatedYamlError, load_located_yaml
from specwire.runtime.evals.tokens import covers, terms

MAX_SCENARIO_BYTES = 1 << 20
MAX_SAMPLES = 20
MAX_SESSIONS = 50
MAX_MESSAGES = 200
_NAME = re.compile(r"^[\w .:-]+$")
_TOP_KEYS = ("scenario", "description", "spec", "samples", "sessions", "expect")
_EXPECT_KEYS = ("requirements", "pickup", "proven")


class ScenarioError(Exception):
    """A scenario file's problems, one located line each."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = tuple(lines)


@dataclass(frozen=True)
class Pickup:
    session: int  # 1-based; always after the first session
    step: str


@dataclass(frozen=True)
class Scenario:
    name: str
    path: Path
    spec: Path
    samples: int
    sessions: tuple[tuple[str, ...], ...]  # each session's user messages
    requirements: tuple[str, ...] = ()
    pickup: Pickup | None = None
    proven: tuple[str, ...] = ()
    spec_mark: tuple[int, int] = (1, 1)  # where the file names its spec

    def located(self, message: str) -> str:
        """A problem with the spec this scenario names, located at its ``spec:`` value."""
        line, column = self.spec_mark
        return f"{self.path}:{line}:{column}: spec: {message}"


class _Problems:
    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.lines: list[str] = []

    def add(self, node: Located | tuple[int, int], key: str, message: str) -> None:
        line, column = (node.line, node.column) if isinstance(node, Located) else node
        self.lines.append(f"{self.shown}:{line}:{column}: {key}: {message}")


def load_scenario(path: Path) -> Scenario:
    """Read and check one scenario file; ``ScenarioError`` with every problem found."""
    shown = str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SCENARIO_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(
            [f"{shown}:1:1: (file): cannot read it: {exc.strerror or exc}"]
        ) from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError([f"{shown}:1:1: (file): larger than {MAX_SCENARIO_BYTES} bytes"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ScenarioError([f"{shown}:{line}:{column}: (file): not valid UTF-8 text"]) from None
    return parse_scenario(text, path)


def parse_scenario(text: str, path: Path) -> Scenario:
    """Check scenario ``text`` (read from ``path``: names and the spec path come from it)."""
    shown = str(path)
    try:
        root = load_located_yaml(text)
    except LocatedYamlError as exc:
        raise ScenarioError([f"{shown}:{exc.line}:{exc.column}: (file): {exc.message}"]) from None
    problems = _Problems(shown)
    if not isinstance(root.value, dict):
        problems.add(root, "(file)", "a scenario is a mapping of keys (spec, sessions, expect)")
        raise ScenarioError(problems.lines)
    top: dict[str, Located] = root.value
    _unknown_keys(root, _TOP_KEYS, "", problems)
    name = _name(top.get("scenario"), path, problems)
    spec = _spec(top.get("spec"), root, path, problems)
    samples = _int(top.get("samples"), "samples", 1, MAX_SAMPLES, 1, problems)
    sessions = _sessions(top.get("sessions"), root, problems)
    requirements: tuple[str, ...] = ()
    pickup: Pickup | None = None
    proven: tuple[str, ...] = ()
    expect = top.get("expect")
    if expect is not None:
        if not isinstance(expect.value, dict):
            problems.add(expect, "expect", "must be a mapping (requirements, pickup, proven)")
        else:
            _unknown_keys(expect, _EXPECT_KEYS, "expect.", problems)
            fields: dict[str, Located] = expect.value
            requirements = _requirements(fields.get("requirements"), sessions, problems)
            pickup = _pickup(fields.get("pickup"), sessions, problems)
            proven = _strings(fields.get("proven"), "expect.proven", problems)
    if problems.lines:
        raise ScenarioError(problems.lines)
    assert spec is not None
    mark = (top["spec"].line, top["spec"].column)
    return Scenario(name, path, spec, samples, sessions, requirements, pickup, proven, mark)


def _unknown_keys(node: Located, known: tuple[str, ...], prefix: str, problems: _Problems) -> None:
    for key in node.value:
        if key not in known:
            allowed = ", ".join(known)
            problems.add(node.key_marks[key], f"{prefix}{key}", f"unknown key (allowed: {allowed})")


def _name(node: Located | None, path: Path, problems: _Problems) -> str:
    if node is None:
        return path.stem
    if not isinstance(node.value, str) or not _NAME.match(node.value):
        problems.add(node, "scenario", "must be a name of letters, digits, spaces and . : - _")
        return path.stem
    return node.value


def _spec(node: Located | None, root: Located, path: Path, problems: _Problems) -> Path | None:
    if node is None:
        problems.add(root, "spec", "missing: the spec to build (a path relative to this file)")
        return None
    if not isinstance(node.value, str) or not node.value.strip():
        problems.add(node, "spec", "must be the path of a spec file (relative to this file)")
        return None
    spec = path.parent / node.value
    if not spec.is_file():
        problems.add(node, "spec", f"no spec file at {spec}")
        return None
    return spec


def _int(
    node: Located | None, key: str, low: int, high: int, default: int, problems: _Problems
) -> int:
    if node is None:
        return default
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems.add(node, key, f"must be a whole number from {low} to {high} (got {value!r})")
        return default
    return value


def _strings(node: Located | None, key: str, problems: _Problems) -> tuple[str, ...]:
    if node is None:
        return ()
    if not isinstance(node.value, list):
        problems.add(node, key, "must be a list of strings")
        return ()
    found: list[str] = []
    for index, item in enumerate(node.value):
        if not isinstance(item.value, str) or not item.value.strip():
            problems.add(item, f"{key}[{index}]", "must be a non-empty string")
        else:
            found.append(item.value.strip())
    return tuple(found)


def _sessions(
    node: Located | None, root: Located, problems: _Problems
) -> tuple[tuple[str, ...], ...]:
    if node is None:
        problems.add(root, "sessions", "missing: a list of sessions, each `user: [messages]`")
        return ()
    if not isinstance(node.value, list) or not node.value:
        problems.add(node, "sessions", "must be a non-empty list of sessions")
        return ()
    if len(node.value) > MAX_SESSIONS:
        problems.add(node, "sessions", f"at most {MAX_SESSIONS} sessions")
        return ()
    sessions: list[tuple[str, ...]] = []
    for index, item in enumerate(node.value):
        key = f"sessions[{index}]"
        if not isinstance(item.value, dict) or "user" not in item.value:
            problems.add(item, key, "must be a mapping with `user: [messages]`")
            continue
        _unknown_keys(item, ("user",), f"{key}.", problems)
        user = item.value["user"]
        messages = _strings(user, f"{key}.user", problems)
        if isinstance(user.value, list) and not user.value:
            problems.add(user, f"{key}.user", "must hold at least one message")
        elif len(messages) > MAX_MESSAGES:
            problems.add(user, f"{key}.user", f"at most {MAX_MESSAGES} messages")
        sessions.append(messages)
    return tuple(sessions)


def _each_string(
    node: Located | None, key: str, problems: _Problems, check: Callable[[Located, str], None]
) -> tuple[str, ...]:
    found = _strings(node, key, problems)
    if node is not None and isinstance(node.value, list):
        for item in node.value:
            if isinstance(item.value, str) and item.value.strip():
                check(item, item.value.strip())
    return found


def _requirements(
    node: Located | None, sessions: tuple[tuple[str, ...], ...], problems: _Problems
) -> tuple[str, ...]:
    said = [message for session in sessions for message in session]

    def check(item: Located, text: str) -> None:
        if not terms(text):
            problems.add(item, "expect.requirements", "has no word to look for (only stop words)")
        elif not any(covers(message, text) for message in said):
            problems.add(item, "expect.requirements", f"{text!r} is never stated in a user message")

    return _each_string(node, "expect.requirements", problems, check)


def _pickup(
    node: Located | None, sessions: tuple[tuple[str, ...], ...], problems: _Problems
) -> Pickup | None:
    if node is None:
        return None
    if not isinstance(node.value, dict):
        problems.add(node, "expect.pickup", "must be a mapping: {session: N, step: text}")
        return None
    _unknown_keys(node, ("session", "step"), "expect.pickup.", problems)
    fields: dict[str, Any] = node.value
    if "session" not in fields or "step" not in fields:
        problems.add(node, "expect.pickup", "needs both `session` and `step`")
        return None
    if len(sessions) < 2:
        problems.add(node, "expect.pickup", "a pickup needs at least two sessions")
        return None
    session = _int(fields["session"], "expect.pickup.session", 2, len(sessions), 0, problems)
    step_node: Located = fields["step"]
    if not isinstance(step_node.value, str) or not step_node.value.strip():
        problems.add(step_node, "expect.pickup.step", "must be the pending step's text")
        return None
    step = step_node.value.strip()
    if session:
        opening = terms(sessions[session - 1][0]) if sessions[session - 1] else frozenset()
        if not terms(step) - opening:
            problems.add(
                step_node,
                "expect.pickup.step",
                "every word of the step is in the session's first message: the user would be "
                "naming it, not the agent picking it up",
            )
    return Pickup(session, step) if session else None

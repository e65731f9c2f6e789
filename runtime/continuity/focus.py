"""``focus.md``: the focus note, a mirror of the active plan, and the requirements ledger.

Layout (the first line is the marker; a file without it is user-authored: the store never writes
it, and shows its text to the agent as a person's read-only focus — see ``user_focus``)::

    <!-- specwire:focus -->
    # Focus

    <body, or _no focus set_>

    ## Active plan
    <!-- specwire:active-plan -->
    <plan-0001, or _none_>

    ## Requirements
    <!-- specwire:requirements -->
    [ledger truncated]            (only after an eviction)
    - REQ-001 [open] "<verbatim>" (user, sess_…, turn 3)      (or _none_)

The Active plan section is a read-only mirror of ``plans/ACTIVE`` (the authority; see
``plans.py``), refreshed whenever the store writes this file. Lines a person adds under
Requirements that are not ledger lines are kept as they are, after the ledger.
"""

from __future__ import annotations

from dataclasses import field

from specwire.runtime.continuity.ledger import (
    LEDGER_TRUNCATED,
    Requirement,
    parse_requirement,
    render_requirement,
)
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass

FOCUS_MARKER = "<!-- specwire:focus -->"
ACTIVE_PLAN_MARKER = "<!-- specwire:active-plan -->"
REQUIREMENTS_MARKER = "<!-- specwire:requirements -->"
MARKER_PREFIX = "<!-- specwire:"
NO_FOCUS = "_no focus set_"
NONE = "_none_"
DEFAULT_FOCUS_MAX_CHARS = 4096


@lazy_methods_dataclass(frozen=True)
class FocusDoc:
    """The focus note as the store keeps it: body, active plan, requirements."""

    body: str = ""
    active_plan: str | None = None
    requirements: tuple[Requirement, ...] = ()
    ledger_truncated: bool = False
    # Non-ledger lines a person wrote under Requirements, kept verbatim.
    extra_lines: tuple[str, ...] = field(default=())


@lazy_dataclass(frozen=True)
class UserFocus:
    """The text of a focus.md a person wrote, cut to the focus cap for the agent to read."""

    text: str
    total_chars: int
    max_chars: int

    @property
    def truncated(self) -> bool:
        return self.total_chars > self.max_chars

    def note(self, name: str) -> str | None:
        """The line that says the text was cut, or None when it was not."""
        if not self.truncated:
            return None
        return f"[{name} is {self.total_chars} chars; showing the first {self.max_chars}]"


def user_focus(text: str, max_chars: int) -> UserFocus:
    """A user-authored focus.md as the agent sees it: BOM and CRLF normalized, trimmed, capped."""
    clean = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip()
    return UserFocus(clean[:max_chars].rstrip(), len(clean), max_chars)


def is_store_owned(text: str) -> bool:
    """True when the file carries the specwire focus marker on its first line."""
    first = text.lstrip("\ufeff").split("\n", 1)[0].strip()
    return first == FOCUS_MARKER


def _strip_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _index(lines: list[str], wanted: str) -> int | None:
    for i, line in enumerate(lines):
        if line.strip() == wanted:
            return i
    return None


def parse_focus(text: str) -> FocusDoc | None:
    """Parse a store-owned focus.md; None when the file is user-authored (no marker)."""
    if not is_store_owned(text):
        return None
    lines = text.lstrip("\ufeff").split("\n")[1:]
    heading = _index(lines, "# Focus")
    if heading is not None:
        lines = lines[heading + 1 :]
    active_at = _index(lines, ACTIVE_PLAN_MARKER)
    req_at = _index(lines, REQUIREMENTS_MARKER)
    body_end = len(lines)
    for at in (active_at, req_at):
        if at is not None:
            # The section heading sits just above its marker.
            body_end = min(body_end, at - 1 if at > 0 and lines[at - 1].startswith("## ") else at)
    body_lines = _strip_blank(lines[:body_end])
    body = "\n".join(body_lines)
    if body == NO_FOCUS:
        body = ""

    active: str | None = None
    if active_at is not None:
        for line in lines[active_at + 1 :]:
            value = line.strip()
            if not value:
                continue
            if not value.startswith("#") and value != NONE and not value.startswith(MARKER_PREFIX):
                active = value
            break

    reqs: list[Requirement] = []
    extra: list[str] = []
    truncated = False
    if req_at is not None:
        for line in lines[req_at + 1 :]:
            if not line.strip() or line.strip() == NONE:
                continue
            if line.strip() == LEDGER_TRUNCATED:
                truncated = True
                continue
            req = parse_requirement(line)
            if req is None:
                extra.append(line)
            else:
                reqs.append(req)
    return FocusDoc(body, active, tuple(reqs), truncated, tuple(extra))


def render_focus(doc: FocusDoc) -> str:
    lines = [FOCUS_MARKER, "# Focus", "", doc.body or NO_FOCUS, ""]
    lines += ["## Active plan", ACTIVE_PLAN_MARKER, doc.active_plan or NONE, ""]
    lines += ["## Requirements", REQUIREMENTS_MARKER]
    if doc.ledger_truncated:
        lines.append(LEDGER_TRUNCATED)
    lines += [render_requirement(r) for r in doc.requirements]
    if not doc.requirements:
        lines.append(NONE)
    lines += list(doc.extra_lines)
    return "\n".join(lines) + "\n"


def check_focus_body(body: str, max_chars: int) -> str:
    """Normalize a focus body for writing; raise ValueError with a model-safe message."""
    clean = body.strip()
    if MARKER_PREFIX in clean:
        raise ValueError(
            f"the focus text must not contain specwire markers ({MARKER_PREFIX}…); "
            "nothing was written"
        )
    if len(clean) > max_chars:
        raise ValueError(
            f"the focus is {len(clean)} chars; the cap is {max_chars} (continuity.focusMaxChars)"
            " — shorten it and write it again; nothing was written"
        )
    return clean

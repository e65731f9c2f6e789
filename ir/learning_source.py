"""``learning``: the value types of CrewHaus's learning block (the models are in ``ir.source``).

``{enabled?, domain, curriculum?, sources?[], exam?{dataset, graders}, study?{on_heartbeat?,
on_dream?}}``. A source is a file beneath the workspace (a relative path that stays inside it
and out of its ``.specwire/`` state folder) or an http(s) URL, whose origin is then the one the
study pass may fetch from. ``exam.dataset`` is such a file (JSONL: one ``{"question",
"answer"}`` object a line).
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, Field, WithJsonSchema

from specwire.ir.fields import fail
from specwire.ir.values import got, quote
from specwire.runtime.core.fragment import (
    EXAM_GRADERS,
    MAX_LEARNING_SOURCES,
    SPECWIRE_DIRNAME,
    ExamGrader,
)

_URL_RE: Final = re.compile(r"https?://[^\s/?#@]+(?:[/?#][^\s]*)?")
_MAX_PATH_CHARS: Final = 1024


def workspace_path_problem(value: str) -> str | None:
    """Why ``value`` is not a file path beneath the workspace, or None."""
    if not value.strip() or any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        return "must be a path on one line"
    if len(value) > _MAX_PATH_CHARS:
        return f"is longer than {_MAX_PATH_CHARS} characters"
    if value.startswith(("/", "~")) or "\\" in value or re.match(r"[A-Za-z]:", value):
        return "must be relative to the workspace (the agent's folder), with / between folders"
    parts = value.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "must stay beneath the workspace: no empty, '.' or '..' part"
    if parts[0] == SPECWIRE_DIRNAME:
        return f"must not be in {SPECWIRE_DIRNAME}/ (the agent's own state)"
    return None


def _workspace_file(value: str) -> str:
    problem = workspace_path_problem(value)
    if problem is not None:
        fail(f"{quote(value)} {problem}")
    return value


def _source(value: str) -> str:
    if value.startswith(("http://", "https://")):
        if _URL_RE.fullmatch(value) is None:
            fail(
                f"{quote(value)} is not an http:// or https:// URL without a user or password "
                "(one line)"
            )
        return value
    if "://" in value:
        fail(f"{quote(value)}: a source is a path beneath the workspace or an http(s) URL")
    return _workspace_file(value)


def _graders(values: list[str]) -> list[str]:
    if not values:
        fail(f"must list at least one grader: {', '.join(EXAM_GRADERS)}")
    seen: set[str] = set()
    for value in values:
        if value in seen:
            fail(f"grader {quote(value)} is listed twice")
        seen.add(value)
    return values


def _one_line_text(value: str) -> str:
    if not value.strip():
        fail(f"must not be empty {got(value)}")
    if "\n" in value.strip() or "\r" in value:
        fail("must be one line")
    return value.strip()


WorkspaceFile = Annotated[
    str,
    AfterValidator(_workspace_file),
    WithJsonSchema({"type": "string", "pattern": "^(?![/~])(?!\\.specwire/)[^\\\\]+$"}),
]
LearningSourceRef = Annotated[
    str,
    AfterValidator(_source),
    WithJsonSchema({"type": "string", "minLength": 1}),
]


def _distinct(values: list[str]) -> list[str]:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            fail(f"source {quote(value)} is listed twice")
        seen.add(value)
    return values


LearningSources = Annotated[
    list[LearningSourceRef], Field(max_length=MAX_LEARNING_SOURCES), AfterValidator(_distinct)
]
ExamGraders = Annotated[list[ExamGrader], AfterValidator(_graders)]
Domain = Annotated[str, AfterValidator(_one_line_text), WithJsonSchema({"type": "string"})]

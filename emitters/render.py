"""Rendering: one jinja2 environment over the ``templates`` package.

``StrictUndefined`` turns a missing variable into an error; autoescape is off (the outputs are
Python and markdown, escaped by the literal filters instead); ``trim_blocks``/``lstrip_blocks``
keep block tags from leaking whitespace; ``keep_trailing_newline`` keeps files exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2

from emitters.literals import md_code, md_text, py_literal, py_text

TEMPLATE_PACKAGE = "templates"


class TemplateRenderError(RuntimeError):
    """A template failed to render: a template bug, never a user error."""


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(TEMPLATE_PACKAGE, ""),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["py"] = py_literal
    env.filters["py_text"] = py_text
    env.filters["md_code"] = md_code
    env.filters["md_text"] = md_text
    return env


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render ``template`` (a path inside the templates package, e.g. ``cli/agent.py.j2``)."""
    try:
        return environment().get_template(template).render(**context)
    except jinja2.TemplateError as exc:
        raise TemplateRenderError(f"template {template}: {type(exc).__name__}: {exc}") from exc

"""Rendering: one jinja2 environment over the ``templates`` package.

``StrictUndefined`` turns a missing variable into an error; autoescape is off (the outputs are
Python and markdown, escaped by the literal filters instead); ``trim_blocks``/``lstrip_blocks``
keep block tags from leaking whitespace; ``keep_trailing_newline`` keeps files exact. Templates
load from their compiled modules (``emitters.precompiled``) when those are current.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any

import jinja2

import specwire.templates
from specwire.emitters.literals import LiteralError, md_code, md_text, py_literal, py_text, sh_word
from specwire.emitters.precompiled import COMPILED_FOLDER, PrecompiledLoader

TEMPLATE_PACKAGE = "specwire.templates"


class TemplateRenderError(RuntimeError):
    """A template failed to render: a template bug, never a user error."""


def _strict(filter_fn: Callable[[Any], str]) -> Callable[[Any], str]:
    """A filter that refuses undefined input instead of rendering it."""

    @wraps(filter_fn)
    def checked(value: Any) -> str:
        if isinstance(value, jinja2.Undefined):
            raise jinja2.UndefinedError(f"filter {filter_fn.__name__} got an undefined value")
        return filter_fn(value)

    return checked


def templates_folder() -> Path:
    return Path(specwire.templates.__file__).parent


def _environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["py"] = _strict(py_literal)
    env.filters["py_text"] = _strict(py_text)
    env.filters["md_code"] = _strict(md_code)
    env.filters["md_text"] = _strict(md_text)
    env.filters["sh"] = _strict(sh_word)
    return env


def source_environment() -> jinja2.Environment:
    """The environment that compiles every template from its source (what the compiled
    folder is generated from)."""
    return _environment(jinja2.PackageLoader(TEMPLATE_PACKAGE, ""))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    source = jinja2.PackageLoader(TEMPLATE_PACKAGE, "")
    return _environment(PrecompiledLoader(source, templates_folder() / COMPILED_FOLDER))


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render ``template`` (a path inside the templates package, e.g. ``cli/agent.py.j2``)."""
    try:
        return environment().get_template(template).render(**context)
    except (jinja2.TemplateError, LiteralError) as exc:
        raise TemplateRenderError(f"template {template}: {type(exc).__name__}: {exc}") from exc

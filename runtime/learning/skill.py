"""The builtin ``learning-loop`` skill, rendered with the spec's learning block.

Its text names ``{{domain}}``, ``{{curriculum}}`` and ``{{sources}}``; rendering is strict (as
CrewHaus's): a placeholder without a value, or a value without a placeholder, is an error
(``SkillTemplateError``), so a renamed placeholder cannot ship an unrendered skill. A home or
project override of the skill is the user's own text and is used as written.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Final

from specwire.runtime.core.fragment_data import LearningData
from specwire.runtime.core.seams import Skill

LEARNING_SKILL: Final = "learning-loop"
_PLACEHOLDER: Final = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


class SkillTemplateError(ValueError):
    """A builtin skill whose placeholders and values do not match."""


def render_template(text: str, values: Mapping[str, str]) -> str:
    named = set(_PLACEHOLDER.findall(text))
    missing = sorted(named - set(values))
    if missing:
        raise SkillTemplateError(f"no value for {{{{{missing[0]}}}}}")
    unused = sorted(set(values) - named)
    if unused:
        raise SkillTemplateError(f"a value for {unused[0]!r}, which the text never names")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)


def skill_values(learning: LearningData) -> dict[str, str]:
    sources = "\n".join(f"- {ref}" for ref in learning.sources) or "- (none listed in the spec)"
    return {
        "domain": learning.domain,
        "curriculum": (learning.curriculum or "").strip() or "(none given: follow the gaps)",
        "sources": sources,
    }


def rendered_skills(skills: Sequence[Skill], learning: LearningData) -> list[Skill]:
    """``skills`` with the builtin learning-loop skill rendered (others unchanged)."""
    values = skill_values(learning)
    out: list[Skill] = []
    for skill in skills:
        if skill.name == LEARNING_SKILL and skill.source == "builtin":
            skill = dataclasses.replace(
                skill,
                description=render_template(skill.description, _only(skill.description, values)),
                body=render_template(skill.body, values),
            )
        out.append(skill)
    return out


def _only(text: str, values: Mapping[str, str]) -> dict[str, str]:
    """The values ``text`` names (a description names some of the body's placeholders)."""
    named = set(_PLACEHOLDER.findall(text))
    return {key: value for key, value in values.items() if key in named}

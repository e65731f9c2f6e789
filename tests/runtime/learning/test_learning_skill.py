"""The learning-loop skill is rendered strictly from the spec's learning block."""

from __future__ import annotations

import pytest

from specwire.runtime.core.fragment_data import LearningData
from specwire.runtime.core.seams import Skill
from specwire.runtime.learning.skill import SkillTemplateError, render_template, rendered_skills


def test_a_missing_value_or_an_unused_one_is_an_error() -> None:
    assert render_template("learn {{domain}}", {"domain": "billing"}) == "learn billing"
    with pytest.raises(SkillTemplateError, match=r"no value for \{\{sources\}\}"):
        render_template("{{domain}} from {{sources}}", {"domain": "billing"})
    with pytest.raises(SkillTemplateError, match="a value for 'curriculum'"):
        render_template("{{domain}}", {"domain": "billing", "curriculum": "c"})


def test_only_the_builtin_skill_is_rendered() -> None:
    learning = LearningData(domain="Acme billing", sources=("docs/a.md",))
    builtin = Skill(
        "learning-loop", "Learn {{domain}}", "{{domain}} {{curriculum}} {{sources}}", "builtin"
    )
    project = Skill("learning-loop", "mine", "my own {{domain}} text", "project")
    [done] = rendered_skills([builtin], learning)
    assert done.description == "Learn Acme billing"
    assert done.body == "Acme billing (none given: follow the gaps) - docs/a.md"
    assert rendered_skills([project], learning) == [project]

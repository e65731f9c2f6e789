"""Builtin skills and commands ship as package data; home, then project, override them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from specwire.runtime.core.yaml_text import load_yaml_mapping
from specwire.runtime.skills.frontmatter import _simple_fields, split_front_matter
from specwire.runtime.skills.loader import (
    CONTINUITY_COMMANDS,
    FACTS_COMMANDS,
    load_commands,
    load_skills,
)

KNOWN_TOOLS = {
    "Remember",
    "Recall",
    "MemoryForget",
    "FocusRead",
    "FocusWrite",
    "PlanRead",
    "PlanUpdate",
    "PlanComplete",
    "GoalWrite",
    "GoalUpdate",
    "GoalList",
    "MemoryClear",
}


def test_front_matter_is_split_from_the_body() -> None:
    fields, body = split_front_matter('---\ndescription: "a: b"\nargument-hint: <q>\n---\nBody\n')
    assert fields == {"description": "a: b", "argument-hint": "<q>"}
    assert body == "Body\n"
    assert split_front_matter("no header\n") == ({}, "no header\n")


def test_front_matter_is_read_as_yaml() -> None:
    text = (
        "---\n"
        "# a comment\n"
        "description: >\n"
        "  Triage a ticket\n"
        "  and set its severity.\n"
        "argument-hint: '<ticket id>'\n"
        'name: "triage: quick"\n'
        "---\nBody\n"
    )
    fields, body = split_front_matter(text)
    assert fields == {
        "description": "Triage a ticket and set its severity.",
        "argument-hint": "<ticket id>",
        "name": "triage: quick",
    }
    assert body == "Body\n"


def test_a_command_with_broken_front_matter_is_skipped_with_a_warning(tmp_path: Path) -> None:
    commands_dir = tmp_path / ".specwire" / "commands"
    commands_dir.mkdir(parents=True)
    (commands_dir / "bad.md").write_text("---\ndescription: [open\n---\nBody\n")
    (commands_dir / "good.md").write_text("---\ndescription: fine\n---\nBody\n")
    warnings: list[str] = []
    commands = load_commands(set(), cwd=tmp_path, home_dir=None, warn=warnings.append)
    assert sorted(commands) == ["good"]
    assert (
        len(warnings) == 1 and "bad.md" in warnings[0] and "not valid YAML at line" in warnings[0]
    )


def test_every_builtin_command_is_shipped_and_described(tmp_path: Path) -> None:
    commands = load_commands(CONTINUITY_COMMANDS | FACTS_COMMANDS, cwd=tmp_path, home_dir=None)
    assert set(commands) == CONTINUITY_COMMANDS | FACTS_COMMANDS
    assert all(c.description and c.source == "builtin" for c in commands.values())
    assert "$ARGUMENTS" not in commands["focus"].render("ship the fix")
    assert "ship the fix" in commands["focus"].render("ship the fix")


def test_builtin_commands_are_gated_by_feature(tmp_path: Path) -> None:
    assert set(load_commands(FACTS_COMMANDS, cwd=tmp_path, home_dir=None)) == {"forget"}
    assert load_commands(frozenset(), cwd=tmp_path, home_dir=None) == {}


def test_prose_names_only_tools_that_exist(tmp_path: Path) -> None:
    import re

    texts = [s.body for s in load_skills({"continuity"}, cwd=tmp_path, home_dir=None)]
    texts += [
        c.body
        for c in load_commands(
            CONTINUITY_COMMANDS | FACTS_COMMANDS, cwd=tmp_path, home_dir=None
        ).values()
    ]
    named = {word for text in texts for word in re.findall(r"\b[A-Z][a-z]+[A-Z][A-Za-z]+\b", text)}
    assert named and named <= KNOWN_TOOLS, named - KNOWN_TOOLS


def test_home_then_project_override_by_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".specwire" / "skills" / "continuity").mkdir(parents=True)
    (home / ".specwire" / "skills" / "continuity" / "SKILL.md").write_text(
        "---\ndescription: mine\n---\nhome body\n"
    )
    project = tmp_path / "project"
    (project / ".specwire" / "skills" / "triage").mkdir(parents=True)
    (project / ".specwire" / "skills" / "triage" / "SKILL.md").write_text("triage body\n")
    skills = load_skills({"continuity"}, cwd=project, home_dir=home)
    assert [(s.name, s.source, s.body) for s in skills] == [
        ("continuity", "home", "home body\n"),
        ("triage", "project", "triage body\n"),
    ]


def test_builtin_skill_not_asked_for_is_not_loaded(tmp_path: Path) -> None:
    assert load_skills(set(), cwd=tmp_path, home_dir=None) == []


def test_an_unreadable_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    commands = tmp_path / ".specwire" / "commands"
    commands.mkdir(parents=True)
    (commands / "bad.md").write_bytes(b"\xff\xfe not utf-8")
    (commands / "good.md").write_text("fine\n")
    skill = tmp_path / ".specwire" / "skills" / "broken"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_bytes(b"\xff")
    warnings: list[str] = []
    found = load_commands(frozenset(), cwd=tmp_path, home_dir=None, warn=warnings.append)
    assert list(found) == ["good"]
    assert load_skills(set(), cwd=tmp_path, home_dir=None, warn=warnings.append) == []
    assert len(warnings) == 2 and all("UnicodeDecodeError" in w for w in warnings)


def test_a_command_file_cannot_shadow_the_hosts_own_commands(tmp_path: Path) -> None:
    commands = tmp_path / ".specwire" / "commands"
    commands.mkdir(parents=True)
    (commands / "exit.md").write_text("never\n")
    (commands / "help.md").write_text("never\n")
    warnings: list[str] = []
    assert load_commands(frozenset(), cwd=tmp_path, home_dir=None, warn=warnings.append) == {}
    assert len(warnings) == 2 and all("answered by the host" in w for w in warnings)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab zé:#-'\"[]{}>|&*!%@`,.?+019\\\t")), max_size=12))
def test_the_fast_front_matter_path_reads_what_yaml_reads(value: str) -> None:
    """Builtin files skip the YAML library; whatever that path accepts, YAML reads the same."""
    header = f"key: {value}"
    fast = _simple_fields(header)
    if fast is None:
        return
    try:
        slow = load_yaml_mapping(header)
    except ValueError:
        raise AssertionError(f"fast path accepted invalid YAML: {header!r}") from None
    expected = {k: None if v is None else str(v) for k, v in slow.items()}
    assert fast == expected, header


def test_every_builtin_file_takes_the_fast_path() -> None:
    root = Path(__file__).resolve().parents[3] / "runtime" / "skills" / "builtin"
    for path in sorted(root.rglob("*.md")):
        header = path.read_text(encoding="utf-8").split("\n---", 1)[0].removeprefix("---\n")
        assert _simple_fields(header) is not None, path


def test_the_dream_skill_and_command_ship_and_name_only_memory_tools(tmp_path: Path) -> None:
    import re

    from specwire.runtime.skills.loader import DREAM_COMMANDS

    [skill] = load_skills({"dream"}, cwd=tmp_path, home_dir=None)
    commands = load_commands(DREAM_COMMANDS, cwd=tmp_path, home_dir=None)
    assert skill.name == "dream" and set(commands) == {"dream"}
    assert "deploys" in commands["dream"].render("deploys")
    texts = [skill.body, commands["dream"].body]
    named = {word for text in texts for word in re.findall(r"\b[A-Z][a-z]+[A-Z][A-Za-z]+\b", text)}
    assert named and named <= KNOWN_TOOLS, named - KNOWN_TOOLS

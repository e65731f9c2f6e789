"""Long user text (instructions, goals, role instructions) compiles: no recursion, same text."""

from __future__ import annotations

import ast

import pytest
from emitter_cases import emit_text

LINES = 10_000
TEXT = "".join(f'line {n}: say "hi" \\ then stop\n' for n in range(LINES))


def block(indent: int) -> str:
    return "".join(" " * indent + line + "\n" for line in TEXT.splitlines())


def _assigned_strings(source: str) -> list[str]:
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


@pytest.mark.parametrize(
    "spec",
    [
        "name: s\ntarget: cli\nagent:\n  model: scripted\n  instructions: |\n" + block(4),
        "name: s\ntarget: research\nagent: {model: scripted, instructions: i}\n"
        "branchingFactor: 1\nmaxDurationMs: 1000\ngoal: |\n" + block(2),
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n  a:\n"
        "    instructions: |\n" + block(6),
    ],
    ids=["cli-instructions", "research-goal", "crew-role-instructions"],
)
def test_ten_thousand_lines_of_text_compile_unchanged(spec: str) -> None:
    source = emit_text(spec)["agent.py"]
    assert TEXT in _assigned_strings(source)

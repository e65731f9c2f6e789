"""``LazyPattern`` answers as ``re.compile`` of the same source and flags, and compiles only when
a method that matches is called."""

from __future__ import annotations

import re

import pytest

from specwire.runtime.core.patterns import LazyPattern

CASES = [
    (r"^(remember|recall)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL, "Remember:  the plan\nis set"),
    (r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", 0, "a\x01b\x7fc\x9fd\te"),
    (r"\w+", 0, "héllo wörld, 42 times"),
    (r"^\s*#+\s*(.*?)\s*$", re.MULTILINE, "# One\ntext\n## Two  \n"),
]


@pytest.mark.parametrize(("source", "flags", "text"), CASES)
def test_it_answers_as_the_compiled_pattern(source: str, flags: int, text: str) -> None:
    lazy, eager = LazyPattern(source, flags), re.compile(source, flags)
    assert lazy.pattern == eager.pattern
    assert lazy.compiled() is not None and lazy.compiled().flags == eager.flags

    def spans(found: re.Match[str] | None) -> object:
        return None if found is None else (found.span(), found.groups())

    for pos in (0, 1):
        assert spans(lazy.match(text, pos)) == spans(eager.match(text, pos))
        assert spans(lazy.fullmatch(text, pos)) == spans(eager.fullmatch(text, pos))
        assert spans(lazy.search(text, pos)) == spans(eager.search(text, pos))
        assert lazy.findall(text, pos) == eager.findall(text, pos)
        assert [m.span() for m in lazy.finditer(text, pos)] == [
            m.span() for m in eager.finditer(text, pos)
        ]
    assert lazy.sub("_", text) == eager.sub("_", text)
    assert lazy.sub(lambda m: m.group(0).upper(), text, 1) == eager.sub(
        lambda m: m.group(0).upper(), text, 1
    )


def test_it_compiles_on_first_match_only() -> None:
    lazy = LazyPattern(r"^sess_[0-9a-f]{16}$")
    assert lazy.pattern == r"^sess_[0-9a-f]{16}$"
    assert lazy._compiled is None  # reading the source compiled nothing
    assert lazy.match("sess_0123456789abcdef")
    compiled = lazy._compiled
    assert compiled is not None
    assert lazy.fullmatch("nope") is None and lazy._compiled is compiled

"""``load_located_yaml``: plain values with the line and column of every key and value."""

from __future__ import annotations

import pytest

from specwire.runtime.core.yaml_text import Located, LocatedYamlError, load_located_yaml


def test_values_keep_their_positions() -> None:
    root = load_located_yaml("a: 1\nb:\n  - x\n  - {c: true, d: 2026-01-02}\n")
    assert root.key_marks == {"a": (1, 1), "b": (2, 1)}
    assert root.value["a"] == Located(1, 1, 4)
    first, second = root.value["b"].value
    assert first == Located("x", 3, 5)
    assert second.key_marks == {"c": (4, 6), "d": (4, 15)}
    assert second.value["c"].value is True
    assert second.value["d"].value == "2026-01-02"
    assert type(root.value["a"].value) is int


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("a: 1\na: 2\n", 2, 1, 'invalid YAML: found duplicate key "a"'),
        ("a:\n\t- x\n", 2, 1, "invalid YAML: found character '\\t' that cannot start any token"),
        ("a: *nowhere\n", 1, 4, "invalid YAML: found undefined alias 'nowhere'"),
    ],
)
def test_bad_yaml_is_located(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(LocatedYamlError) as caught:
        load_located_yaml(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert caught.value.message.startswith(message)


def test_an_empty_document_is_none() -> None:
    assert load_located_yaml("") == Located(None, 1, 1)


def test_an_alias_bomb_is_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefg":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [{', '.join(['*' + previous] * 10)}]\n"
    with pytest.raises(LocatedYamlError, match="aliases expand the document past 100000"):
        load_located_yaml(bomb)

"""User text reaches generated code only as escaped literals."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specwire.emitters.literals import (
    BLOCK_WIDTH,
    MAX_CONCATENATED_LINES,
    MAX_LITERAL_CHARS,
    LiteralError,
    md_code,
    md_text,
    py_block,
    py_literal,
    py_text,
)

TRICKY = [
    "",
    'say "hi"',
    "it's",
    "both ' and \"",
    "back\\slash",
    "line\nbreak\r\nand\rcr",
    "triple \"\"\" and '''",
    "\x00\x1b[31m",
    "\u2028\u2029\u202e",
    "emoji 🧠",
    "{braces} %s {{jinja}}",
    "\ud800",
]


@pytest.mark.parametrize("text", TRICKY)
def test_py_text_round_trips(text: str) -> None:
    rendered = py_text(text)
    assert ast.literal_eval(rendered) == text
    assert "\r" not in rendered
    assert "\u2028" not in rendered


@given(st.text())
def test_py_text_round_trips_any_text(text: str) -> None:
    assert ast.literal_eval(py_text(text)) == text


def test_py_text_puts_each_line_in_its_own_literal() -> None:
    assert py_text("one\ntwo\n") == "(\n'one\\n'\n'two\\n'\n)"
    assert py_text("single line") == "'single line'"


def test_long_text_is_one_triple_quoted_block() -> None:
    text = "".join(f"line {n}\n" for n in range(MAX_CONCATENATED_LINES + 1))
    rendered = py_text(text)
    assert rendered.startswith('"""\\\nline 0\nline 1\n')
    assert rendered.endswith('line 100\n"""')
    assert ast.literal_eval(rendered) == text


def test_text_at_the_line_limit_stays_concatenated() -> None:
    text = "x\n" * MAX_CONCATENATED_LINES
    assert py_text(text).startswith("(\n'x\\n'\n")


@pytest.mark.parametrize("text", [*TRICKY, 'ends in a quote"', '"""', "\\", '\\"', "a\\\nb"])
def test_py_block_round_trips(text: str) -> None:
    rendered = py_block(text)
    assert ast.literal_eval(rendered) == text
    assert "\r" not in rendered
    assert "\u2028" not in rendered
    assert "\ud800" not in rendered


@given(st.text())
def test_py_block_round_trips_any_text(text: str) -> None:
    assert ast.literal_eval(py_block(text)) == text


def test_one_very_long_line_is_a_block_wrapped_to_the_block_width() -> None:
    text = "word " * (MAX_LITERAL_CHARS // 5 + 1)
    rendered = py_text(text)
    assert rendered.startswith('"""\\\n')
    assert max(len(line) for line in rendered.splitlines()) <= BLOCK_WIDTH + len('"""')
    assert ast.literal_eval(rendered) == text


@given(
    st.lists(st.sampled_from([*TRICKY, "\\", '"', "\t", "x" * 50, "\U000e0001"]), min_size=5).map(
        "".join
    )
)
def test_wrapping_never_cuts_an_escape_in_two(pieces: str) -> None:
    rendered = py_block(pieces * 3)
    assert ast.literal_eval(rendered) == pieces * 3
    assert max(len(line) for line in rendered.splitlines()) <= BLOCK_WIDTH + len('"""')


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -3,
        1.5,
        "x",
        (),
        ("a",),
        ("a", "b"),
        [],
        [1, [2]],
        {"b": 1, "a": {"c": None}},
    ],
)
def test_py_literal_round_trips(value: object) -> None:
    assert ast.literal_eval(py_literal(value)) == value


def test_py_literal_keeps_dict_order_and_tuple_shape() -> None:
    assert py_literal({"b": 1, "a": 2}) == "{'b': 1, 'a': 2}"
    assert py_literal(("a",)) == "('a',)"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1: 2}, object(), b"bytes"])
def test_py_literal_refuses_what_has_no_deterministic_literal(value: object) -> None:
    with pytest.raises(LiteralError):
        py_literal(value)


def test_md_code_survives_backticks_and_newlines() -> None:
    assert md_code("scripted") == "`scripted`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("two\nlines") == "`two lines`"


def test_md_text_escapes_markdown_syntax() -> None:
    assert md_text("my_bot *v2* <x>") == "my\\_bot \\*v2\\* \\<x\\>"

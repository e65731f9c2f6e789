"""Search snippets: the best-matching line, 1-based, at most 500 characters."""

from __future__ import annotations

from specwire.runtime.facts.tiers.layout import MAX_SNIPPET_CHARS
from specwire.runtime.facts.tiers.snippets import snippet_of

NOTE = "\n".join(
    [
        "# Release notes",
        "- the staging database is pg-14 on host db2",
        "",
        "- deploys happen on Tuesday at 14:00 UTC",
        "- the on-call rota lives in the ops wiki",
    ]
)


def test_the_line_with_most_query_terms_and_its_neighbours() -> None:
    snippet = snippet_of(NOTE, "when are deploys on Tuesday")
    assert snippet.line == 4
    # The blank line before is no context; the line after is.
    assert snippet.text == (
        "- deploys happen on Tuesday at 14:00 UTC\n- the on-call rota lives in the ops wiki"
    )


def test_no_match_points_at_the_first_non_empty_line() -> None:
    assert snippet_of("\n\nonly line", "zebra").line == 3


def test_a_long_line_is_cut_around_its_match_to_500_characters() -> None:
    long = "filler " * 200 + "needle here " + "tail " * 200
    snippet = snippet_of(f"intro\n{long}", "needle")
    assert snippet.line == 2
    assert len(snippet.text) <= MAX_SNIPPET_CHARS
    assert "needle" in snippet.text
    assert snippet.text.startswith("…") and snippet.text.endswith("…")


def test_neighbours_are_dropped_when_they_would_pass_the_cap() -> None:
    text = "a" * 300 + "\nthe match line\n" + "b" * 300
    snippet = snippet_of(text, "match")
    assert snippet.line == 2
    assert len(snippet.text) <= MAX_SNIPPET_CHARS
    assert "the match line" in snippet.text


def test_unicode_lines() -> None:
    snippet = snippet_of("première ligne\nle café est fermé le lundi 🌙", "café lundi")
    assert snippet.line == 2 and "café" in snippet.text

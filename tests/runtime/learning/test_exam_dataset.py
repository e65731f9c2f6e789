"""The exam dataset: one JSON object a line, refused in one line naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.runtime.learning.dataset import DatasetError, ExamSample, load_dataset, parse_dataset


def test_samples_are_read_with_default_ids_and_blank_lines_skipped() -> None:
    text = (
        '{"question": "When?", "answer": "Monday"}\n'
        "\n"
        '{"id": "fee", "question": "  How   much? ", "answer": "2%"}\n'
    )
    assert parse_dataset(text, "exam.jsonl") == [
        ExamSample("line-1", "When?", "Monday"),
        ExamSample("fee", "How much?", "2%"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json\n", 'exam.jsonl:1: not JSON: expected {"question": …, "answer": …}'),
        ('["q", "a"]\n', 'exam.jsonl:1: expected an object {"question": …, "answer": …}'),
        ('{"question": "q"}\n', "exam.jsonl:1: 'answer' must be a non-empty string"),
        ('{"question": "q", "answer": " "}\n', "exam.jsonl:1: 'answer' must be a non-empty string"),
        ('{"question": 3, "answer": "a"}\n', "exam.jsonl:1: 'question' must be a non-empty string"),
        (
            '{"question": "q", "answer": "a", "hint": "h"}\n',
            "exam.jsonl:1: unknown field 'hint' (fields: id, question, answer)",
        ),
        (
            '{"id": "x", "question": "q", "answer": "a"}\n'
            '{"id": "x", "question": "r", "answer": "b"}\n',
            "exam.jsonl:2: id 'x' is used twice",
        ),
        ("\n\n", "exam.jsonl: no samples (one JSON object a line)"),
    ],
)
def test_a_bad_dataset_is_one_located_line(text: str, message: str) -> None:
    with pytest.raises(DatasetError) as refused:
        parse_dataset(text, "exam.jsonl")
    assert str(refused.value) == message


def test_the_dataset_is_read_with_the_read_tools_fences(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    (workspace / ".specwire").mkdir(parents=True)
    (tmp_path / "secret.jsonl").write_text('{"question": "q", "answer": "a"}\n', "utf-8")
    (workspace / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    (workspace / ".specwire" / "exam.jsonl").write_text('{"question": "q", "answer": "a"}\n')
    for dataset, why in [
        ("link.jsonl", "outside the working directory"),
        (".specwire/exam.jsonl", ".specwire/ holds the agent's memory"),
        ("missing.jsonl", "is not a file"),
    ]:
        with pytest.raises(DatasetError) as refused:
            load_dataset(workspace, dataset)
        assert str(refused.value).startswith(f"exam dataset {dataset}: ")
        assert why in str(refused.value)

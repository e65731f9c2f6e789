"""``learning.exam.dataset``: the exam's samples, one JSON object a line (JSONL).

Each line is ``{"question": "...", "answer": "..."}``, optionally with an ``"id"`` (a short
name shown in reports; default ``line-<n>``). Blank lines are skipped. Anything else — a line
that is not a JSON object, a missing or empty field, an unknown field, a duplicate id — is
refused in one line naming the file and line. The file is read with the read tool's fences
(beneath the workspace, out of ``.specwire/``, no symlink swapped in).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from specwire.runtime.core.tool_types import ToolRefusal

DATASET_MAX_BYTES: Final = 4 * 1024 * 1024
MAX_SAMPLES: Final = 1_000
MAX_FIELD_CHARS: Final = 4_000
_FIELDS: Final = frozenset({"id", "question", "answer"})


class DatasetError(Exception):
    """An exam dataset that cannot be used; the message is one line naming where."""


@dataclass(frozen=True)
class ExamSample:
    id: str
    question: str
    answer: str


def load_dataset(workspace: Path, dataset: str) -> list[ExamSample]:
    from specwire.runtime.tools.builtin import read_workspace_text  # loaded by the first exam

    try:
        text, size = read_workspace_text(workspace, dataset, DATASET_MAX_BYTES)
    except ToolRefusal as exc:
        raise DatasetError(f"exam dataset {dataset}: {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise DatasetError(f"exam dataset {dataset}: {exc.strerror}") from None
    if size > DATASET_MAX_BYTES:
        raise DatasetError(
            f"exam dataset {dataset}: larger than {DATASET_MAX_BYTES // (1024 * 1024)} MiB"
        )
    return parse_dataset(text, dataset)


def parse_dataset(text: str, shown: str) -> list[ExamSample]:
    samples: list[ExamSample] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        sample = _sample(line, f"{shown}:{number}", number)
        if sample.id in seen:
            raise DatasetError(f"{shown}:{number}: id {sample.id!r} is used twice")
        seen.add(sample.id)
        samples.append(sample)
        if len(samples) > MAX_SAMPLES:
            raise DatasetError(f"{shown}:{number}: more than {MAX_SAMPLES} samples")
    if not samples:
        raise DatasetError(f"{shown}: no samples (one JSON object a line)")
    return samples


def _sample(line: str, where: str, number: int) -> ExamSample:
    try:
        data = json.loads(line)
    except ValueError:
        raise DatasetError(f'{where}: not JSON: expected {{"question": …, "answer": …}}') from None
    if not isinstance(data, dict):
        raise DatasetError(f'{where}: expected an object {{"question": …, "answer": …}}')
    unknown = sorted(str(key) for key in data if key not in _FIELDS)
    if unknown:
        raise DatasetError(f"{where}: unknown field {unknown[0]!r} (fields: id, question, answer)")
    values: dict[str, str] = {}
    for key in ("question", "answer"):
        values[key] = _text(data.get(key), key, where)
    sample_id = data.get("id", f"line-{number}")
    values["id"] = _text(sample_id, "id", where)
    return ExamSample(values["id"], values["question"], values["answer"])


def _text(value: object, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{where}: {key!r} must be a non-empty string")
    if len(value) > MAX_FIELD_CHARS:
        raise DatasetError(f"{where}: {key!r} is longer than {MAX_FIELD_CHARS} characters")
    return " ".join(value.split())

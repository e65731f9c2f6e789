"""The contract module (``runtime/core/fragment.py``) is the only place each shared vocabulary and
limit is written; everything else imports it. A grep over every package module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "runtime" / "core" / "fragment.py"

# Each pattern finds one vocabulary or limit written out as a literal.
VOCABULARIES = {
    "builtin tool names": r"\(\s*\"bash\",\s*\"grep\",\s*\"ls\",\s*\"read\",\s*\"write\"",
    "fact tool names": r"\(\s*\"Remember\",\s*\"Recall\",\s*\"MemoryRead\",\s*\"MemoryForget\"",
    "continuity tool order": r"\"FocusRead\",\s*\"FocusWrite\",\s*\"PlanRead\",",
    "wiki tool names": r"\"wiki_recall\",\s*\"wiki_semantic_search\",",
    "tenant id pattern": r"\[a-zA-Z0-9\]\[a-zA-Z0-9_\\\\?-",
    "plan id pattern": r"plan-\(?\\d\{4",
    "goal id pattern": r"goal-\(?\\d\{4",
    "recall k bound": r"RECALL_K_MAX\s*(?::[^=\n]*)?=\s*50\b|\ble\s*=\s*50\b",
    "ttl ceiling": r"\b3650\b",
    "ttl floor": r"(?i)\b(\w*ttl\w*|ms_per_hour)\s*(?::[^=\n]*)?=\s*3_?600_?000\b",
    "backends": r"\(\s*\"file\",\s*\"http\",\s*\"postgres\",?\s*\)",
    "fragment version": r"FRAGMENT_VERSION\s*(?::[^=\n]*)?=\s*\d",
}


def package_modules() -> list[Path]:
    return sorted(
        path
        for package in ("ir", "emitters", "runtime")
        for path in (ROOT / package).rglob("*.py")
        if path != CONTRACT
    )


@pytest.mark.parametrize("name", sorted(VOCABULARIES))
def test_each_vocabulary_is_written_only_in_the_contract(name: str) -> None:
    pattern = re.compile(VOCABULARIES[name])
    assert pattern.search(CONTRACT.read_text(encoding="utf-8")), f"{name}: not in the contract"
    copies = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in package_modules()
        for text in [path.read_text(encoding="utf-8")]
        for match in pattern.finditer(text)
    ]
    assert copies == [], f"{name} written outside runtime/core/fragment.py: {copies}"


def test_the_scan_finds_a_copy(tmp_path: Path) -> None:
    copy = 'NAMES = ("bash", "grep", "ls", "read", "write")\n'
    assert re.search(VOCABULARIES["builtin tool names"], copy)

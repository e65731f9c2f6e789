"""Erasure covers the runtime's outputs beside the state root, keys its receipt, matches slugs
in the form the runtime writes them, and never writes a receipt for a tier it did not reach."""

from __future__ import annotations

import hashlib
import hmac
import json
import stat
from pathlib import Path

import pytest

from specwire.runtime.core.errors import UnsafeFileError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.erasure.erase import erase_subject
from specwire.runtime.erasure.receipt import RECEIPT_KEY_FILENAME
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.command import main

NAME = "Alice Smith"


def _agent_folder(tmp_path: Path) -> Path:
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    with FactStore.open(layout.facts_db) as store:
        store.remember(f"{NAME} renews in May")
    report = tmp_path / "research-runs" / "sess_00000000000000aa" / "report.md"
    report.parent.mkdir(parents=True)
    report.write_text(f"# Research report\n\n{NAME} prefers email.\n", encoding="utf-8")
    return report


def _erase(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_research_reports_are_erased_and_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _agent_folder(tmp_path)
    status, out, err = _erase(
        capsys, "--root", str(tmp_path), "--json", "erase", "--subject", NAME, "--yes"
    )
    assert status == 0, err
    assert report.read_text(encoding="utf-8") == "# Research report\n\n[erased] prefers email.\n"
    receipt = json.loads(out)
    assert receipt["tiers"]["outputs"] == {"researchReports": 1}
    assert receipt["verification"]["hits"] == 0


def test_a_report_left_holding_the_subject_is_counted_not_hidden(tmp_path: Path) -> None:
    report = _agent_folder(tmp_path)
    report.with_name("chart.bin").write_bytes(b"\xff\xfe" + NAME.encode())  # not text: kept
    receipt = erase_subject(tmp_path / ".specwire", Subject.literal(NAME))
    assert receipt.verification.hits == {"research-runs/sess_00000000000000aa/chart.bin": 1}


def test_a_symlinked_output_folder_is_neither_followed_nor_edited(tmp_path: Path) -> None:
    (tmp_path / ".specwire").mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "report.md").write_text(f"{NAME}\n", encoding="utf-8")
    (tmp_path / "research-runs").symlink_to(outside, target_is_directory=True)
    erase_subject(tmp_path / ".specwire", Subject.literal(NAME))
    assert (outside / "report.md").read_text(encoding="utf-8") == f"{NAME}\n"


def test_the_receipt_holds_a_keyed_hash_never_a_plain_one(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    (root / "state").mkdir(parents=True)
    (root / "blob-alice-smith.bin").write_bytes(b"\xff" + NAME.encode())  # a hit, in its name
    receipt = erase_subject(root, Subject.literal(NAME))
    assert receipt.path is not None
    written = receipt.path.read_bytes()
    for plain in (NAME, f"literal:{NAME}", " ".join(NAME.split())):
        assert hashlib.sha256(plain.encode()).hexdigest().encode() not in written
    assert b"alice" not in written.lower()  # nor in the names of files that still hold it
    body = json.loads(written)
    assert body["verification"]["filesWithHits"] == ["blob-erased.bin"]
    key_file = root / RECEIPT_KEY_FILENAME
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = bytes.fromhex(key_file.read_text().strip())
    expected = hmac.new(key, f"literal:{NAME}".encode(), hashlib.sha256).hexdigest()
    assert body["subjectHmacSha256"] == f"hmac-sha256:{expected}"
    # The key is created once: a second erasure of the same subject gives the same hash.
    again = erase_subject(root, Subject.literal(NAME))
    assert again.subject_hmac == receipt.subject_hmac
    # Another root has its own key: the same subject hashes differently there.
    other = tmp_path / "other" / ".specwire"
    other.mkdir(parents=True)
    assert erase_subject(other, Subject.literal(NAME)).subject_hmac != receipt.subject_hmac


def test_a_planted_receipt_key_link_is_refused(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    root.mkdir()
    (root / RECEIPT_KEY_FILENAME).symlink_to(tmp_path / "stolen.key")
    (root / "notes.md").write_text(f"{NAME}\n")
    with pytest.raises(UnsafeFileError, match="symbolic link"):
        erase_subject(root, Subject.literal(NAME))
    assert (root / "notes.md").read_text() == f"{NAME}\n"  # refused before erasing anything
    assert not (tmp_path / "stolen.key").exists()
    assert not (root / "erasures").exists()


def test_non_ascii_plan_and_article_slugs_are_renamed(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    plans = root / "state" / "spec" / "plans"
    plans.mkdir(parents=True)
    plan = plans / "plan-0001-call-zo-m-ller.md"  # the runtime's slug of "Call Zoë Müller"
    plan.write_text('---\n{"slug": "call-zo-m-ller", "title": "Call Zoë Müller"}\n---\n')
    articles = root / "wiki" / "spec" / "articles"
    articles.mkdir(parents=True)
    (articles / "zoe-muller.md").write_text("---\n{}\n---\nSee [[zoe-muller]].\n")
    receipt = erase_subject(root, Subject.literal("Zoë Müller"))
    assert (plans / "plan-0001-call-erased.md").read_text() == (
        '---\n{"slug": "call-erased", "title": "Call [erased]"}\n---\n'
    )
    assert (articles / "erased.md").read_text() == "---\n{}\n---\nSee [[erased]].\n"
    assert receipt.tiers["files"]["renamed"] == 2
    assert receipt.verification.clean


def test_an_unreachable_postgres_writes_no_receipt_and_touches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _agent_folder(tmp_path)
    before = report.read_bytes()
    monkeypatch.setenv("ERASE_DSN", "postgresql://owner:pw@127.0.0.1:1/facts")
    status, out, err = _erase(
        capsys,
        "--root",
        str(tmp_path),
        "erase",
        "--subject",
        NAME,
        "--postgres",
        "ERASE_DSN",
        "--yes",
    )
    assert status == 2
    last = err.splitlines()[-1]
    assert last.startswith("codegen memory: the PostgreSQL fact database") and "pw" not in err
    assert "Traceback" not in err
    assert "hits" not in out and "receipt" not in out
    assert not (tmp_path / ".specwire" / "erasures").exists()
    assert report.read_bytes() == before

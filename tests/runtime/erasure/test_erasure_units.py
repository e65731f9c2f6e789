"""Erasure pieces: matching and redaction, the fact tier (rows, history links, indexes, guards
restored), renamed slugs, and the owner verb's refusals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.erasure.erase import erase_subject, verify
from specwire.runtime.erasure.fact_tier import erase_from_store
from specwire.runtime.erasure.subject import Subject, SubjectError
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.command import main


def test_a_literal_subject_matches_across_case_spacing_and_its_slug() -> None:
    subject = Subject.literal("Alice  Smith")
    assert subject.redact("ALICE\nsmith called; see alice-smith.md") == (
        "[erased] called; see erased.md"
    )
    assert subject.redact_name("plan-0001-renewal-for-alice-smith.md") == (
        "plan-0001-renewal-for-erased.md"
    )
    assert subject.count_in(b"x Alice Smith y alice-smith z") == 2
    assert Subject.literal("Zoë Ünal").count_in(b'"Zo\\u00eb \\u00dcnal"') == 1


@pytest.mark.parametrize("bad", ["", "  ", "ab"])
def test_a_too_short_subject_is_refused(bad: str) -> None:
    with pytest.raises(SubjectError, match="at least 3 letters or digits"):
        Subject.literal(bad)


@pytest.mark.parametrize("bad", ["(", ".*", "x?"])
def test_a_regex_that_is_invalid_or_matches_nothing_in_particular_is_refused(bad: str) -> None:
    with pytest.raises(SubjectError):
        Subject.regex(bad)


def test_the_fact_tier_deletes_rows_keeps_history_consistent_and_restores_the_guards(
    tmp_path: Path,
) -> None:
    db = tmp_path / "facts.sqlite3"
    with FactStore.open(db) as store:
        old = store.remember("the contact is Bob")
        new = store.supersede(old.id, "the contact is Alice Smith", reason="changed")
        store.remember("Alice Smith likes tea", ["crm"])
        kept = store.remember("the renewal is in May")
        other = store.remember("the office is in Lyon")
        store.forget_id(other.id, reason="Alice Smith asked to drop it")
    for sidecar in (".lexical", ".vectors", ".vectors.matrix"):  # index snapshots: rebuilt later
        (db.parent / (db.name + sidecar)).write_bytes(b"alice smith")
    (db.parent / f".{db.name}.0a1b2c3d.tmp").write_bytes(b"alice smith")  # a killed save
    counts = erase_from_store(db, Subject.literal("alice smith")).counts
    assert counts["facts"] == 2 and counts["tombstoneReasons"] == 1 and counts["snapshots"] == 4
    assert b"alice" not in db.read_bytes().lower()
    with FactStore.open(db) as store:
        assert store.get(new.id) is None
        assert store.get(old.id).status == "forgotten"  # type: ignore[union-attr]
        assert [hit.fact.id for hit in store.recall("renewal may", 5)] == [kept.id]
        assert store.remember("still writable").id
    with sqlite3.connect(db) as conn, pytest.raises(sqlite3.DatabaseError, match="never deleted"):
        conn.execute("DELETE FROM facts")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_erase_subject_renames_and_verifies(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    plan = root / "state" / "spec" / "plans" / "plan-0001-call-alice-smith.md"
    plan.parent.mkdir(parents=True)
    plan.write_text('---\n{"slug": "call-alice-smith", "title": "Call Alice Smith"}\n---\n')
    (root / "state" / "spec" / "goals.json").write_text('{"goals": [{"title": "Alice Smith"}]}')
    (root / "blob.bin").write_bytes(b"\xff\xfeAlice Smith")  # not text: reported, not edited
    receipt = erase_subject(root, Subject.literal("alice smith"))
    assert (plan.parent / "plan-0001-call-erased.md").read_text() == (
        '---\n{"slug": "call-erased", "title": "Call [erased]"}\n---\n'
    )
    assert receipt.verification.hits == {"blob.bin": 1}
    assert receipt.path is not None and receipt.path.parent.name == "erasures"
    assert verify(root, Subject.literal("alice smith")).hits == {"blob.bin": 1}


def test_the_owner_verb_refuses_bad_selectors_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    with FactStore.open(layout.facts_db) as store:
        store.remember("a fact")
    root = ["--root", str(tmp_path)]
    for argv in (
        ["erase", "--yes"],
        ["erase", "--subject", "abc", "--regex", "abc", "--yes"],
        ["erase", "--subject", "ab", "--yes"],
        ["erase", "--regex", "(", "--yes"],
        ["erase", "--id", "mem_0123456789abcdef", "--yes"],
    ):
        assert main([*root, *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("codegen memory: "), (argv, err)
    assert main([*root, "erase", "--subject", "a fact"]) == 1  # no terminal, no --yes
    assert "pass --yes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("literal", "regex"),
    [
        ("wiki", None),
        ("plan", None),
        ("specwire", None),
        ("sess", None),
        ("support bot", None),  # the spec's name
        (None, r"\d{3}"),
        (None, '"'),
        (None, "(a|a)*b"),
    ],
)
def test_a_subject_that_matches_the_stores_structure_is_refused(
    literal: str | None, regex: str | None
) -> None:
    subject = Subject.literal(literal) if literal is not None else Subject.regex(regex or "")
    with pytest.raises(SubjectError, match="part of the stores' own structure"):
        subject.check_structure({"support-bot"})


def test_other_letter_forms_and_separators_are_found_and_redacted() -> None:
    subject = Subject.literal("Alice Smith")
    subject.check_structure({"support-bot"})  # a person's name is no structure
    assert subject.redact("mail alice.smith@example.com or ALICE_SMITH") == (
        "mail [erased]@example.com or [erased]"
    )
    assert subject.redact("see [[alice-smith]]") == "see [[erased]]"
    assert subject.redact("line one\nＡｌｉｃｅ Ｓｍｉｔｈ called\nline three") == (
        "line one\n[erased]\nline three"
    )
    assert subject.count_in("Ａｌｉｃｅ Ｓｍｉｔｈ".encode()) == 1


def test_erase_keeps_keys_markers_and_json_valid(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    state = root / "state" / "spec"
    state.mkdir(parents=True)
    key = root / "sessions" / ".evidence.key"
    key.parent.mkdir(parents=True)
    key.write_bytes(b"0123456789abcdef0123456789abcdef Alice Smith")
    goals = state / "goals.yaml"
    goals.write_text('{"goals": [{"title": "call Alice Smith", "status": "open"}]}\n')
    handoff = state / "handoff.md"
    handoff.write_text("<!-- specwire:handoff -->\n# Handoff\n- call Alice Smith\n")
    receipt = erase_subject(root, Subject.literal("Alice Smith"))
    assert key.read_bytes().endswith(b"Alice Smith")  # never edited: reported instead
    assert receipt.verification.hits == {"sessions/.evidence.key": 1}
    assert json.loads(goals.read_text()) == {
        "goals": [{"title": "call [erased]", "status": "open"}]
    }
    assert handoff.read_text().startswith("<!-- specwire:handoff -->\n")


def test_erase_never_follows_a_symbolic_link_out_of_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("Alice Smith's notes, not the agent's\n")
    root = tmp_path / ".specwire"
    (root / "state" / "spec").mkdir(parents=True)
    (root / "state" / "spec" / "focus.md").symlink_to(outside)
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)
    receipt = erase_subject(root, Subject.literal("Alice Smith"))
    assert outside.read_text() == "Alice Smith's notes, not the agent's\n"
    assert receipt.verification.files_searched == 1  # the receipt key, nothing through a link


def test_an_identifier_is_another_persons_only_when_its_ascii_case_differs() -> None:
    """A user id is matched without ASCII case (``BOB`` is bob) but never through Unicode's
    case folding: ``ſam`` (long s) and ``Kim`` with a Kelvin sign are other people's ids a
    tenant's user may pick, and erasing one of them deleted and redacted ``sam``'s and
    ``kim``'s facts and mentions (the text pattern folded them; the byte verification never
    did, so it had not even been consistent)."""
    look_alike = Subject.identifier("\u017fam", "user:\u017fam")
    assert not look_alike.matches('{"user": "sam"} sam said hi')
    assert look_alike.matches('{"user": "\u017fam"}')
    sam = Subject.identifier("sam", "user:sam")
    assert not sam.matches("\u017fam") and not sam.matches("\u017fAM")
    assert sam.matches("SAM") and sam.redact("Sam and \u017fam") == "[erased] and \u017fam"
    kelvin = Subject.identifier("\u212aim", "user:\u212aim")
    assert not kelvin.matches("kim") and not kelvin.matches("KIM")
    assert not Subject.identifier("kim", "user:kim").matches("\u212aim")
    accented = Subject.identifier("zo\u00eb", "user:zo\u00eb")
    assert accented.matches("ZO\u00eb") and not accented.matches("zo\u00cb")


def test_a_scope_keys_subject_is_the_identifiers_only_with_its_exact_case() -> None:
    """Text mentions match without ASCII case; a scope key's subject (which hosts keep apart
    by case: ``Ana`` and ``ana`` are two people) only exactly, whole, also inside a
    conversation key (the file and PostgreSQL fact tiers both ask ``names_key``)."""
    ana = Subject.identifier("Ana", "user:Ana")
    assert ana.matches("ana said hi") and ana.matches('{"user": "ANA"}')
    assert ana.names_key("Ana") and ana.names_key("webhook:user:Ana")
    assert not ana.names_key("ana") and not ana.names_key("webhook:user:ana")
    assert not ana.names_key("Anabel")
    text = Subject.literal("Alice Smith")
    assert text.names_key("alice.smith")  # a text subject keeps its own matching

"""``codegen memory erase`` reaches documents on both stores: a file document is a JSON file the
file tier redacts, a PostgreSQL document a row the database tier redacts (every tenant and
spec); other documents and a document's id are left as they were."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from document_targets import TARGETS, Target, postgres_documents, target_ids

from specwire.runtime.documents.model import OWNER, RevisionMismatch
from specwire.runtime.erasure.erase import erase_subject
from specwire.runtime.erasure.subject import Subject

SUBJECT = "Alice Smith"


@pytest.fixture(params=TARGETS, ids=target_ids)
def target_factory(request: pytest.FixtureRequest) -> Callable[[Path], Target]:
    factory: Callable[[Path], Target] = request.param
    return factory


@pytest.fixture
def target(target_factory: Callable[[Path], Target], tmp_path: Path) -> Iterator[Target]:
    made = target_factory(tmp_path)
    try:
        yield made
    finally:
        made.close()


def _erase(target: Target, tmp_path: Path) -> str:
    """Run the owner's erase verb on the target's tier; its standard output."""
    if target.root is not None:
        root, extra, env = target.root, [], dict(os.environ)
    else:
        assert target.dsn is not None
        root = tmp_path / "work" / ".specwire"
        root.mkdir(parents=True)
        extra, env = ["--postgres", "DOCS_DSN"], {**os.environ, "DOCS_DSN": target.dsn}
    done = subprocess.run(
        [sys.executable, "-m", "specwire.runtime.owner", "--root", str(root.parent), "erase"]
        + ["--subject", SUBJECT, "--yes", *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_erase_redacts_the_subject_from_documents_and_keeps_the_rest(
    target: Target, tmp_path: Path
) -> None:
    a, b = target.make("tenant-a"), target.make("tenant-b")
    crm = a.create(
        "crm",
        title="Contacts: Alice Smith",
        text="The contact is Alice Smith.\nThe renewal is due in May.",
        summary="who alice smith is",
    )
    b.create("met", title="Meetings", text="Met ALICE SMITH twice.")
    kept = a.create("runbook", title="Runbook", text="Restart the worker on Mondays.")
    stdout = _erase(target, tmp_path)
    if target.dsn is not None:
        assert "2 document(s) redacted" in stdout
    for store, identifier in ((a, "crm"), (b, "met")):
        document = store.get(identifier)
        shown = f"{document.title}\n{document.text}\n{document.summary}".lower()
        assert "alice" not in shown
    assert "The renewal is due in May." in a.get("crm").text
    assert a.get("runbook") == kept
    if target.root is not None:
        raw = b"".join(path.read_bytes() for path in target.root.rglob("*.json"))
    else:
        import psycopg

        with psycopg.connect(target.dsn) as conn:
            raw = repr(conn.execute("SELECT * FROM documents").fetchall()).encode()
        # The row moved to a new revision: a save based on the erased text is refused.
        assert a.get("crm").revision == "2"
        with pytest.raises(RevisionMismatch):
            a.replace(
                "crm", text="Alice Smith again", summary=None, if_match=crm.revision, writer=OWNER
            )
    assert b"alice" not in raw.lower()


@pytest.mark.parametrize("target_factory", [postgres_documents], ids=target_ids)
def test_a_subject_only_in_a_postgres_document_id_is_reported_as_remaining(
    target: Target,
) -> None:
    from specwire.runtime.erasure.postgres_tier import erase_in_database, remaining

    target.make().create("alice-smith", title="Notes", text="nothing personal")
    assert target.dsn is not None
    subject = Subject.literal(SUBJECT)
    done = erase_in_database(target.dsn, subject)
    assert (done.documents, done.remaining) == (0, 1)
    assert remaining(target.dsn, subject) == 1
    assert target.make().get("alice-smith").text == "nothing personal"


def test_erase_subject_on_a_file_root_counts_the_document_file(tmp_path: Path) -> None:
    from document_targets import file_documents

    target = file_documents(tmp_path)
    target.make().create("crm", title="CRM", text="Alice Smith called.")
    assert target.root is not None
    receipt = erase_subject(target.root, Subject.literal(SUBJECT))
    assert receipt.tiers["files"]["continuityWikiTrash"] == 1
    assert receipt.verification.clean
    assert "Alice Smith" not in target.make().get("crm").text


@pytest.mark.parametrize("target_factory", [postgres_documents], ids=target_ids)
def test_facts_and_documents_in_one_database_are_erased_together(target: Target) -> None:
    from specwire.runtime.erasure.postgres_tier import erase_in_database
    from specwire.runtime.facts.providers.postgres.provider import (
        FactScope,
        PostgresFactProvider,
    )
    from specwire.runtime.facts.providers.protocol import RecallRequest, RetainRequest

    assert target.dsn is not None
    facts = PostgresFactProvider(target.dsn, scope=FactScope("tenant-a", "doc-spec"))
    try:
        facts.retain(RetainRequest("the contact is Alice Smith"))
        facts.retain(RetainRequest("the renewal is due in May"))
        target.make().create("crm", title="CRM", text="Alice Smith, renewal in May")
        done = erase_in_database(target.dsn, Subject.literal(SUBJECT))
        assert (done.facts, done.documents, done.remaining) == (1, 1, 0)
        hits = facts.recall(RecallRequest("contact renewal", 10)).hits
        assert [hit.text for hit in hits] == ["the renewal is due in May"]
        assert "Alice" not in target.make().get("crm").text
    finally:
        facts.close()

"""``codegen memory erase``: the right to be forgotten, across every tier, with a receipt.

``--subject TEXT`` (literal, case-insensitive, also its slug form), ``--regex PATTERN`` or
``--id mem_…`` (that fact's text, wherever it was copied), or one subject's scope key:
``--user ID`` (one person: every fact, tier note and held write in their ``user`` key, facts
whose key or text names them, and every mention of the id, e.g. in session logs),
``--conversation ID`` or ``--role NAME`` likewise. Erasure covers the whole state root
(every spec and store in it; with ``--tenant``, that tenant's root). Stop the agent first: a
running one keeps what it already read in memory until it restarts.

With ``--postgres VAR`` the database tier is erased first: a database that cannot be reached
is a one-line error (exit 2) before any file is touched and no receipt is written, so a receipt
never names a tier that was not reached. The receipt then records the database's counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from specwire.runtime.core.progress import Progress
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.erasure.erase import (
    ErasureReceipt,
    erase_subject,
    preview,
    structure_names,
)
from specwire.runtime.erasure.postgres_tier import PostgresErasure
from specwire.runtime.erasure.subject import Subject, SubjectError
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.output import print_json
from specwire.runtime.owner.scoping import erase_target
from specwire.runtime.owner.selection import SelectionError

EXIT_INCOMPLETE = 3


def run(args: argparse.Namespace, root: Path, facts_db: Path | None) -> int:
    key = erase_target(args)
    subject = _subject(args, facts_db, key)
    # Resolved before anything is erased: a missing variable must not leave half an erasure.
    dsn = _postgres_dsn(args.postgres) if args.postgres is not None else None
    subject.check_structure(structure_names(root))
    with Progress("searching for the subject") as searching, searching.ticking():
        found = preview(root, subject)
    if not found.hits:
        sys.stderr.write(
            f"the subject is in none of the {found.files_searched} file(s) under {root}\n"
        )
    else:
        listing = "\n".join(f"  {path}: {count}" for path, count in sorted(found.hits.items()))
        deleted = (
            "Facts that mention it are deleted"
            if key is None
            else f"Every fact, tier note and held write of {key.label()}, its working memory "
            "(a managed bundle's focus, plans and goals for it), and facts that mention it, are "
            "deleted"
        )
        confirm(
            f"erase the subject from {len(found.hits)} file(s) under {root} (occurrences):\n"
            f"{listing}\n{deleted}; every other copy is redacted to [erased]. This cannot be "
            "undone.",
            assume_yes=args.yes,
        )
    with Progress("erasing") as progress, progress.ticking():
        database, receipt = _erase(root, subject, key, dsn)
    if args.json:
        print_json({**receipt.to_json(), "receipt": str(receipt.path)})
    else:
        facts = receipt.tiers["facts"]
        sessions = receipt.tiers["sessions"]
        files = receipt.tiers["files"]
        scopes = ", ".join(f"{scope} {n}" for scope, n in receipt.tiers["scopes"].items())
        sys.stdout.write(
            f"erased: {facts['facts']} fact(s) ({facts['notes']} tier note(s)), "
            f"{facts['quarantined']} quarantined, "
            f"{facts['vectors']} vector(s) in {facts['stores']} store(s); "
            f"{sessions['lines']} line(s) in {sessions['logs']} session log(s); "
            f"{files['continuityWikiTrash']} other file(s), {files['renamed']} renamed, "
            f"{files['personalContinuity']} working-memory file(s) deleted\n"
            f"scopes: {scopes or 'none'}\n"
            f"receipt: {receipt.path}\n"
        )
    if receipt.tiers["facts"]["stores"] == 0 and dsn is None:
        sys.stderr.write(
            f"no fact store under {root}: facts kept in PostgreSQL are erased with "
            "--postgres VAR, facts in a memory service by that service's owner\n"
        )
    verification = receipt.verification
    if database is not None and database.remaining:
        sys.stderr.write(f"{database.remaining} match(es) remain in the PostgreSQL fact database\n")
        return EXIT_INCOMPLETE
    if not verification.clean:
        sys.stderr.write(
            f"{sum(verification.hits.values())} occurrence(s) remain in: "
            + ", ".join(sorted(verification.hits))
            + "\n"
        )
        return EXIT_INCOMPLETE
    sys.stderr.write(f"verified: 0 occurrences in {verification.files_searched} file(s)\n")
    return 0


def _postgres_dsn(variable: str) -> str:
    from specwire.runtime.safety.secrets import MissingSecretError, SecretRef

    try:
        return SecretRef(variable.removeprefix("$")).resolve()
    except MissingSecretError as exc:
        raise SelectionError(f"--postgres: {exc}") from None


def _erase_in_postgres(dsn: str, subject: Subject, key: ScopeKey | None) -> PostgresErasure:
    """The database tier, erased (or ``SelectionError``: it was not reached)."""
    from specwire.runtime.erasure.postgres_tier import erase_in_database
    from specwire.runtime.erasure.state_tier import erase_state_documents

    try:
        done = erase_in_database(dsn, subject, key)
        state = erase_state_documents(dsn, subject, key)
        done = dataclasses.replace(
            done,
            remaining=done.remaining + state.remaining,
            state_documents=state.changed + state.dropped,
        )
    except ImportError as exc:
        raise SelectionError(
            f"--postgres needs {exc.name}: pip install 'specwire[postgres]'"
        ) from None
    except Exception as exc:  # psycopg's errors (the DSN is a registered secret: redacted)
        first = (str(exc).splitlines() or [""])[0]
        raise SelectionError(
            f"the PostgreSQL fact database: {type(exc).__name__}: {first}"
        ) from None
    sys.stdout.write(
        f"erased in PostgreSQL: {done.facts} fact(s), {done.quarantined} quarantined, "
        f"{done.vectors} vector(s), {done.reasons_redacted} reason(s) redacted, "
        f"{done.documents} document(s) redacted, {done.state_documents} state document(s) "
        f"(continuity, wiki) redacted or deleted, {done.session_log_rows} session log row(s) "
        "redacted\n"
    )
    return done


def _erase(
    root: Path, subject: Subject, key: ScopeKey | None, dsn: str | None
) -> tuple[PostgresErasure | None, ErasureReceipt]:
    database = _erase_in_postgres(dsn, subject, key) if dsn is not None else None
    reached = None
    if database is not None:
        reached = {
            "postgres": {
                "facts": database.facts,
                "quarantined": database.quarantined,
                "vectors": database.vectors,
                "reasonsRedacted": database.reasons_redacted,
                "documentsRedacted": database.documents,
                "stateDocumentsRedacted": database.state_documents,
                "sessionLogRowsRedacted": database.session_log_rows,
                "remaining": database.remaining,
            }
        }
    return database, erase_subject(
        root,
        subject,
        reached=reached,
        key=key,
        reached_scopes=None if database is None else database.by_scope,
    )


def _subject(args: argparse.Namespace, facts_db: Path | None, key: ScopeKey | None) -> Subject:
    given = [value for value in (args.subject, args.regex, args.id, key) if value is not None]
    if len(given) != 1:
        raise SelectionError(
            "erase needs exactly one of --subject, --regex, --id, --user, --conversation or --role"
        )
    if key is not None:
        assert key.subject is not None  # a personal scope's key
        try:
            return Subject.identifier(key.subject, key.label())
        except SubjectError as exc:
            raise SubjectError(f"--{key.scope}: {exc}") from None
    if args.subject is not None:
        return Subject.literal(args.subject)
    if args.regex is not None:
        return Subject.regex(args.regex)
    if facts_db is None or not facts_db.exists():
        raise SelectionError(f"no fact store to look up {args.id!r} in (pass --spec)")
    with FactStore.open(facts_db) as store:
        status = store.get(args.id)
        held = store.quarantined_by_id(args.id) if status is None else None
    text = status.fact.text if status is not None else held.text if held is not None else None
    if text is None:
        raise SelectionError(f"no fact {args.id!r} in {facts_db}")
    return Subject.literal(text)

"""``codegen memory erase``: the right to be forgotten, across every tier, with a receipt.

``--subject TEXT`` (literal, case-insensitive, also its slug form), ``--regex PATTERN`` or
``--id mem_…`` (that fact's text, wherever it was copied), or one subject's scope key:
``--user ID`` (one person: every fact, tier note and held write in their ``user`` key, facts
whose key or text names them, and every mention of the id, e.g. in session logs),
``--conversation ID`` or ``--role NAME`` likewise. Erasure covers the whole state root
(every spec and store in it; with ``--tenant``, that tenant's root, and in PostgreSQL that
tenant's rows). User and conversation ids are per tenant on a managed bundle: over a store
holding more than one tenant, ``--user``/``--conversation`` need ``--tenant ID`` or
``--all-tenants`` (``runtime.erasure.tenants``); a subject given as text is erased everywhere
unless ``--tenant`` narrows it. The receipt names the tenants covered. Stop the agent first: a
running one keeps what it already read in memory until it restarts.

With ``--postgres VAR`` the database tier is erased first: a database that cannot be reached
is a one-line error (exit 2) before any file is touched and no receipt is written, so a receipt
never names a tier that was not reached. The receipt then records the database's counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from specwire.runtime.core.fragment import TENANTS_ROOT_ENV
from specwire.runtime.core.progress import Progress
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.erasure.erase import (
    RECEIPTS_DIR,
    ErasureReceipt,
    database_receipt,
    erase_subject,
    preview,
    structure_names,
)
from specwire.runtime.erasure.postgres_tier import PostgresErasure
from specwire.runtime.erasure.receipt import subject_hmac
from specwire.runtime.erasure.subject import Subject, SubjectError
from specwire.runtime.erasure.tenants import tenant_folders, tenant_problem, tenants_under
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.database_tenancy import specs_in_database
from specwire.runtime.owner.output import print_json
from specwire.runtime.owner.scoping import erase_target
from specwire.runtime.owner.selection import SelectionError, tenants_root

EXIT_INCOMPLETE = 3
_T = TypeVar("_T")


def run(args: argparse.Namespace, root: Path, facts_db: Path | None) -> int:
    key = erase_target(args)
    subject = _subject(args, facts_db, key)
    # Resolved before anything is erased: a missing variable must not leave half an erasure.
    dsn = _postgres_dsn(args.postgres) if args.postgres is not None else None
    tenant: str | None = args.tenant
    tenants = _tenants_covered(args, root, dsn)
    problem = tenant_problem(key, tenants, tenant=tenant, all_tenants=args.all_tenants)
    if problem is not None:
        raise SelectionError(problem)
    names = structure_names(root)
    if dsn is not None:  # the database's tenant and spec names key its rows as folders do
        variable = "$" + args.postgres.removeprefix("$")
        names |= {*tenants, *specs_in_database(variable, None)}
    subject.check_structure(names)
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
        database, receipt = _erase(root, subject, key, dsn, tenant, tenants, json=args.json)
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
            f"tenants: {', '.join(receipt.tenants) or 'none'}\n"
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


def _tenants_covered(args: argparse.Namespace, root: Path, dsn: str | None) -> list[str]:
    """The tenants this erasure reaches: the one ``--tenant`` names, else every tenant a walk
    of the state root reaches and every tenant with rows in the database (``--postgres``).
    Tenants kept outside the state root (``$SPECWIRE_TENANTS_ROOT``) are reached one
    ``--tenant`` at a time: ``--all-tenants`` refuses rather than miss them."""
    if args.tenant is not None:
        if args.all_tenants:
            raise SelectionError("--tenant and --all-tenants: name one tenant or every tenant")
        return [args.tenant]
    elsewhere = tenants_root(args.root)
    found = set(tenants_under(root, elsewhere))
    if args.all_tenants and not elsewhere.is_relative_to(root) and tenant_folders(elsewhere):
        raise SelectionError(
            f"--all-tenants: the tenants are kept in {elsewhere} ({TENANTS_ROOT_ENV}), outside "
            f"{root}: erase them one --tenant ID at a time"
        )
    if dsn is not None:
        from specwire.runtime.erasure.postgres_tier import database_tenants

        found.update(_reaching_database(lambda: database_tenants(dsn)))
    return sorted(found)


def _reaching_database(call: Callable[[], _T]) -> _T:
    """``call``'s answer; the database not reached is a ``SelectionError`` (one line)."""
    try:
        return call()
    except ImportError as exc:
        raise SelectionError(
            f"--postgres needs {exc.name}: pip install 'specwire[postgres]'"
        ) from None
    except Exception as exc:  # psycopg's errors (the DSN is a registered secret: redacted)
        first = (str(exc).splitlines() or [""])[0]
        raise SelectionError(
            f"the PostgreSQL fact database: {type(exc).__name__}: {first}"
        ) from None


def _erase_in_postgres(
    dsn: str, subject: Subject, key: ScopeKey | None, tenant: str | None, *, json: bool = False
) -> PostgresErasure:
    """The database tier (every tenant's rows, or ``tenant``'s), erased (or
    ``SelectionError``: it was not reached)."""
    from specwire.runtime.erasure.postgres_tier import erase_in_database
    from specwire.runtime.erasure.state_tier import erase_state_documents

    def erased() -> PostgresErasure:
        done = erase_in_database(dsn, subject, key, tenant)
        state = erase_state_documents(dsn, subject, key, tenant)
        return dataclasses.replace(
            done,
            remaining=done.remaining + state.remaining,
            state_documents=state.changed + state.dropped,
        )

    done = _reaching_database(erased)
    # With --json stdout holds the receipt alone.
    (sys.stderr if json else sys.stdout).write(
        f"erased in PostgreSQL: {done.facts} fact(s), {done.quarantined} quarantined, "
        f"{done.vectors} vector(s), {done.reasons_redacted} reason(s) redacted, "
        f"{done.documents} document(s) redacted, {done.state_documents} state document(s) "
        f"(continuity, wiki) redacted or deleted, {done.session_log_rows} session log row(s) "
        "redacted\n"
    )
    return done


def _erase(
    root: Path,
    subject: Subject,
    key: ScopeKey | None,
    dsn: str | None,
    tenant: str | None,
    tenants: list[str],
    *,
    json: bool = False,
) -> tuple[PostgresErasure | None, ErasureReceipt]:
    if dsn is not None:
        subject_hmac(root, subject)  # the receipt's key before the database is touched
    database = _erase_in_postgres(dsn, subject, key, tenant, json=json) if dsn is not None else None
    reached = None if database is None else _reached(database)
    return database, erase_subject(
        root,
        subject,
        reached=reached,
        key=key,
        reached_scopes=None if database is None else database.by_scope,
        tenants=tenants,
    )


def _reached(database: PostgresErasure) -> dict[str, dict[str, int]]:
    """The database tier's counts, as the receipt names them."""
    return {
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


def run_in_database(args: argparse.Namespace) -> int:
    """An erasure on a fleet whose workers share nothing but the database (``--postgres VAR``,
    no state root on this machine): the database tier alone, the tenant named by ``--tenant``
    checked there (an unknown one: one line, exit 2, nothing touched), and the receipt and its
    key kept in ``ROOT/erasures/`` (``--root``, default here), the one folder made."""
    from specwire.runtime.erasure.postgres_tier import database_tenants

    key = erase_target(args)
    dsn = _postgres_dsn(args.postgres)
    tenant: str | None = args.tenant
    if tenant is not None and args.all_tenants:
        raise SelectionError("--tenant and --all-tenants: name one tenant or every tenant")
    present = _reaching_database(lambda: database_tenants(dsn))
    if tenant is not None and tenant not in present:
        raise SelectionError(f"--tenant {tenant!r}: no such tenant in the database")
    tenants = [tenant] if tenant is not None else present
    problem = tenant_problem(key, tenants, tenant=tenant, all_tenants=args.all_tenants)
    if problem is not None:
        raise SelectionError(problem)
    subject = _database_subject(args, dsn, key, tenant)
    # State documents are keyed by spec and tenant names as files are by folders: a subject
    # matching them would damage the keys rather than remove a person.
    variable = "$" + args.postgres.removeprefix("$")
    subject.check_structure({*present, *specs_in_database(variable, None)})
    where = f"tenant {tenant}" if tenant is not None else f"{len(tenants)} tenant(s)"
    whole = "" if key is None else ", with every fact, held write and working memory of "
    confirm(
        f"erase the subject from the PostgreSQL database ({where}; no state folder here to "
        f"search): facts that mention it are deleted{whole}{'' if key is None else key.label()}"
        "; every other copy is redacted to [erased]. This cannot be undone.",
        assume_yes=args.yes,
    )
    receipts = args.root.resolve() / RECEIPTS_DIR
    # The receipt's key first: a folder that cannot hold it stops the run with nothing erased
    # (an erasure that happened must have its receipt).
    subject_hmac(receipts, subject)
    with Progress("erasing") as progress, progress.ticking():
        database = _erase_in_postgres(dsn, subject, key, tenant, json=args.json)
        receipt = database_receipt(
            receipts,
            subject,
            reached=_reached(database),
            key=key,
            reached_scopes=database.by_scope,
            tenants=tenants,
        )
    if args.json:
        print_json({**receipt.to_json(), "receipt": str(receipt.path)})
    else:
        scopes = ", ".join(f"{scope} {n}" for scope, n in receipt.tiers["scopes"].items())
        sys.stdout.write(
            f"scopes: {scopes or 'none'}\n"
            f"tenants: {', '.join(receipt.tenants) or 'none'}\n"
            f"receipt: {receipt.path}\n"
        )
    if database.remaining:
        sys.stderr.write(f"{database.remaining} match(es) remain in the PostgreSQL database\n")
        return EXIT_INCOMPLETE
    sys.stderr.write("verified: 0 matches remain in the PostgreSQL database\n")
    return 0


def _database_subject(
    args: argparse.Namespace, dsn: str, key: ScopeKey | None, tenant: str | None
) -> Subject:
    """``_subject`` for a database-only erasure: ``--id`` is looked up in the database (ids
    are unique across it; with ``--tenant``, only that tenant's)."""
    if args.id is None or key is not None or args.subject is not None or args.regex is not None:
        return _subject(args, None, key)

    def lookup() -> str | None:
        import psycopg

        from specwire.runtime.erasure.postgres_tier import CONNECT_TIMEOUT_S

        query = (
            "SELECT text FROM facts WHERE id = %(id)s{t} UNION ALL "
            "SELECT text FROM quarantine WHERE id = %(id)s{t}"
        ).format(t="" if tenant is None else " AND tenant = %(tenant)s")
        with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            row = conn.execute(query, {"id": args.id, "tenant": tenant}).fetchone()
        return None if row is None else str(row[0])

    text = _reaching_database(lookup)
    if text is None:
        raise SelectionError(f"no fact {args.id!r} in the PostgreSQL database")
    return Subject.literal(text)


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

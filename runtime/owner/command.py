"""``codegen memory``: see, export, correct and delete what an agent remembers.

    codegen memory [--root DIR] [--spec NAME] [--tenant ID] [--session SESS] [--json]
                   [--backend file|postgres|http [--dsn $VAR] [--url URL --token $VAR]] VERB

Facts: ``list``, ``show ID``, ``search QUERY``, ``forget ID | --query Q``, ``remember TEXT``,
``sweep``, ``export``, ``import FILE``, ``migrate --from B --to B``; the fact verbs take
``--scope`` and one of ``--user``, ``--conversation``, ``--role`` (``runtime.owner.scoping``).
Continuity: ``continuity show``, ``continuity clear [SCOPE]``, ``continuity restore [STAMP]``.
Erasure: ``erase --subject TEXT | --regex RE | --id ID | --user ID | --conversation ID |
--role NAME`` (``--tenant ID`` or ``--all-tenants`` for a user's or conversation's id over a store
of several tenants).
Usage: ``usage`` shows a tenant's usage ledger (turns, and the dream's kind).
MCP: ``mcp --bundle AGENT_PY`` serves the memory tools to MCP clients (``runtime.owner.mcp_verb``).
Documents (``memory.documents``): ``doc list|show|create|edit|freeze|unfreeze|export|remove``
(``runtime.owner.document_verbs``).
Verbs that change memory show what they will do and ask first unless ``--yes``; without a
terminal to ask on they refuse. ``--backend`` names where the facts live, as the spec's
``memory.backend`` (``runtime.owner.backend``); a verb a backend cannot serve says so in one
line. Exit status: 0 done, 1 declined, 2 an error (one line on
stderr, nothing changed), 3 erasure incomplete (occurrences remain) or a migration's copy does
not match its source.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.erasure.subject import SubjectError
from specwire.runtime.facts.model import InvalidRequestError
from specwire.runtime.owner import (
    continuity_verbs,
    document_verbs,
    erase_verb,
    fact_verbs,
    mcp_verb,
    migrate_verb,
    remember_verb,
    state_verb,
    usage_verb,
)
from specwire.runtime.owner.asking import Declined
from specwire.runtime.owner.backend import add_backend_options, is_remote, remote_spec
from specwire.runtime.owner.database_tenancy import database_spec
from specwire.runtime.owner.migrate_verb import add_migrate_arguments
from specwire.runtime.owner.scoping import add_scope_options
from specwire.runtime.owner.selection import (
    Selection,
    SelectionError,
    named_state_root,
    select,
    select_remote,
    state_root,
)
from specwire.runtime.safety.redaction import redact

PROG = "codegen memory"


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--root",
        type=Path,
        default=argparse.SUPPRESS if suppress else Path("."),
        help="the directory the agent runs in (default: here)",
    )
    parser.add_argument(
        "--spec", default=default, help="the spec whose memory (needed when several)"
    )
    parser.add_argument("--tenant", default=default, help="a managed bundle's tenant id")
    parser.add_argument("--session", default=default, help="a conversation's session id (sess_…)")
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="machine-readable output",
    )
    parser.add_argument(
        "--yes",
        "-y",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="do not ask before changing memory",
    )
    add_backend_options(parser, lambda value: argparse.SUPPRESS if suppress else value)


@dataclass(frozen=True)
class ExtraVerb:
    """A verb a higher layer adds to ``codegen memory`` (the console: ``runtime.console``
    imports this module, never the other way): its name, help, arguments and handler."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def build_parser(extra: Sequence[ExtraVerb] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="See, export, correct and delete what an agent remembers.",
        epilog="Exit status: 0 done, 1 declined, 2 an error (nothing changed), 3 erasure "
        "incomplete (occurrences remain) or a migration's copy does not match its source.",
    )
    _common(parser, suppress=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)

    def verb(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        _common(sub, suppress=True)
        return sub

    listing = verb("list", "list facts (live by default)")
    listing.add_argument(
        "--status",
        choices=("live", "expired", "superseded", "forgotten", "quarantined", "all"),
        default="live",
    )
    listing.add_argument(
        "--quarantined",
        action="store_true",
        help="writes the injection scanner held (same as --status quarantined)",
    )
    listing.add_argument("--tag", help="only facts with this tag")
    listing.add_argument("--text", help="only facts whose text contains this (case-insensitive)")
    add_scope_options(listing)
    show = verb("show", "one fact, with its provenance and tombstone")
    show.add_argument("id")
    add_scope_options(show, scope_help="only if the fact is of this scope")
    search = verb(
        "search", "recall as the agent would (best first), over every scope key unless narrowed"
    )
    search.add_argument("query")
    add_scope_options(search, scope_help="only memory of this scope")
    search.add_argument("-k", type=int, default=10)
    search.add_argument(
        "--embedder",
        help="rank with this embedder (default: the one the agent's recall uses, read from the "
        "store; none: BM25 only)",
    )
    forget = verb(
        "forget",
        "forget a fact by id (a quarantined one is deleted), or every live fact matching all "
        "words of a query",
    )
    forget.add_argument("id", nargs="?")
    forget.add_argument("--query")
    forget.add_argument("--reason", default="forgotten by the owner")
    add_scope_options(forget, scope_help="only facts of this scope")
    remember = verb(
        "remember",
        "store a fact as the owner (an agent fact, recalled by everyone, unless a scope is named)",
    )
    remember.add_argument("text")
    remember.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    remember.add_argument(
        "--key", help="a keyed fact: replaces the live fact with this key in the same scope"
    )
    add_scope_options(
        remember,
        scope_help="the scope to keep it in (default: agent; user, conversation and role need "
        "their subject option)",
        subject_help=lambda scope: f"keep it in this {scope}'s memory",
    )
    release = verb("release", "store a quarantined write as a live fact (you vouch for it)")
    release.add_argument("id")
    sweep = verb("sweep", "tombstone expired facts (--compact also reclaims file space)")
    sweep.add_argument("--compact", action="store_true")
    export = verb("export", "every fact as JSONL (stdout, or --out FILE)")
    export.add_argument("--out", type=Path)
    add_scope_options(export, scope_help="only facts of this scope")
    importing = verb(
        "import", "add facts from a JSONL export, or a CrewHaus .crewhaus/memories/<spec>.jsonl"
    )
    importing.add_argument("file", type=Path)
    importing.add_argument("--format", choices=("auto", "specwire", "crewhaus"), default="auto")
    erase = verb(
        "erase",
        "erase a subject everywhere (facts, indexes, session logs, continuity, wiki, trash), "
        "write a receipt and verify; exit 3 if any occurrence remains",
    )
    erase.add_argument("--subject", help="text to erase (case-insensitive, also its slug form)")
    erase.add_argument("--regex", help="a regular expression to erase (case-insensitive)")
    erase.add_argument("--id", help="erase this fact's text wherever it was copied")
    add_scope_options(
        erase,
        scope_help="with --user, --conversation or --role: the same scope (optional)",
        subject_help=lambda scope: (
            f"erase this {scope}'s memory (every fact and note of it, "
            "held writes too) and every mention of the id"
        ),
    )
    erase.add_argument(
        "--all-tenants",
        action="store_true",
        help="with --user or --conversation on a store of several tenants: erase that id in "
        "every tenant (ids are per tenant: without it, name one with --tenant)",
    )
    erase.add_argument(
        "--postgres",
        metavar="VAR",
        help="also erase it from the PostgreSQL fact database (memory.backend: postgres) whose "
        "connection string is in environment variable VAR, e.g. DATABASE_URL",
    )
    migrate = verb(
        "migrate",
        "move every fact (history, tombstones and held writes too) to another backend with "
        "its id and times; resumable, verified by counts and a checksum",
    )
    add_migrate_arguments(migrate)
    continuity = verb("continuity", "focus, plans, goals and handoff")
    continuity.add_argument("action", choices=("show", "clear", "restore", "migrate"))
    continuity.add_argument(
        "target",
        nargs="?",
        help="clear: focus|plans|goals|all (default all); restore: a trash stamp; "
        "migrate: a .crewhaus folder (default: ROOT/.crewhaus)",
    )
    whose = continuity.add_mutually_exclusive_group()
    whose.add_argument(
        "--user",
        metavar="ID",
        help="that person's continuity (a managed bundle's per-person working memory)",
    )
    whose.add_argument(
        "--conversation",
        metavar="ID",
        help="an anonymous managed session's continuity (its X-Session-Id)",
    )
    state = verb(
        "state",
        "export: write the continuity, wiki and trash documents a PostgreSQL-state bundle keeps "
        "in the database (--backend postgres) into DIR as the file layout",
    )
    state.add_argument("action", choices=("export",))
    verb(
        "usage",
        "a tenant's usage ledger per spec: the turns' token totals (what its budget counts) and "
        "the scheduled dream's model phases (runs, calls, tokens, cost; not in the budget)",
    )
    state.add_argument("--to", type=Path, help="the folder to write (its .specwire, e.g.)")
    mcp_verb.add_arguments(
        verb(
            "mcp",
            "serve the agent's memory tools to MCP clients (stdio, or streamable HTTP on "
            "127.0.0.1 with a bearer token); read-only unless --allow-writes",
        )
    )
    document_verbs.add_parser(
        verb("doc", "document memory: list, show, create, edit, freeze, unfreeze, export, remove")
    )
    for added in extra:
        added.add_arguments(verb(added.name, added.help))
    return parser


Handler = Callable[[argparse.Namespace, Selection], int]


def main(argv: Sequence[str] | None = None, extra: Sequence[ExtraVerb] = ()) -> int:
    parser = build_parser(extra)
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    handlers: dict[str, Handler] = {
        "list": fact_verbs.list_facts,
        "show": fact_verbs.show,
        "search": fact_verbs.search,
        "forget": fact_verbs.forget,
        "remember": remember_verb.remember,
        "release": fact_verbs.release,
        "sweep": fact_verbs.sweep,
        "export": fact_verbs.export,
        "import": fact_verbs.import_facts,
        "continuity": continuity_verbs.run,
        "state": state_verb.run,
    }
    extra_verbs = {added.name: added for added in extra}
    try:
        if args.verb in extra_verbs:
            return extra_verbs[args.verb].run(args)
        if args.verb == "erase":
            return _erase(args)
        if args.verb == "doc":
            return document_verbs.run(args)
        if args.verb == "migrate":
            return migrate_verb.run(args)
        if args.verb == "mcp":
            return mcp_verb.run(args)
        if args.verb == "usage":
            return usage_verb.run(args)
        if args.backend == "http" and args.verb in ("continuity", "state"):
            raise SelectionError(
                f"{args.verb} lives under --root or in PostgreSQL: drop --backend http"
            )
        if args.backend == "postgres":
            # Nothing under --root: the database says which tenants and specs exist.
            spec = (
                args.spec
                if args.verb == "import" and args.spec is not None
                else database_spec(args.dsn, args.tenant, args.spec)
            )
            selection = select_remote(args.root, spec, args.tenant, args.session)
        elif is_remote(args):
            spec = remote_spec(args.root, args.spec, args.tenant)
            selection = select_remote(args.root, spec, args.tenant, args.session)
        elif args.verb == "import" and args.spec is not None:
            # An import may be the first memory of a folder where the agent never ran.
            selection = select_remote(args.root, args.spec, args.tenant, args.session)
        else:
            selection = select(args.root, args.spec, args.tenant, args.session)
        return handlers[args.verb](args, selection)
    except Declined as declined:
        sys.stderr.write(f"{PROG}: {declined}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`codegen memory list | head`): stop quietly, as `head`'s
        # writer usually does; stdout goes to /dev/null so the exit's flush cannot fail again.
        _drop_stdout()
        return 1
    except (
        SelectionError,
        StoreError,
        MemoryServiceError,
        InvalidRequestError,
        SubjectError,
        OSError,
        ValueError,
    ) as exc:
        sys.stderr.write(redact(f"{PROG}: {exc}\n"))
        return 2


def _drop_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _erase(args: argparse.Namespace) -> int:
    if args.postgres is not None and not named_state_root(args.root, args.tenant).is_dir():
        # A fleet that shares nothing but the database: no state root here to walk.
        return erase_verb.run_in_database(args)
    root = state_root(args.root, args.tenant)
    facts_db = None
    if args.id is not None:
        facts_db = select(args.root, args.spec, args.tenant, None).facts_db
    return erase_verb.run(args, root, facts_db)


def cli() -> None:
    raise SystemExit(main())

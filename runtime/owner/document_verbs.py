"""``codegen memory doc ACTION``: the owner's side of document memory (``memory.documents``).

    doc list                                  every document (metadata), most recently updated first
    doc show ID                               one document, with its text
    doc create ID --title T [--summary S] [--text-file F | --text-stdin] [--frozen]
    doc edit ID [--text-file F | --text-stdin] [--summary S] [--title T] [--if-match REV]
    doc freeze ID | doc unfreeze ID [--if-match REV]      agent writes off / on
    doc export [--out DIR]                    DIR/<id>.json each, or JSON lines on stdout
    doc remove ID [--if-match REV]            the id stays reserved

Documents live where the spec's memory does (``--backend file``, the default, under ``--root``;
``--backend postgres`` in the database), per tenant with ``--tenant``. ``create`` refuses an id
that was ever used. Every other change is conditional: on ``--if-match REV`` when given, else on
the revision this command read before asking, so a change made meanwhile (an agent's save)
is never overwritten: the command stops with the document's current revision. Nothing needs
the agent to have run first: an owner creates the documents a spec binds before its first
session (``--spec`` names it then).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.documents.files import DOCUMENTS_DIRNAME
from specwire.runtime.documents.model import OWNER, PAGE_SIZE, AgentWrites, Document
from specwire.runtime.documents.store import DocumentStore
from specwire.runtime.documents.wiring import open_document_store
from specwire.runtime.fs.fenced import write_atomic
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.database_tenancy import database_spec
from specwire.runtime.owner.output import print_json, print_table, report
from specwire.runtime.owner.selection import SelectionError, select, select_remote

ACTIONS: Final = ("list", "show", "create", "edit", "freeze", "unfreeze", "export", "remove")
_NEEDS_ID: Final = frozenset(ACTIONS) - {"list", "export"}
COLUMNS: Final = ("id", "revision", "agent", "updated", "bytes", "title")
Verb = Callable[[argparse.Namespace, DocumentStore], int]


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("id", nargs="?", help="the document's id")
    parser.add_argument("--title", help="create (required), edit: the document's title")
    parser.add_argument("--summary", help='create, edit: its one-line summary ("" clears it)')
    text = parser.add_mutually_exclusive_group()
    text.add_argument("--text-file", type=Path, help="create, edit: the text, from this file")
    text.add_argument(
        "--text-stdin", action="store_true", help="create, edit: the text, from stdin"
    )
    parser.add_argument("--frozen", action="store_true", help="create: with agent writes off")
    parser.add_argument(
        "--if-match",
        metavar="REV",
        help="edit, freeze, unfreeze, remove: only if the document is at this revision",
    )
    parser.add_argument("--out", type=Path, help="export: a folder for one <id>.json each")


def run(args: argparse.Namespace) -> int:
    if args.action in _NEEDS_ID and not args.id:
        raise SelectionError(f"doc {args.action} needs the document's id")
    if args.action not in _NEEDS_ID and args.id:
        raise SelectionError(f"doc {args.action} takes no id")
    store = _open(args)
    try:
        return _VERBS[args.action](args, store)
    finally:
        store.close()


def _open(args: argparse.Namespace) -> DocumentStore:
    backend = getattr(args, "backend", "file")
    if backend not in ("file", "postgres"):
        raise SelectionError(
            "document memory lives on the file and postgres backends, not on the memory service"
        )
    if args.spec is not None:
        spec = args.spec  # create may come before the spec's first session
    elif backend == "postgres":
        spec = database_spec(args.dsn, args.tenant, None)  # the one the tenant keeps there
    else:
        spec = _only_spec(args.root, args.tenant)
    layout = select_remote(args.root, spec, args.tenant, None).layout
    tenant = None if args.tenant is None else Tenant(args.tenant, layout.root)
    memory = FactsData(backend=backend, dsn=args.dsn if backend == "postgres" else None)
    return open_document_store(memory, layout, tenant=tenant, now=utc_now)


def _only_spec(root: Path, tenant: str | None) -> str:
    """The one spec whose memory lives under ``root`` (``--spec`` otherwise)."""
    try:
        return select(root, None, tenant, None).layout.spec_name
    except SelectionError:
        state = select_remote(root, "-", tenant, None).layout.root
        names = sorted(p.name for p in (state / DOCUMENTS_DIRNAME).glob("*") if p.is_dir())
        if len(names) == 1:
            return names[0]
    raise SelectionError(
        f"pass --spec NAME: no single spec keeps memory under {root / SPECWIRE_DIRNAME}"
    )


# -- reads -----------------------------------------------------------------------------------


def _every(store: DocumentStore) -> list[Document]:
    found: list[Document] = []
    after = None
    while True:
        page = store.page(after, PAGE_SIZE)
        found.extend(page.documents)
        if page.next_after is None:
            return found
        after = page.next_after


def _list(args: argparse.Namespace, store: DocumentStore) -> int:
    documents = _every(store)
    if args.json:
        print_json({"documents": [document.meta() for document in documents]})
        return 0
    print_table(
        [
            {
                "id": document.id,
                "revision": document.revision,
                "agent": "frozen" if document.frozen else "writes",
                "updated": document.updated_at,
                "bytes": str(document.bytes),
                "title": document.title,
            }
            for document in documents
        ],
        COLUMNS,
    )
    return 0


def _show(args: argparse.Namespace, store: DocumentStore) -> int:
    document = store.get(args.id)
    if args.json:
        print_json(document.to_data())
        return 0
    writer = document.writer.kind + (
        f" ({document.writer.session_id})" if document.writer.session_id else ""
    )
    lines = [
        f"id:       {document.id}",
        f"title:    {document.title}",
        f"summary:  {document.summary}",
        f"revision: {document.revision}",
        f"agent:    {'writes disabled (frozen)' if document.frozen else 'writes enabled'}",
        f"updated:  {document.updated_at} by {writer}",
        f"bytes:    {document.bytes}",
        "",
        document.text,
    ]
    sys.stdout.write(_printable("\n".join(lines)).rstrip("\n") + "\n")
    return 0


def _export(args: argparse.Namespace, store: DocumentStore) -> int:
    documents = sorted(_every(store), key=lambda document: document.id)
    if args.out is None:
        for document in documents:
            sys.stdout.write(json.dumps(document.to_data(), ensure_ascii=True, sort_keys=True))
            sys.stdout.write("\n")
        return 0
    out = args.out.resolve()
    for document in documents:
        body = json.dumps(document.to_data(), ensure_ascii=False, sort_keys=True, indent=1)
        write_atomic(out / f"{document.id}.json", body + "\n", root=out)
    sys.stderr.write(f"exported {len(documents)} document(s) to {out}\n")
    return 0


# -- changes ---------------------------------------------------------------------------------


def _text(args: argparse.Namespace) -> str | None:
    if args.text_stdin:
        return sys.stdin.read()
    if args.text_file is not None:
        try:
            return Path(args.text_file).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise SelectionError(f"{args.text_file} is not UTF-8 text") from None
    return None


def _create(args: argparse.Namespace, store: DocumentStore) -> int:
    if args.title is None:
        raise SelectionError("doc create needs --title")
    if args.if_match is not None:
        raise SelectionError("doc create takes no --if-match: it refuses an id that was used")
    text = _text(args) or ""
    frozen = " (frozen)" if args.frozen else ""
    confirm(
        f"create document {args.id}{frozen} in {store.where}: {json.dumps(args.title)}, "
        f"{len(text.encode('utf-8'))} bytes of text",
        assume_yes=args.yes,
    )
    document = store.create(
        args.id, title=args.title, text=text, summary=args.summary or "", frozen=args.frozen
    )
    report(args, document.meta(), f"created {document.id} at revision {document.revision}")
    return 0


def _edit(args: argparse.Namespace, store: DocumentStore) -> int:
    text = _text(args)
    if text is None and args.summary is None and args.title is None:
        raise SelectionError("doc edit needs --text-file, --text-stdin, --summary or --title")
    revision = _expected(args, store)
    changes = [
        what
        for what, given in (("text", text), ("summary", args.summary), ("title", args.title))
        if given is not None
    ]
    confirm(
        f"edit document {args.id} (revision {revision}) in {store.where}: {', '.join(changes)}",
        assume_yes=args.yes,
    )
    document = store.get(args.id)
    if text is not None or args.summary is not None:
        document = store.replace(
            args.id,
            text=document.text if text is None else text,
            summary=args.summary,
            if_match=revision,
            writer=OWNER,
        )
        revision = document.revision
    if args.title is not None:
        document = store.patch(args.id, title=args.title, if_match=revision)
    report(args, document.meta(), f"edited {document.id}: now at revision {document.revision}")
    return 0


def _policy(agent_writes: AgentWrites) -> Verb:
    word = "freeze" if agent_writes == "disabled" else "unfreeze"

    def verb(args: argparse.Namespace, store: DocumentStore) -> int:
        revision = _expected(args, store)
        confirm(
            f"{word} document {args.id} (revision {revision}) in {store.where}: agent writes "
            f"{agent_writes}",
            assume_yes=args.yes,
        )
        document = store.patch(args.id, agent_writes=agent_writes, if_match=revision)
        state = "frozen" if document.frozen else "unfrozen"
        report(args, document.meta(), f"{state} {document.id}: revision {document.revision}")
        return 0

    return verb


def _remove(args: argparse.Namespace, store: DocumentStore) -> int:
    revision = _expected(args, store)
    confirm(
        f"remove document {args.id} (revision {revision}) from {store.where}: its title, text "
        "and summary are deleted and its id stays reserved",
        assume_yes=args.yes,
    )
    store.remove(args.id, if_match=revision)
    report(args, {"id": args.id, "removed": True}, f"removed {args.id}")
    return 0


def _expected(args: argparse.Namespace, store: DocumentStore) -> str:
    """The revision a change is conditional on: ``--if-match``, else the current one."""
    if args.if_match is not None:
        return str(args.if_match)
    return store.get(args.id).revision


def _printable(text: str) -> str:
    """Stored text on a terminal: control characters escaped, lines and tabs kept."""
    return "".join(
        char if char.isprintable() or char in "\n\t" else f"\\u{ord(char):04x}" for char in text
    )


_VERBS: Final[dict[str, Verb]] = {
    "list": _list,
    "show": _show,
    "create": _create,
    "edit": _edit,
    "freeze": _policy("disabled"),
    "unfreeze": _policy("enabled"),
    "export": _export,
    "remove": _remove,
}

"""``codegen memory state export --to DIR --backend postgres``: the state documents a
PostgreSQL-state bundle keeps in the database (continuity, trash, wiki, dream state; one
tenant's spec), written as the file layout a file-backed bundle reads: ``DIR/state/<spec>/…``,
``DIR/wiki/<spec>/…``, ``DIR/trash/<ts>/…``. Pass ``--to FOLDER/.specwire`` (or a tenant's
root) to get a folder a ``memory.state: files`` bundle continues in.

Each file gets exactly the text stored (mode 0600, written atomically, never through a link);
a file already at a destination is never overwritten: the export is refused, naming it, and
nothing is written (the same text already there counts as exported).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.fs.fenced import write_atomic
from specwire.runtime.owner.output import print_json
from specwire.runtime.owner.selection import Selection, SelectionError

if TYPE_CHECKING:
    from specwire.runtime.pg.volume import PostgresVolume


def open_state_volume(args: argparse.Namespace, selection: Selection) -> PostgresVolume | None:
    """The database volume of the selected tenant's spec with ``--backend postgres``; None
    (files under ``--root``) with the file backend. The http backend keeps no state."""
    backend = getattr(args, "backend", "file")
    if backend == "file":
        return None
    if backend != "postgres":
        raise SelectionError(
            f"--backend {backend} holds facts only: continuity and the wiki live under --root "
            "or in PostgreSQL (--backend postgres)"
        )
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool
    from specwire.runtime.pg.volume import PostgresVolume

    pool = shared_postgres_pool(FactsData(backend="postgres", dsn=args.dsn))
    return PostgresVolume(
        pool,
        selection.layout.root,
        tenant=args.tenant if args.tenant is not None else DEFAULT_TENANT,
        spec=selection.layout.spec_name,
    )


def export_documents(volume: PostgresVolume, destination: Path) -> list[str]:
    """Write every document of ``volume`` under ``destination``; the relative paths written.
    Refused (nothing written) when a different file is at one of them."""
    pending: list[tuple[Path, str]] = []
    written: list[str] = []
    documents = volume.texts(volume.root)
    for key, _, _ in documents:
        if not _relative(key):
            raise SelectionError(
                f"{volume.where} holds a document at {key!r}, which is not a path inside the "
                "export folder; nothing was written"
            )
    for key, text, _ in documents:
        target = destination / key
        existing = _existing(target)
        if existing is None:
            pending.append((target, text))
            written.append(key)
        elif existing != text.encode("utf-8"):
            raise SelectionError(
                f"{target} exists with other content: export into an empty folder; nothing "
                "was written"
            )
    destination.mkdir(parents=True, exist_ok=True, mode=0o700)
    for target, text in pending:
        write_atomic(target, text, root=destination)
    return written


def _relative(key: str) -> bool:
    """Whether ``key`` is a path the runtime writes: relative, one name per part (none empty,
    ``.`` or ``..``). The runtime never stores another; a row written past it must not steer
    the export out of its folder."""
    return all(part not in ("", ".", "..") for part in key.split("/"))


def _existing(target: Path) -> bytes | None:
    if target.is_symlink():
        raise SelectionError(f"{target} is a symbolic link: export into an empty folder")
    if not target.exists():
        return None
    if not target.is_file():
        raise SelectionError(f"{target} is not a file: export into an empty folder")
    return target.read_bytes()


def run(args: argparse.Namespace, selection: Selection) -> int:
    volume = open_state_volume(args, selection)
    if volume is None:
        raise SelectionError(
            "state export reads the database: pass --backend postgres (a file-backed bundle's "
            "state already is the file layout, under --root)"
        )
    if args.to is None:
        raise SelectionError("state export needs --to DIR")
    written = export_documents(volume, args.to)
    if args.json:
        print_json({"exported": written, "to": str(args.to)})
    else:
        sys.stdout.write(f"exported {len(written)} file(s) from {volume.where} to {args.to}\n")
    return 0

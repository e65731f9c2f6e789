"""Which fact backend an owner's command works on: ``--backend file|postgres|http``.

The same keys as the spec's ``memory`` block, as secret references resolved from the
environment (never a value on the command line): ``--dsn`` (default ``$DATABASE_URL``) for
``postgres``; ``--url`` and ``--token`` (default ``$MEMORY_TOKEN``) for ``http``. The remote
backends connect as the bundle does (``runtime.facts.providers.connect``), scoped to the
tenant (``--tenant``, or the targets without tenants' own) and the spec.

A command asks the backend for the protocol it needs (``providers.admin``); a backend without
it answers one line, e.g. "export is not part of the HTTP memory contract".
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.fragment import TENANTS_ROOT_ENV
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.facts.providers.admin import (
    FactAdmin,
    FactExporter,
    FactImporter,
    FactLister,
    FactRestorer,
    FactSweeper,
    QuarantineReader,
    UnsupportedOperation,
    missing,
)
from specwire.runtime.facts.providers.local_admin import LocalFactAdmin
from specwire.runtime.facts.providers.protocol import FactProvider
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.selection import Selection, SelectionError

BACKENDS = ("file", "postgres", "http")
DEFAULT_DSN = "$DATABASE_URL"
DEFAULT_TOKEN = "$MEMORY_TOKEN"
_CONTRACTS = {
    "file": "the file store",
    "postgres": "the PostgreSQL backend",
    "http": "the HTTP memory contract",
}


def add_backend_options(
    parser: argparse.ArgumentParser, default: Callable[[object], object]
) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=default("file"),
        help="where the facts live, as the spec's memory.backend (default: file)",
    )
    parser.add_argument(
        "--dsn",
        default=default(DEFAULT_DSN),
        metavar="$VAR",
        help=f"postgres: the variable holding the connection string (default: {DEFAULT_DSN})",
    )
    parser.add_argument(
        "--url", default=default(None), help="http: the memory service's URL (or $VAR)"
    )
    parser.add_argument(
        "--token",
        default=default(DEFAULT_TOKEN),
        metavar="$VAR",
        help=f"http: the variable holding the token (default: {DEFAULT_TOKEN})",
    )


def is_remote(args: argparse.Namespace) -> bool:
    return getattr(args, "backend", "file") != "file"


@dataclass(frozen=True)
class OwnerFacts:
    """An open backend: the provider (``FactProvider``) and whichever admin protocols it
    implements; ``where`` names it in messages."""

    backend: Any
    name: str
    where: str

    @property
    def provider(self) -> FactProvider:
        provider: FactProvider = self.backend
        return provider

    def refusal(self, what: str) -> UnsupportedOperation:
        return missing(what, _CONTRACTS[self.name])

    def lister(self, what: str) -> FactLister:
        if isinstance(self.backend, FactLister):
            return self.backend
        raise self.refusal(what)

    def admin(self, what: str) -> FactAdmin:
        if isinstance(self.backend, FactAdmin):
            return self.backend
        raise self.refusal(what)

    def exporter(self, what: str) -> FactExporter:
        if isinstance(self.backend, FactExporter):
            return self.backend
        raise self.refusal(what)

    def importer(self, what: str) -> FactImporter:
        if isinstance(self.backend, FactImporter):
            return self.backend
        raise self.refusal(what)

    def restorer(self, what: str) -> FactRestorer:
        if isinstance(self.backend, FactRestorer):
            return self.backend
        raise self.refusal(what)

    def sweeper(self, what: str) -> FactSweeper:
        if isinstance(self.backend, FactSweeper):
            return self.backend
        raise self.refusal(what)

    def quarantine(self, what: str) -> QuarantineReader:
        if isinstance(self.backend, QuarantineReader):
            return self.backend
        raise self.refusal(what)

    @property
    def store(self) -> FactStore | None:
        """The embedded store, on the file backend only."""
        return self.backend.store if isinstance(self.backend, LocalFactAdmin) else None


@contextmanager
def open_facts(
    args: argparse.Namespace,
    selection: Selection,
    *,
    create: bool = False,
    now: Clock = utc_now,
) -> Iterator[OwnerFacts]:
    """The backend ``args`` name, for ``selection``'s spec (and tenant). ``create``: the
    file store may be created (import); otherwise a missing file is an error."""
    with open_backend(
        getattr(args, "backend", "file"),
        selection,
        dsn=getattr(args, "dsn", None),
        url=getattr(args, "url", None),
        token=getattr(args, "token", None),
        tenant=getattr(args, "tenant", None),
        create=create,
        now=now,
    ) as facts:
        yield facts


@contextmanager
def open_backend(
    backend: str,
    selection: Selection,
    *,
    dsn: str | None,
    url: str | None,
    token: str | None,
    tenant: str | None,
    create: bool = False,
    now: Clock = utc_now,
    url_option: str = "--url",
) -> Iterator[OwnerFacts]:
    """``backend`` (``file``, ``postgres`` or ``http``) with its connection options (secret
    references, as ``add_backend_options`` takes them), for ``selection``'s spec and
    ``tenant``. ``create``: the file store may be created."""
    if backend == "file":
        path = selection.facts_db
        if not create and not path.exists():
            raise SelectionError(f"no fact store at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        admin = LocalFactAdmin(FactStore.open(path, now=now))
        try:
            yield OwnerFacts(admin, "file", str(path))
        finally:
            admin.store.close()
        return
    from specwire.runtime.facts.providers.connect import connect_remote

    memory = FactsData(
        backend=backend,
        dsn=dsn if backend == "postgres" else None,
        url=url if backend == "http" else None,
        token=token if backend == "http" else None,
    )
    if backend == "http" and not url:
        raise SelectionError(
            f"--backend http needs {url_option} (the memory service's URL or $VAR)"
        )
    remote = connect_remote(
        memory,
        spec=selection.layout.spec_name,
        tenant=None if tenant is None else Tenant(tenant, selection.layout.root),
        embedder=None,
        now=now,
    )
    try:
        yield OwnerFacts(remote.provider, backend, remote.description)
    finally:
        remote.release()


def remote_spec(root: Path, spec: str | None, tenant: str | None) -> str:
    """The spec whose remote facts a command works on: ``--spec``, else the one spec whose
    local state lives under ``root`` (continuity, wiki)."""
    if spec is not None:
        return spec
    base = root / SPECWIRE_DIRNAME
    if tenant is not None:
        configured = os.environ.get(TENANTS_ROOT_ENV, "").strip()
        base = (Path(configured) if configured else base / "tenants") / tenant
    names = sorted({p.name for p in (base / "state").glob("*") if p.is_dir()})
    if len(names) == 1:
        return names[0]
    raise SelectionError("pass --spec NAME: the facts live in a database, not under --root")

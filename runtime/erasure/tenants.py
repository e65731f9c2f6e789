"""Which tenants an erasure covers, and when a subject's id needs one named.

A managed bundle keeps each tenant's memory apart (``<tenants root>/<tenant>/`` on files, a
``tenant`` column in PostgreSQL), and its user and conversation ids are the tenant's own: "ana"
of tenant acme and "ana" of tenant globex are two people. Erasing ``--user ana`` over a store
that holds several tenants would delete both; ``tenant_problem`` refuses it unless the owner
names one tenant (``--tenant ID``) or says every tenant is meant (``--all-tenants``). A subject
given as text (``--subject``, ``--regex``, ``--id``) names no tenant's id: erasing every mention
of it everywhere is what the right to be forgotten asks, and it keeps doing so by default.

A plain (single-tenant) state root's memory is named as PostgreSQL names it,
``single.tenant`` (``runtime.facts.providers.connect.DEFAULT_TENANT``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.core.tenancy import TENANT_ID_RE
from specwire.runtime.facts.providers.connect import DEFAULT_TENANT

# The scopes whose ids a managed host takes from each tenant's requests.
PER_TENANT_SCOPES: Final = ("user", "conversation")
TENANTS_DIRNAME: Final = "tenants"
# The folders a state root keeps memory in (``runtime.core.paths.StoreLayout``).
MEMORY_DIRNAMES: Final = (
    "facts",
    "state",
    "sessions",
    "sessions-index",
    "wiki",
    "documents",
    "trash",
)


def tenants_under(root: Path, tenants_root: Path | None = None) -> list[str]:
    """The tenants whose memory a walk of the state root ``root`` reaches, sorted: each tenant
    folder of ``root/tenants`` (and of ``tenants_root`` when it lies inside ``root``: a walk
    reaches it too), and ``single.tenant`` when ``root`` itself keeps memory."""
    found = set(tenant_folders(root / TENANTS_DIRNAME))
    if tenants_root is not None and tenants_root.is_relative_to(root):
        found.update(tenant_folders(tenants_root))
    if any(_holds_something(root / name) for name in MEMORY_DIRNAMES):
        found.add(DEFAULT_TENANT)
    return sorted(found)


def tenant_folders(folder: Path) -> list[str]:
    """The tenants with a folder in ``folder`` (a managed bundle's tenants root), sorted: a
    tenant folder is named by its id; a symbolic link is not one."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(
        entry.name
        for entry in folder.iterdir()
        if TENANT_ID_RE.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink()
    )


def _holds_something(folder: Path) -> bool:
    if not folder.is_dir() or folder.is_symlink():
        return False
    return any(True for _ in folder.iterdir())


CLI_REMEDY: Final = (
    "name one with --tenant ID, or pass --all-tenants to erase that id in every tenant; "
    "nothing was erased"
)


def tenant_problem(
    key: ScopeKey | None,
    tenants: Sequence[str],
    *,
    tenant: str | None,
    all_tenants: bool,
    remedy: str = CLI_REMEDY,
) -> str | None:
    """Why erasing ``key`` over a store holding ``tenants`` needs the owner to say which
    tenant (one line, ending with ``remedy``), or None: only a user's or conversation's id,
    only with no tenant named and ``all_tenants`` not given, and only when more than one
    tenant is there."""
    if key is None or key.scope not in PER_TENANT_SCOPES or tenant is not None or all_tenants:
        return None
    if len(tenants) <= 1:
        return None
    listed = ", ".join(tenants[:5]) + (", …" if len(tenants) > 5 else "")
    return (
        f"--{key.scope}: {key.scope} ids are per tenant and this store holds {len(tenants)} "
        f"tenants ({listed}): {remedy}"
    )

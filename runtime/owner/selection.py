"""Which stores a command works on: ``--root``, ``--spec``, ``--tenant``, ``--session``."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.core.fragment import TENANTS_ROOT_ENV
from specwire.runtime.core.paths import SPECWIRE_DIRNAME, StoreLayout
from specwire.runtime.core.tenancy import TENANT_ID_RE, build_tenant


class SelectionError(Exception):
    """The selectors name no store (or several): one line for the owner."""


@dataclass(frozen=True)
class Selection:
    layout: StoreLayout
    session: str | None  # a conversation's session id, for session-scoped continuity

    @property
    def facts_db(self) -> Path:
        return self.layout.facts_db


def passes_filters(args: argparse.Namespace, text: str, tags: Sequence[str]) -> bool:
    """Whether a fact (or a held write) passes ``list``'s ``--tag`` and ``--text`` filters."""
    return (args.tag is None or args.tag in tags) and (
        args.text is None or args.text.casefold() in text.casefold()
    )


def state_root(root: Path, tenant: str | None) -> Path:
    """The state directory the selectors name (it must exist)."""
    state = _state_root(root, tenant)
    if not state.is_dir():
        raise SelectionError(f"no state directory at {state} (run the agent there first)")
    return state


def named_state_root(root: Path, tenant: str | None) -> Path:
    """The state directory the selectors name, which may not exist (a fleet on PostgreSQL
    keeps none on the owner's machine)."""
    return _state_root(root, tenant)


def select(root: Path, spec: str | None, tenant: str | None, session: str | None) -> Selection:
    state = _state_root(root, tenant)
    if not state.is_dir():
        raise SelectionError(f"no state directory at {state} (run the agent there first)")
    spec_name = spec if spec is not None else _only_spec(state)
    if session is not None and not session.startswith("sess_"):
        raise SelectionError(
            f"--session {session!r}: a session id looks like sess_0123456789abcdef"
        )
    return Selection(StoreLayout(state, spec_name), session)


def select_remote(root: Path, spec: str, tenant: str | None, session: str | None) -> Selection:
    """Like ``select`` for facts kept outside ``root`` (a database): the state directory
    need not exist, and ``spec`` is given."""
    if session is not None and not session.startswith("sess_"):
        raise SelectionError(
            f"--session {session!r}: a session id looks like sess_0123456789abcdef"
        )
    return Selection(StoreLayout(_state_root(root, tenant), spec), session)


def _state_root(root: Path, tenant: str | None) -> Path:
    if tenant is None:
        return (root / SPECWIRE_DIRNAME).resolve()
    if not TENANT_ID_RE.fullmatch(tenant):
        raise SelectionError(f"--tenant {tenant!r} is not a tenant id ({TENANT_ID_RE.pattern})")
    return build_tenant(tenant, tenants_root(root)).root


def tenants_root(root: Path) -> Path:
    """The folder a managed bundle run in ``root`` keeps its tenants' roots in (resolved):
    ``$SPECWIRE_TENANTS_ROOT``, else ``root/.specwire/tenants``."""
    configured = os.environ.get(TENANTS_ROOT_ENV, "").strip()
    tenants = Path(configured) if configured else root / SPECWIRE_DIRNAME / "tenants"
    return tenants.resolve()


def _only_spec(state: Path) -> str:
    """The one spec whose stores live here (``--spec`` is needed when there are several)."""
    names = sorted(
        {path.stem for path in (state / "facts").glob("*.sqlite3")}
        | {path.name for path in (state / "state").glob("*") if path.is_dir()}
    )
    if len(names) == 1:
        return names[0]
    if not names:
        raise SelectionError(f"no agent memory under {state}")
    raise SelectionError(
        f"several specs keep memory under {state}: pass --spec ({', '.join(names)})"
    )

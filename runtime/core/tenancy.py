"""Tenancy fences: a tenant re-roots every store, and every path must stay inside its root."""

from __future__ import annotations

from pathlib import Path

from specwire.runtime.core.errors import TenancyError
from specwire.runtime.core.fragment import TENANT_ID_PATTERN
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern

TENANT_ID_RE = LazyPattern(TENANT_ID_PATTERN)


@lazy_dataclass(frozen=True)
class Tenant:
    """One tenant of a serving host: its id and the root every store of its lives under."""

    id: str
    root: Path  # absolute; every store of this tenant lives under it

    @property
    def workspace(self) -> Path:
        """Where the tenant's agent works (its file tools' root): inside the tenant's root but
        beside, never above, the stores, so a file tool cannot reach the session logs, facts
        or continuity files the proof ladder trusts."""
        return self.root / "workspace"

    def __post_init__(self) -> None:
        if not TENANT_ID_RE.fullmatch(self.id):
            raise TenancyError(f"invalid tenant id {self.id!r}: must match {TENANT_ID_RE.pattern}")
        if not self.root.is_absolute():
            raise TenancyError(f"tenant root must be absolute (got {self.root})")


def build_tenant(tenant_id: str, tenants_root: Path) -> Tenant:
    if not TENANT_ID_RE.fullmatch(tenant_id):
        raise TenancyError(f"invalid tenant id {tenant_id!r}: must match {TENANT_ID_RE.pattern}")
    folder = tenants_root / tenant_id
    if folder.is_symlink():
        # A link could lead into another tenant's folder: every store would be theirs.
        raise TenancyError(f"tenant {tenant_id!r}: its folder {folder} is a symbolic link")
    return Tenant(tenant_id, folder.resolve())


def assert_inside(path: Path, root: Path) -> Path:
    """Resolve ``path`` and refuse it unless it stays inside ``root`` (symlinks followed)."""
    return resolve_inside(path, root)[0]


def resolve_inside(path: Path, root: Path) -> tuple[Path, Path]:
    """``assert_inside``, also returning the resolved root: ``(path, root)``, both resolved."""
    root_resolved = root.resolve()
    resolved = root_resolved if path == root else path.resolve()
    # Both are absolute and normalized: inside means the root's parts begin the path's (what
    # ``root_resolved in resolved.parents`` says, without building every parent).
    if resolved.parts[: len(root_resolved.parts)] != root_resolved.parts:
        raise TenancyError(f"cross-tenant access denied: {resolved} is outside {root_resolved}")
    return resolved, root_resolved

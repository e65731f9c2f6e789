"""Where each tier lives. One place, so wiring, hosts and tools agree.

Layout under the root (``<cwd>/.specwire`` or a tenant's root)::

    facts/<spec>.sqlite3        episodic facts
    state/<spec>/               continuity (focus.md, plans/, goals.yaml, handoff.md, .lock)
    state/<spec>/sessions/<sess_…>/   continuity with session scope
    state/<spec>/sessions/<user|conversation>-<sha256>/   continuity with audience scope
    wiki/<spec>/                wiki (articles/<slug>.md, versions/<slug>/<n>.md, .lock)
    documents/<spec>/           document memory (<id>.json, .lock; ``runtime.documents.files``)
    sessions/<sess_…>.jsonl     session event logs
    sessions/<sess_…>.lock      held while a turn of that conversation runs (per-turn hosts)
    sessions-index/<spec>/<sess_…>.json   session summaries (``memory.sessionRecall``)
    trash/<timestamp>/          cleared continuity files (restorable)
    retention.json              session logs pinned as proof evidence (``.retention.lock``)

Every ``.lock`` is a ``runtime.fs.locking.FileLock`` (an ``flock``; the file exists only while
held or after its holder was killed, and then blocks nobody). Only regular files are opened
in these folders (``runtime.fs.safe_open``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from specwire.runtime.core.fragment import SPECWIRE_DIRNAME as SPECWIRE_DIRNAME
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.core.tenancy import Tenant, assert_inside


@lazy_methods_dataclass(frozen=True)
class StoreLayout:
    """Where one spec's stores live under a ``.specwire`` root (or a tenant's root)."""

    root: Path
    spec_name: str

    @classmethod
    def for_cwd(cls, cwd: Path, spec_name: str, tenant: Tenant | None = None) -> StoreLayout:
        root = tenant.root if tenant is not None else (cwd / SPECWIRE_DIRNAME).resolve()
        return cls(root, spec_name)

    def _inside(self, path: Path) -> Path:
        return assert_inside(path, self.root)

    @property
    def facts_db(self) -> Path:
        return self._inside(self.root / "facts" / f"{storage_name(self.spec_name)}.sqlite3")

    @property
    def state_dir(self) -> Path:
        return self._inside(self.root / "state" / storage_name(self.spec_name))

    def session_state_dir(self, session_scope: str) -> Path:
        return self._inside(self.state_dir / "sessions" / storage_name(session_scope))

    def audience_state_dir(self, key: ScopeKey) -> Path:
        """One person's (or one anonymous conversation's) continuity: a session-scoped folder
        named by ``audience_folder``, so the dream and the owner's commands find it there."""
        return self.session_state_dir(audience_folder(key))

    @property
    def wiki_dir(self) -> Path:
        return self._inside(self.root / "wiki" / storage_name(self.spec_name))

    @property
    def sessions_dir(self) -> Path:
        return self._inside(self.root / "sessions")

    @property
    def sessions_index_dir(self) -> Path:
        return self._inside(self.root / "sessions-index" / storage_name(self.spec_name))

    @property
    def trash_dir(self) -> Path:
        return self._inside(self.root / "trash")

    @property
    def retention_file(self) -> Path:
        return self._inside(self.root / "retention.json")


def audience_folder(key: ScopeKey) -> str:
    """The folder name of an audience's continuity: its scope and the SHA-256 of its label.

    A subject may hold any character (a managed ``user`` of up to 200), so it is never used as a
    name: the full digest keeps two people from ever sharing a folder, on files and in a
    ``memory.state: postgres`` volume alike, and cannot be taken for a ``sess_…`` folder."""
    digest = hashlib.sha256(key.label().encode("utf-8")).hexdigest()
    return f"{key.scope}-{digest}"

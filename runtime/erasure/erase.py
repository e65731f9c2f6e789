"""``erase_subject``: erase a subject from every tier under a state root, then prove it.

Order: every fact store (rows, indexes, vacuum), then every other file (session logs,
continuity, wiki, trash), then the files the runtime writes beside the state root in the agent's
folder (research reports: ``research-runs/``), then verification — the raw bytes of every file
under the root and those folders, and every file name, are searched for the subject again —
then the receipt. A caller with tiers elsewhere (the PostgreSQL fact database) reaches them
first and passes their counts in: a receipt only ever names tiers that were reached.

With a scope ``key`` (``codegen memory erase --user ID``: one person's ``user`` key) every fact,
tier note, held write and session record stored in that key goes too, whatever its text, as
does the working memory kept for that person or conversation (continuity scope ``audience``:
``state/<spec>/sessions/<user|conversation>-<sha256>/`` and its trash copies), and ``subject``
is the key's id, so its mentions (a session log's ``"user": "U123"``) are redacted everywhere.
Everywhere is the root given: a managed tenant's root (``--tenant ID``) holds that tenant's
memory only; the caller refuses a per-tenant id over a root of several tenants
(``runtime.erasure.tenants``).

An erasure that reached only the database (no state root on this machine) gets a receipt of
its own (``database_receipt``), kept where the caller says. The receipt (JSON, under
``<root>/erasures/``) records what was erased in which tier and for
which tenants (``tenants``), the counts, the scopes the deleted facts and held writes were in
(``scopes``: scope names and counts, never a subject; ``scope``: the scope of the erased key),
a keyed hash of the subject (``runtime.erasure.receipt``) — never the subject, nor a plain hash
of it — the time, and the verification's outcome (file names with the subject redacted from
them). Research reports written elsewhere with ``--out`` are not known to the runtime and are
not covered.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.paths import SPECWIRE_DIRNAME, audience_folder
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.erasure.fact_tier import erase_from_store, is_fact_store
from specwire.runtime.erasure.file_tier import redact_files, regular_files
from specwire.runtime.erasure.receipt import subject_hmac
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.erasure.tenants import tenants_under
from specwire.runtime.fs.atomic import replace_atomically

RECEIPTS_DIR = "erasures"
# ``StoreLayout.sessions_index_dir``'s folder: ``sessions-index/<spec>/<sess_…>.json``.
SESSIONS_INDEX_DIRNAME: Final = "sessions-index"
# Folders the runtime writes in the agent's folder, beside its state root ``.specwire/``.
OUTPUT_DIRS: Final = ("research-runs",)


@dataclass
class Verification:
    files_searched: int = 0
    hits: dict[str, int] = field(default_factory=dict)  # relative path -> occurrences

    @property
    def clean(self) -> bool:
        return not self.hits


@dataclass
class ErasureReceipt:
    subject_hmac: str
    kind: str
    at: str
    tiers: dict[str, dict[str, int]]
    verification: Verification
    path: Path | None = None
    # The scope of the key erased whole (``user`` for ``--user ID``); never its subject.
    scope: str | None = None
    # The tenants the erasure covered (``runtime.erasure.tenants``): one with ``--tenant``.
    tenants: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "subjectHmacSha256": self.subject_hmac,
            "match": self.kind,
            "scope": self.scope,
            "tenants": list(self.tenants),
            "at": self.at,
            "tiers": self.tiers,
            "verification": {
                "filesSearched": self.verification.files_searched,
                "hits": sum(self.verification.hits.values()),
                "filesWithHits": sorted(self.verification.hits),
            },
        }


FACT_COUNTS = ("facts", "notes", "quarantined", "tombstoneReasons", "vectors", "snapshots")


def erase_subject(
    root: Path,
    subject: Subject,
    *,
    now: Clock = utc_now,
    reached: Mapping[str, dict[str, int]] | None = None,
    key: ScopeKey | None = None,
    reached_scopes: Mapping[str, int] | None = None,
    tenants: Sequence[str] | None = None,
) -> ErasureReceipt:
    """Erase ``subject`` under ``root`` and the runtime's outputs beside it (with ``key``, that
    scope key's facts, notes and held writes too); ``reached``: the counts of tiers the caller
    already erased elsewhere, recorded in the receipt as given, and ``reached_scopes`` what
    they deleted per scope (added to the receipt's ``scopes``). ``tenants``: the tenants the
    receipt names as covered (default: those a walk of ``root`` reaches, ``tenants_under``;
    a caller erasing one tenant's root names it)."""
    keyed = subject_hmac(root, subject)  # first: a key that cannot be made stops it all
    # Every count present even with no fact store under ``root`` (facts in PostgreSQL).
    facts: dict[str, int] = dict.fromkeys(FACT_COUNTS, 0)
    stores = [
        path for path in regular_files(root) if path.suffix == ".sqlite3" and is_fact_store(path)
    ]
    scopes: dict[str, int] = dict(reached_scopes or {})
    for store in stores:
        done = erase_from_store(store, subject, key)
        for kind, value in done.counts.items():
            facts[kind] = facts.get(kind, 0) + value
        for scope, value in done.by_scope.items():
            scopes[scope] = scopes.get(scope, 0) + value
    facts["stores"] = len(stores)
    records = 0 if key is None else drop_session_records(root, key)
    personal = 0 if key is None else drop_person_continuity(root, key)
    edited = redact_files(root, subject)
    reports = sum(redact_files(folder, subject)["files"] for _, folder in output_dirs(root))
    tiers = {
        "facts": facts,
        "sessions": {
            "logs": edited["sessionLogs"],
            "lines": edited["sessionLines"],
            "records": records,
        },
        "files": {
            "continuityWikiTrash": edited["files"],
            "renamed": edited["renamed"],
            "personalContinuity": personal,
        },
        "outputs": {"researchReports": reports},
        "scopes": dict(sorted(scopes.items())),
        **(reached or {}),
    }
    verification = verify(root, subject)
    stamp = iso(now())
    covered = tuple(sorted(set(tenants if tenants is not None else tenants_under(root))))
    receipt = ErasureReceipt(
        keyed,
        subject.kind,
        stamp,
        tiers,
        verification,
        scope=None if key is None else key.scope,
        tenants=covered,
    )
    receipt.path = _write_receipt(root / RECEIPTS_DIR, receipt, subject)
    return receipt


def database_receipt(
    folder: Path,
    subject: Subject,
    *,
    reached: Mapping[str, dict[str, int]],
    key: ScopeKey | None = None,
    reached_scopes: Mapping[str, int] | None = None,
    tenants: Sequence[str] = (),
    now: Clock = utc_now,
) -> ErasureReceipt:
    """The receipt of an erasure that reached the database only (a fleet whose workers share
    nothing but PostgreSQL: no state root on this machine to walk, and none is made). It names
    the tiers ``reached`` and nothing else; ``folder`` keeps it and its key (``.erasure.key``,
    created once, as a state root's), so the owner can check a subject later."""
    keyed = subject_hmac(folder, subject)
    receipt = ErasureReceipt(
        keyed,
        subject.kind,
        iso(now()),
        {"scopes": dict(sorted((reached_scopes or {}).items())), **reached},
        Verification(),
        scope=None if key is None else key.scope,
        tenants=tuple(sorted(set(tenants))),
    )
    receipt.path = _write_receipt(folder, receipt, subject)
    return receipt


def drop_session_records(root: Path, key: ScopeKey) -> int:
    """Delete the session records (``memory.sessionRecall``) kept in ``key``: summaries of what
    that person's sessions said and remembered, erased whole with the key as its facts are (a
    redaction would leave their facts' text). The count deleted."""
    label = key.label()
    dropped = 0
    for path in regular_files(root):
        if path.suffix != ".json" or path.parent.parent.name != SESSIONS_INDEX_DIRNAME:
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("scope") == label:
            path.unlink()
            dropped += 1
    return dropped


def drop_person_continuity(root: Path, key: ScopeKey) -> int:
    """Delete the working memory kept for ``key`` (a managed person's, or an anonymous
    session's: continuity scope ``audience``), every spec's and its trash copies, whole, as its
    facts are: its focus and plans are theirs whatever their words. The count of files."""
    if key.scope not in ("user", "conversation"):
        return 0
    folder = audience_folder(key)
    dropped = 0
    emptied: set[Path] = set()
    for path in regular_files(root):
        parts = path.relative_to(root).parts
        for index in range(1, len(parts) - 2):
            if parts[index] == "sessions" and parts[index + 1] == folder and "state" in parts:
                path.unlink()
                dropped += 1
                emptied.add(root.joinpath(*parts[: index + 2]))
                break
    for top in sorted(emptied):
        for directory, _, _ in sorted(os.walk(top), key=lambda entry: -len(entry[0])):
            with contextlib.suppress(OSError):  # not empty: something else was put there
                os.rmdir(directory)
    return dropped


def output_dirs(root: Path) -> list[tuple[Path, Path]]:
    """(base, folder) for each runtime output folder beside a ``.specwire`` root that is a
    real folder (a symbolic link planted there is neither followed nor searched)."""
    if root.name != SPECWIRE_DIRNAME:
        return []
    found = []
    for name in OUTPUT_DIRS:
        folder = root.parent / name
        if folder.is_dir() and not folder.is_symlink():
            found.append((root.parent, folder))
    return found


def structure_names(root: Path) -> set[str]:
    """Spec and tenant names under ``root`` (store files and folders are named after them)."""
    names: set[str] = set()
    for directory, folders, files in os.walk(root, followlinks=False):
        kind = Path(directory).name
        if kind in ("state", "wiki", "tenants"):
            names.update(folders)
        elif kind == "facts":
            names.update(name.split(".sqlite3")[0] for name in files if ".sqlite3" in name)
    return names


def preview(root: Path, subject: Subject) -> Verification:
    """Where the subject is now (dry run): the same search verification runs afterwards."""
    return verify(root, subject)


def _searched(root: Path) -> list[tuple[Path, str]]:
    """Every file erasure covers, with the name it is reported under."""
    found = [(path, path.relative_to(root).as_posix()) for path in regular_files(root)]
    for base, folder in output_dirs(root):
        found += [(path, path.relative_to(base).as_posix()) for path in regular_files(folder)]
    return found


def verify(root: Path, subject: Subject) -> Verification:
    result = Verification()
    for path, relative in _searched(root):
        result.files_searched += 1
        try:
            data = path.read_bytes()
        except OSError:
            result.hits[relative] = result.hits.get(relative, 0)
            continue
        found = subject.count_in(data) + subject.count_in(relative.encode("utf-8"))
        if found:
            result.hits[relative] = found
    return result


def _write_receipt(folder: Path, receipt: ErasureReceipt, subject: Subject) -> Path:
    folder.mkdir(mode=0o700, exist_ok=True)
    name = "erasure-" + receipt.at.replace(":", "").replace("-", "").replace(".", "") + ".json"
    path = folder / name
    body = receipt.to_json()
    # A file still holding the subject may hold it in its name: the receipt never does.
    body["verification"]["filesWithHits"] = sorted(
        subject.redact(subject.redact_name(label))
        for label in body["verification"]["filesWithHits"]
    )
    data = json.dumps(body, indent=2, sort_keys=True) + "\n"
    replace_atomically(path, data.encode("utf-8"), mode=0o600)
    return path

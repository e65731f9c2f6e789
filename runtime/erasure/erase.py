"""``erase_subject``: erase a subject from every tier under a state root, then prove it.

Order: every fact store (rows, indexes, vacuum), then every other file (session logs,
continuity, wiki, trash), then the receipt, then verification: the raw bytes of every file
under the root, and every file name, are searched for the subject again. The receipt (JSON,
under ``<root>/erasures/``) records what was erased in which tier, the counts, the subject's
SHA-256 — never the subject — the time, and the verification's outcome.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specwire.runtime.erasure.fact_tier import erase_from_store, is_fact_store
from specwire.runtime.erasure.file_tier import redact_files, regular_files
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.sessions.log import Clock, iso, utc_now

RECEIPTS_DIR = "erasures"


@dataclass
class Verification:
    files_searched: int = 0
    hits: dict[str, int] = field(default_factory=dict)  # relative path -> occurrences

    @property
    def clean(self) -> bool:
        return not self.hits


@dataclass
class ErasureReceipt:
    subject_sha256: str
    kind: str
    at: str
    tiers: dict[str, dict[str, int]]
    verification: Verification
    path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "subjectSha256": self.subject_sha256,
            "match": self.kind,
            "at": self.at,
            "tiers": self.tiers,
            "verification": {
                "filesSearched": self.verification.files_searched,
                "hits": sum(self.verification.hits.values()),
                "filesWithHits": sorted(self.verification.hits),
            },
        }


FACT_COUNTS = ("facts", "quarantined", "tombstoneReasons", "vectors", "snapshots")


def erase_subject(root: Path, subject: Subject, *, now: Clock = utc_now) -> ErasureReceipt:
    # Every count present even with no fact store under ``root`` (facts in PostgreSQL).
    facts: dict[str, int] = dict.fromkeys(FACT_COUNTS, 0)
    stores = [
        path for path in regular_files(root) if path.suffix == ".sqlite3" and is_fact_store(path)
    ]
    for store in stores:
        for key, value in erase_from_store(store, subject).items():
            facts[key] = facts.get(key, 0) + value
    facts["stores"] = len(stores)
    edited = redact_files(root, subject)
    tiers = {
        "facts": facts,
        "sessions": {"logs": edited["sessionLogs"], "lines": edited["sessionLines"]},
        "files": {"continuityWikiTrash": edited["files"], "renamed": edited["renamed"]},
    }
    stamp = iso(now())
    receipt = ErasureReceipt(subject.digest, subject.kind, stamp, tiers, verify(root, subject))
    receipt.path = _write_receipt(root, receipt)
    return receipt


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


def verify(root: Path, subject: Subject) -> Verification:
    result = Verification()
    for path in regular_files(root):
        result.files_searched += 1
        relative = path.relative_to(root).as_posix()
        try:
            data = path.read_bytes()
        except OSError:
            result.hits[relative] = result.hits.get(relative, 0)
            continue
        found = subject.count_in(data) + subject.count_in(relative.encode("utf-8"))
        if found:
            result.hits[relative] = found
    return result


def _write_receipt(root: Path, receipt: ErasureReceipt) -> Path:
    folder = root / RECEIPTS_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    name = "erasure-" + receipt.at.replace(":", "").replace("-", "").replace(".", "") + ".json"
    path = folder / name
    data = json.dumps(receipt.to_json(), indent=2, sort_keys=True) + "\n"
    replace_atomically(path, data.encode("utf-8"), mode=0o600)
    return path

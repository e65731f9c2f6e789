"""The incremental build cache: a memo of ``spec bytes → bundle``, checked against the disk.

An entry says "compiling these spec bytes, with this compiler, gives a bundle named N whose files
have these SHA-256 digests". It is keyed on everything that shapes a bundle's bytes:

- the spec file's bytes and the path it was given as (messages and, possibly, headers name it);
- the compiler's own code: every ``.py`` and ``.j2`` file of ``ir``, ``emitters`` and
  ``templates`` and ``runtime/core/fragment.py`` (the contract), hashed by content, so an edited
  template or a new specwire version is a new key;
- the Python version and the distributions installed beside black, jinja2, pydantic and
  ruamel.yaml (their ``*.dist-info`` names, versions included: installing anything there starts
  a fresh cache, which is only slower, never wrong).

A build looks the spec up *before* loading it. A hit is used only when every file of the entry is
on disk with the recorded digest and the bundle directory holds no stale generated file; then
nothing is rendered, formatted, verified, compared or written. Anything else (a miss, an entry
that does not parse or whose own digest does not match, a bundle file edited or deleted) falls
back to a full compile, so ``--check`` and ``--diff`` stay truthful.

Entries live outside every output folder (never in a bundle directory, whose stale generated
files the writer removes): ``$SPECWIRE_CACHE_DIR``, else ``$XDG_CACHE_HOME/specwire``, else
``~/.cache/specwire``. They are written atomically (a temporary file, then a rename); a cache that
cannot be read or written is skipped silently: the build never depends on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from specwire.emitters.bundle import BundlePathError, check_path
from specwire.emitters.writer import stale_files

CACHE_ENV = "SPECWIRE_CACHE_DIR"
ENTRY_FORMAT = 1
# (label in the key, importable package)
_CODE_PACKAGES = (
    ("ir", "specwire.ir"),
    ("emitters", "specwire.emitters"),
    ("templates", "specwire.templates"),
)
_CODE_FILES = (("runtime/core", "specwire.runtime.core", "fragment.py"),)
_CODE_SUFFIXES = (".py", ".j2")
# Libraries whose version can change what a bundle contains (or whether it verifies).
_OUTPUT_LIBRARIES = ("black", "jinja2", "pydantic", "pydantic_core", "ruamel.yaml")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def default_cache_dir() -> Path | None:
    """Where entries live, or ``None`` when no home folder can be found."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "specwire"
    try:
        return Path.home() / ".cache" / "specwire"
    except RuntimeError:
        return None


def _package_dirs(name: str) -> list[Path]:
    """A package's folders, found without importing it."""
    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return sorted(Path(location) for location in spec.submodule_search_locations)


def _code_files() -> list[tuple[str, Path]]:
    files: list[tuple[str, Path]] = []
    for label, package in _CODE_PACKAGES:
        for folder in _package_dirs(package):
            for root, dirs, names in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(names):
                    if name.endswith(_CODE_SUFFIXES):
                        path = Path(root, name)
                        files.append((f"{label}/{path.relative_to(folder).as_posix()}", path))
    for label, package, name in _CODE_FILES:
        for folder in _package_dirs(package):
            if (folder / name).is_file():
                files.append((f"{label}/{name}", folder / name))
    return files


def _installed_distributions() -> list[str]:
    """``*.dist-info`` names in the folders the output libraries are installed in."""
    sites: set[Path] = set()
    for library in _OUTPUT_LIBRARIES:
        top = library.split(".")[0]
        for folder in _package_dirs(top):
            sites.add(folder.parent)
    found: list[str] = []
    for site in sorted(sites):
        try:
            found.extend(f"{site}:{n}" for n in os.listdir(site) if n.endswith(".dist-info"))
        except OSError:
            continue
    return sorted(found)


@cache
def compiler_fingerprint() -> str:
    """A digest of everything but the spec that shapes a bundle's bytes (see the module doc)."""
    digest = hashlib.sha256()
    digest.update(f"specwire build cache {ENTRY_FORMAT}\0{sys.version}\0".encode())
    for rel, path in _code_files():
        try:
            data = path.read_bytes()
        except OSError:
            data = b"<unreadable>"
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    for name in _installed_distributions():
        digest.update(f"dist\0{name}\0".encode())
    return digest.hexdigest()


def entry_key(spec_bytes: bytes, display_path: str) -> str:
    digest = hashlib.sha256()
    digest.update(f"{compiler_fingerprint()}\0{len(display_path)}\0{display_path}\0".encode())
    digest.update(spec_bytes)
    return digest.hexdigest()


@dataclass(frozen=True)
class Entry:
    """What compiling one spec gave: the bundle's name and its files' digests, in order."""

    key: str
    name: str
    files: tuple[tuple[str, str], ...]  # (relative POSIX path, SHA-256 of the bytes)

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(rel for rel, _ in self.files)

    def on_disk(self, out: Path) -> bool:
        """Whether ``out`` holds exactly this bundle: every file with its digest, and no stale
        generated file (what ``write_bundle`` would leave untouched)."""
        for rel, digest in self.files:
            path = out / rel
            try:
                if not path.is_file() or sha256(path.read_bytes()) != digest:
                    return False
            except OSError:
                return False
        return not stale_files(self.paths, out)


def _payload(entry: Entry) -> dict[str, Any]:
    return {
        "format": ENTRY_FORMAT,
        "key": entry.key,
        "name": entry.name,
        "files": [list(item) for item in entry.files],
    }


def _seal(payload: Mapping[str, Any]) -> str:
    return sha256(json.dumps(payload, sort_keys=True, ensure_ascii=True).encode())


def _single_component(name: object) -> bool:
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
    )


def _parse(data: bytes, key: str) -> Entry | None:
    """The entry in ``data``, or ``None`` if anything about it is off."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(document, dict) or set(document) != {"entry", "seal"}:
        return None
    payload = document["entry"]
    if not isinstance(payload, dict) or _seal(payload) != document["seal"]:
        return None
    if payload.get("format") != ENTRY_FORMAT or payload.get("key") != key:
        return None
    name, files = payload.get("name"), payload.get("files")
    if not _single_component(name) or not isinstance(files, list) or not files:
        return None
    parsed: list[tuple[str, str]] = []
    for item in files:
        if not (
            isinstance(item, list)
            and len(item) == 2
            and all(isinstance(part, str) for part in item)
            and len(item[1]) == 64
        ):
            return None
        try:
            check_path(item[0])
        except BundlePathError:
            return None
        parsed.append((item[0], item[1]))
    if len({rel for rel, _ in parsed}) != len(parsed):
        return None
    assert isinstance(name, str)
    return Entry(key, name, tuple(parsed))


class BuildCache:
    """Entries under ``root/builds/``, one JSON file per key."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def default(cls) -> BuildCache | None:
        root = default_cache_dir()
        return None if root is None else cls(root)

    def _path(self, key: str) -> Path:
        return self.root / "builds" / key[:2] / f"{key}.json"

    def lookup(self, key: str) -> Entry | None:
        try:
            data = self._path(key).read_bytes()
        except OSError:
            return None
        return _parse(data, key)

    def store(self, key: str, name: str, files: Iterable[tuple[str, bytes]]) -> None:
        """Record a compiled bundle; any failure to write is ignored (the cache is optional)."""
        entry = Entry(key, name, tuple((rel, sha256(data)) for rel, data in files))
        payload = _payload(entry)
        text = json.dumps({"entry": payload, "seal": _seal(payload)}, sort_keys=True)
        path = self._path(key)
        import tempfile  # only a store needs it

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return

    def store_all(self, items: Sequence[tuple[str, str, Iterable[tuple[str, bytes]]]]) -> None:
        for key, name, files in items:
            self.store(key, name, files)

"""A bundle: an ordered, immutable mapping of relative POSIX path to file text.

Emitters return bundles; they never write. Paths are validated on construction so a bundle can
never name a file outside the directory it is written to.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import PurePosixPath
from types import MappingProxyType


class BundlePathError(ValueError):
    """A path that is not a plain relative POSIX path inside the bundle."""


def check_path(path: str) -> str:
    """Return ``path`` if it is a normalized relative POSIX path, else raise."""
    pure = PurePosixPath(path)
    if (
        not path
        or "\\" in path
        or pure.is_absolute()
        or not pure.parts
        or str(pure) != path
        or any(part in ("", ".", "..") for part in pure.parts)
    ):
        raise BundlePathError(f"not a relative POSIX path inside a bundle: {path!r}")
    return path


class Bundle(Mapping[str, str]):
    """Ordered ``{relative path: text}``; insertion order is the emitter's file order."""

    __slots__ = ("_files",)

    def __init__(self, files: Iterable[tuple[str, str]] = ()) -> None:
        collected: dict[str, str] = {}
        for path, text in files:
            check_path(path)
            if path in collected:
                raise BundlePathError(f"duplicate path in bundle: {path!r}")
            collected[path] = text
        self._files: Mapping[str, str] = MappingProxyType(collected)

    def __getitem__(self, path: str) -> str:
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __repr__(self) -> str:
        return f"Bundle({list(self._files)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Bundle):
            return NotImplemented
        return list(self.items()) == list(other.items())

    def __hash__(self) -> int:
        return hash(tuple(self.items()))

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(self._files)

    def with_file(self, path: str, text: str) -> Bundle:
        """A new bundle with ``path`` added at the end (or replaced in place)."""
        if path in self._files:
            return Bundle((p, text if p == path else t) for p, t in self.items())
        return Bundle([*self.items(), (path, text)])

    def encoded(self, path: str) -> bytes:
        """The exact bytes written for ``path`` (UTF-8; text is already LF-only)."""
        return self._files[path].encode("utf-8")

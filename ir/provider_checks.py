"""Located checks of ``memory.providers`` (the primary first, then the providers the router
also reads): what the source models cannot see one key at a time.

- ``providers`` replaces the memory-level connection (``backend``, ``dsn``, ``url``, ``token``,
  ``protocol``): both at once is an error;
- at most ``MAX_PROVIDERS``, names unique;
- the primary takes the writes, so it is never read-only (``markdown``), and it has no router
  deadline (its failure blocks the turn) and no ``path`` (its store lives in ``.specwire``);
- each backend takes its own keys: ``http`` needs ``url`` and ``token``, ``postgres`` ``dsn``,
  ``markdown`` a ``path`` (its folder), a non-primary ``file`` a ``path`` (its SQLite file);
  ``protocol`` is an ``http`` setting, and an OpenComputer endpoint is never routed;
- ``path`` is relative and stays inside the agent's folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from specwire.ir.errors import SpecIssue
from specwire.ir.positions import Locator
from specwire.ir.values import quote
from specwire.runtime.core.fragment import MAX_PROVIDERS, READ_ONLY_BACKENDS

MEMORY_CONNECTION_KEYS = ("backend", "dsn", "url", "token", "protocol")
# The keys each backend takes besides ``name``, ``backend`` and ``deadline``.
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "file": ("path",),
    "http": ("url", "token", "protocol"),
    "markdown": ("path",),
    "postgres": ("dsn",),
}
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "http": ("url", "token"),
    "markdown": ("path",),
    "postgres": ("dsn",),
}
EXAMPLES = {"url": "$MEMORY_URL", "token": "$MEMORY_TOKEN", "dsn": "$DATABASE_URL", "path": "notes"}


def check_providers(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    memory = data.get("memory")
    if not isinstance(memory, dict):
        return
    providers = memory.get("providers")
    if not isinstance(providers, list):
        return
    for key in MEMORY_CONNECTION_KEYS:
        if key in memory:
            yield locator.at_key(
                ("memory", key),
                f"`{key}` sets the one memory backend, but `providers` lists them: move it to "
                "the first provider (the primary) or remove `providers`",
            )
    if len(providers) > MAX_PROVIDERS:
        yield locator.at_key(
            ("memory", "providers"), f"at most {MAX_PROVIDERS} providers (got {len(providers)})"
        )
    seen: set[str] = set()
    for index, provider in enumerate(providers):
        if not isinstance(provider, dict):
            continue
        name = provider.get("name")
        if isinstance(name, str):
            if name in seen:
                yield locator.at_value(
                    ("memory", "providers", index, "name"), f"duplicate provider {quote(name)}"
                )
            seen.add(name)
        yield from _provider(provider, index, locator, routed=len(providers) > 1)


def _provider(
    provider: dict[str, Any], index: int, locator: Locator, *, routed: bool
) -> Iterable[SpecIssue]:
    at = ("memory", "providers", index)
    backend = provider.get("backend")
    if not isinstance(backend, str) or backend not in PROVIDER_KEYS:
        return
    primary = index == 0
    if primary and backend in READ_ONLY_BACKENDS:
        yield locator.at_value(
            (*at, "backend"),
            f"the first provider is the primary: it takes every write, and a {backend} "
            "provider is read-only; list it after the primary",
        )
        return
    if primary:
        for key in ("deadline", "path"):
            if key in provider:
                why = (
                    "its failure blocks the turn, it has no router deadline"
                    if key == "deadline"
                    else "its store lives in the agent's .specwire folder"
                )
                yield locator.at_key((*at, key), f"`{key}` is not a setting of the primary: {why}")
    allowed = PROVIDER_KEYS[backend]
    for key in ("dsn", "url", "token", "protocol", "path"):
        if key in provider and key not in allowed and not (primary and key == "path"):
            users = [name for name, keys in PROVIDER_KEYS.items() if key in keys]
            yield locator.at_key(
                (*at, key),
                f"`{key}` is a setting of the {' and '.join(users)} backend, but this provider's "
                f"backend is {quote(backend)}",
            )
    wanted = REQUIRED_KEYS.get(backend, ()) + (
        ("path",) if backend == "file" and not primary else ()
    )
    missing = [key for key in wanted if key not in provider]
    if missing:
        examples = {**EXAMPLES, "path": "shared/facts.sqlite3"} if backend == "file" else EXAMPLES
        needs = ", ".join(f"`{key}: {examples[key]}`" for key in missing)
        yield locator.at_value((*at, "backend"), f"the {backend} provider needs {needs}")
    if provider.get("protocol") == "opencomputer" and backend == "http" and routed:
        # Its recall is a rendered block for one message and its writes are its own tools:
        # routing it beside other providers is not built.
        yield locator.at_value(
            (*at, "protocol"),
            "an OpenComputer endpoint is not routed beside other providers: use it as the only "
            "memory (`backend: http`, `protocol: opencomputer` without `providers`)",
        )
    path = provider.get("path")
    if isinstance(path, str) and not primary and "path" in allowed and _outside(path):
        what = "a SQLite file" if backend == "file" else "a folder"
        yield locator.at_value(
            (*at, "path"),
            f"must be {what} inside the agent's folder, relative to it (got {quote(path)})",
        )


def _outside(path: str) -> bool:
    pure = PurePosixPath(path)
    parts = [part for part in pure.parts if part not in ("", ".")]
    return pure.is_absolute() or "\\" in path or not parts or ".." in parts

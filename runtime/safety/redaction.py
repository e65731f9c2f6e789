"""Secret values never reach disk: every writer passes its text through ``redact``.

The values to hide are the resolved secret references (``$MODEL_ID``, channel settings,
connection strings — registered when they are read) and every environment variable whose name
looks like a credential (``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*`` …) or whose value
is a URL carrying a password. Each occurrence is replaced by the reference's name, ``$NAME``, so
a log says which secret was used without saying what it is.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

MIN_ENV_SECRET_CHARS = 8
MIN_REF_SECRET_CHARS = 4
_SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE|DSN|COOKIE)", re.IGNORECASE
)
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@:\s]*:([^/@\s]+)@", re.IGNORECASE)

_registered: dict[str, str] = {}
_lock = threading.Lock()
_pattern_cache: dict[tuple[tuple[str, str], ...], re.Pattern[str] | None] = {}
# The secrets and pattern of the last redaction, and the copy of the environment they were
# found in (``_registered_version`` counts changes to ``_registered``). Scanning every variable
# costs about 6 us each (two regexes, decoding) and every write paid it before; comparing the
# environment with the copy costs about 1 us, so the scan runs only when either changed.
_registered_version = 0
_last: tuple[dict[Any, Any], int, re.Pattern[str] | None, dict[str, str]] | None = None


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    return bool(_SECRET_NAME.search(name))


def register_secret(name: str, value: str) -> None:
    """Hide ``value`` from now on, wherever it appears, as ``$name``."""
    global _registered_version
    if len(value) >= MIN_REF_SECRET_CHARS:
        with _lock:
            _registered[value] = name
            _registered_version += 1


def forget_registered_secrets() -> None:
    global _registered_version
    with _lock:
        _registered.clear()
        _registered_version += 1


def _environment_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in environ.items():
        if len(value) < MIN_ENV_SECRET_CHARS:
            continue
        if looks_secret(name):
            found[value] = name
        password = _URL_PASSWORD.match(value)
        if password is not None:
            found[value] = name
            if len(password.group(1)) >= MIN_REF_SECRET_CHARS:
                found[password.group(1)] = name
    return found


def _pattern(environ: Mapping[str, str]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    global _last
    # os.environ keeps its items, encoded, in a plain dict: compared in C, without decoding.
    items = getattr(environ, "_data", environ)
    copied = isinstance(items, dict)
    with _lock:
        last = _last
        if copied and last is not None and last[1] == _registered_version and last[0] == items:
            return last[2], last[3]
        # Copied before it is scanned: a change in between makes the copy stale, not the secrets.
        snapshot = dict(items) if copied else {}
        secrets = {**_environment_secrets(environ), **_registered}
        version = _registered_version
    key = tuple(sorted(secrets.items()))
    if key not in _pattern_cache:
        if len(_pattern_cache) > 64:
            _pattern_cache.clear()
        # Longest first, so a value that contains another is replaced whole.
        values = sorted(secrets, key=lambda value: (-len(value), value))
        _pattern_cache[key] = re.compile("|".join(map(re.escape, values))) if values else None
    pattern = _pattern_cache[key]
    if copied:
        with _lock:
            _last = (snapshot, version, pattern, secrets)
    return pattern, secrets


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    pattern, secrets = _pattern(os.environ if environ is None else environ)
    if pattern is None or not text:
        return text
    return pattern.sub(lambda match: f"${secrets[match.group(0)]}", text)


def redactor(environ: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """``redact`` for the several texts of one write (a fact's text and tags): the secrets are
    looked up once, not once per text."""
    pattern, secrets = _pattern(os.environ if environ is None else environ)
    if pattern is None:
        return _unchanged

    def hide(text: str) -> str:
        return pattern.sub(lambda match: f"${secrets[match.group(0)]}", text) if text else text

    return hide


def _unchanged(text: str) -> str:
    return text


def redact_data(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``redact`` applied to every string in a JSON-like value (keys included)."""
    pattern, secrets = _pattern(os.environ if environ is None else environ)
    if pattern is None:
        return value

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return pattern.sub(lambda match: f"${secrets[match.group(0)]}", item)
        if isinstance(item, dict):
            return {walk(k): walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    return walk(value)

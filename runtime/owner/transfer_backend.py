"""A memory service as ``codegen memory migrate``'s source or target: its owner transfer
(``runtime.facts.providers.http.transfer_client``), opened from secret references."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.owner.backend import OwnerFacts
from specwire.runtime.owner.selection import SelectionError
from specwire.runtime.safety.secrets import MissingSecretError, SecretRef


@contextmanager
def open_transfer(url: str, token: str, spec: str, *, tenant: str | None) -> Iterator[OwnerFacts]:
    """The service at ``url`` (a URL or ``$VAR``) for ``spec``, with the owner token held in
    ``token`` (a ``$VAR``: never a value on the command line); ``tenant``: the tenant the token
    must belong to (the service refuses it otherwise)."""
    try:
        from specwire.runtime.facts.providers.http.transfer_client import HttpMemoryTransfer
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise MemoryServiceError(
            f"migrate: a memory service needs {exc.name or 'a missing package'}: "
            "pip install 'specwire[memory-http]'"
        ) from None
    if not token.startswith("$"):
        raise SelectionError("the owner token must be a $VAR reference, never its value")
    try:
        if url.startswith("$"):
            url = SecretRef(url[1:]).resolve()
        secret = SecretRef(token[1:]).resolve()
    except MissingSecretError as exc:
        raise SelectionError(str(exc)) from None
    try:
        client = HttpMemoryTransfer(url, secret, spec, tenant=tenant)
    except ValueError as exc:
        raise SelectionError(f"the memory service: {exc}") from None
    except Exception:  # httpx.InvalidURL (a bad port): one line, never the URL itself
        raise SelectionError("the memory service URL is not valid") from None
    try:
        yield OwnerFacts(client, "http", client.where)
    finally:
        client.close()

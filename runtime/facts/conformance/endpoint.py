"""A running memory service as a target: ``--url URL --token-env NAME``.

Every case talks to the service through ``HttpFactProvider`` (the HTTP memory contract,
``docs/memory-http-api.openapi.json``) under a spec name of its own (``<spec>-<8 hex>``), so
cases never see each other's facts, nor facts already on the service. What the suite writes
stays there: point it at a scratch tenant. With a second tenant's token the tenant-isolation
cases run too; a backend cannot be broken or stalled from here, so those cases are skipped.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specwire.runtime.facts.conformance.checks import skip
from specwire.runtime.facts.conformance.target import TENANTS, TargetFactory

NO_BREAKING = "a running service cannot be broken or stalled from the suite"


class EndpointTarget:
    name = "endpoint"
    skip_reasons = {"degraded": NO_BREAKING, "stalled": NO_BREAKING}

    def __init__(self, url: str, tokens: Mapping[str, str], timeout_s: float) -> None:
        self.url = url
        self.tokens = dict(tokens)
        self.timeout_s = timeout_s
        self.secrets = tuple(self.tokens.values())
        # Fresh per case: the service's other facts (and other cases') are never in scope.
        self.suffix = secrets.token_hex(4)
        self._clients: list[Any] = []

    def _client(self, token_of: str, spec: str, **options: Any) -> Any:
        """A client with ``token_of``'s token (``tenant=`` in ``options`` is the body's claim)."""
        from specwire.runtime.facts.providers.http.client import HttpFactProvider

        token = self.tokens.get(token_of)
        if token is None:
            skip("a second tenant needs its token: --other-token-env NAME")
        options.setdefault("timeout_s", self.timeout_s)
        client = HttpFactProvider(self.url, token, f"{spec}-{self.suffix}", **options)
        self._clients.append(client)
        return client

    def provider(self, tenant: str, spec: str, session: str | None = None) -> Any:
        return self._client(tenant, spec, session=session)

    def wrong_scope(self, tenant: str, spec: str) -> Any:
        """A client whose requests claim a tenant its token is not (named so that no real
        tenant is likely to be called that)."""
        return self._client(tenant, spec, tenant=f"conformance-nobody-{self.suffix}")

    def close(self) -> None:
        for client in self._clients:
            client.close()


def endpoint(url: str, tokens: Mapping[str, str], timeout_s: float = 10.0) -> TargetFactory:
    """A factory of ``EndpointTarget``s; ``tokens`` maps the suite's tenants (``TENANTS``)
    to bearer tokens (the first is required)."""
    unknown = set(tokens) - set(TENANTS)
    if unknown or TENANTS[0] not in tokens:
        raise ValueError(f"tokens are keyed by the suite's tenants {TENANTS}")

    def factory(workdir: Path) -> EndpointTarget:
        return EndpointTarget(url, tokens, timeout_s)

    return factory

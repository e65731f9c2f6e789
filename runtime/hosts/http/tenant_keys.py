"""Each tenant's API key, from a documented environment variable per tenant.

``SPECWIRE_TENANT_KEY_<TENANT ID>`` — the id upper-cased, every character other than a letter or
a digit turned into ``_`` (``tenant-acme`` → ``SPECWIRE_TENANT_KEY_TENANT_ACME``). Keys never
appear in the spec or the bundle. A tenant without a key cannot be reached; a key is at least
``MIN_KEY_CHARS`` characters, and two tenants never share one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from specwire.runtime.core.errors import ServeConfigError
from specwire.runtime.core.fragment import TENANT_KEY_ENV_PREFIX, tenant_key_variable
from specwire.runtime.safety.redaction import register_secret

MIN_KEY_CHARS = 16


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class TenantKeys:
    digests: tuple[tuple[str, bytes], ...]  # (tenant id, sha256 of its key)

    def tenant_for(self, given: str) -> str | None:
        """The tenant whose key ``given`` is. Every key is compared, in constant time, so the
        time taken says nothing about which tenant (or how much of a key) matched."""
        digest = _digest(given)
        found: str | None = None
        for tenant_id, expected in self.digests:
            if hmac.compare_digest(digest, expected):
                found = tenant_id
        return found

    @property
    def tenant_ids(self) -> list[str]:
        return [tenant_id for tenant_id, _ in self.digests]


def load_tenant_keys(
    tenant_ids: Sequence[str],
    environ: Mapping[str, str] | None = None,
    *,
    variable_for: Callable[[str], str] = tenant_key_variable,
    prefix: str = TENANT_KEY_ENV_PREFIX,
) -> tuple[TenantKeys, list[str]]:
    """The keys that are set, and the tenants left without one (they get 401 on every call).

    ``variable_for``/``prefix``: another family of variables with the same rules (the memory
    server's ``SPECWIRE_MEMORY_TOKEN_<TENANT ID>``).
    """
    env = os.environ if environ is None else environ
    variables: dict[str, str] = {}
    for tenant_id in tenant_ids:
        variable = variable_for(tenant_id)
        if variable in variables:
            raise ServeConfigError(
                f"tenants {variables[variable]!r} and {tenant_id!r} would share the key "
                f"variable ${variable}; rename one of them"
            )
        variables[variable] = tenant_id
    digests: list[tuple[str, bytes]] = []
    owners: dict[bytes, str] = {}
    missing: list[str] = []
    for variable, tenant_id in variables.items():
        key = env.get(variable, "").strip()
        if not key:
            missing.append(tenant_id)
            continue
        if len(key) < MIN_KEY_CHARS:
            raise ServeConfigError(
                f"${variable} is too short to be an API key (at least {MIN_KEY_CHARS} characters)"
            )
        register_secret(variable, key)
        digest = _digest(key)
        if digest in owners:
            raise ServeConfigError(
                f"tenants {owners[digest]!r} and {tenant_id!r} have the same API key; "
                "give each tenant its own"
            )
        owners[digest] = tenant_id
        digests.append((tenant_id, digest))
    if not digests:
        first = variable_for(tenant_ids[0]) if tenant_ids else f"{prefix}<TENANT>"
        raise ServeConfigError(
            f"no tenant has an API key: set ${first} (one variable per tenant, {prefix}<TENANT ID>)"
        )
    return TenantKeys(tuple(digests)), missing

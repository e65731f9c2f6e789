"""What a bundle's start needs from its environment: the memory endpoints it connects to and
every environment variable it reads (secret references, model keys), each with where it is used.

Nothing here reads a value beyond "is it set"; ``runtime.hosts.preflight`` turns the unset
ones into one message and ``runtime.hosts.provider_probes`` checks the endpoints.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from specwire.runtime.core.fragment import memory_enabled, tenant_secret_variable
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.models.select import MODEL_ENV, ModelRef, is_scripted, provider_of
from specwire.runtime.safety.secrets import SecretRef

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import FragmentData


@lazy_dataclass(frozen=True)
class SecretNeed:
    """An environment variable the start reads, and what reads it (never its value)."""

    variable: str
    where: str


# The label of a routed provider (the primary's is ``memory``).
ROUTED_LABEL_PREFIX = "memory.providers."


@lazy_methods_dataclass(frozen=True)
class Endpoint:
    """A memory provider the bundle connects to: the primary (``memory``) or one of
    ``memory.providers`` (``memory.providers.<name>``). Settings as in the fragment."""

    label: str
    backend: str
    dsn: str | None = None
    url: str | None = None
    token: str | None = None
    protocol: str | None = None
    path: str | None = None


def endpoints(fragment: FragmentData) -> list[Endpoint]:
    """The primary, then ``memory.providers`` in the spec's order; none when facts are off."""
    memory = fragment.memory
    if memory is None or not memory_enabled(fragment):
        return []
    found = [
        Endpoint(
            "memory",
            memory.backend or "file",
            memory.dsn,
            memory.url,
            memory.token,
            memory.protocol,
        )
    ]
    for provider in memory.providers or ():
        found.append(
            Endpoint(
                f"{ROUTED_LABEL_PREFIX}{provider.name}",
                provider.backend,
                provider.dsn,
                provider.url,
                provider.token,
                provider.protocol,
                provider.path,
            )
        )
    return found


def reference(value: str | None) -> str | None:
    """The variable a ``$NAME`` setting reads, or ``None`` for a literal (or no) setting."""
    return value[1:] if value is not None and value.startswith("$") else None


def token_variables(endpoint: Endpoint, tenants: Sequence[str]) -> list[tuple[str, str | None]]:
    """``(variable, tenant)`` pairs for an endpoint's token: on the managed target each tenant
    reads its own (``MEMORY_TOKEN`` → ``MEMORY_TOKEN_<TENANT ID>``, as the connection does)."""
    variable = reference(endpoint.token)
    if variable is None:
        return []
    if not tenants:
        return [(variable, None)]
    return [(tenant_secret_variable(variable, tenant), tenant) for tenant in tenants]


def memory_needs(fragment: FragmentData, tenants: Sequence[str]) -> list[SecretNeed]:
    needs: list[SecretNeed] = []
    for endpoint in endpoints(fragment):
        if endpoint.backend == "postgres" and (variable := reference(endpoint.dsn)):
            needs.append(SecretNeed(variable, f"{endpoint.label}.dsn"))
        if endpoint.backend != "http":
            continue
        if variable := reference(endpoint.url):
            needs.append(SecretNeed(variable, f"{endpoint.label}.url"))
        for variable, tenant in token_variables(endpoint, tenants):
            suffix = "" if tenant is None else f" of tenant {tenant}"
            needs.append(SecretNeed(variable, f"{endpoint.label}.token{suffix}"))
    memory = fragment.memory
    if memory is not None and memory_enabled(fragment):
        wiki = memory.wiki.embedder if memory.wiki is not None else None
        for where, embedder in (("memory.embedder", memory.embedder), ("wiki.embedder", wiki)):
            needs += _embedder_needs(embedder, where)
    return needs


def _embedder_needs(embedder: str | None, where: str) -> list[SecretNeed]:
    provider = (embedder or "").partition("/")[0]
    if provider not in ("openai", "openai-compatible"):
        return []
    # Loaded only here: a bundle that names no such model or embedder never imports an adapter.
    from specwire.runtime.models import openai_model

    if provider == "openai":
        return [SecretNeed(openai_model.KEY_ENV, f"{where} {embedder}")]
    if provider == "openai-compatible":
        return [SecretNeed(openai_model.BASE_URL_ENV, f"{where} {embedder}")]
    return []


def model_needs(
    models: Iterable[tuple[str, ModelRef]], environ: Mapping[str, str]
) -> tuple[list[SecretNeed], list[str]]:
    """The variables the models read, and the model ids (set or resolved) to check.

    ``models`` are ``(where, model)`` pairs. With ``SPECWIRE_MODEL`` set only the override is
    run: the spec's models (and their references) are not read."""
    override = environ.get(MODEL_ENV, "").strip()
    chosen: list[str] = []
    needs: list[SecretNeed] = []
    if override:
        chosen.append(override)
    else:
        for where, model in models:
            if isinstance(model, SecretRef):
                value = environ.get(model.env, "").strip()
                if not value:
                    needs.append(SecretNeed(model.env, where))
                    continue
                chosen.append(value)
            else:
                chosen.append(model.strip())
    ids = list(dict.fromkeys(chosen))
    for model_id in ids:
        needs += [SecretNeed(name, f"the model {model_id}") for name in adapter_env(model_id)]
    return needs, ids


def adapter_env(model_id: str) -> tuple[str, ...]:
    """The variables a model's adapter cannot start without (an unknown id: none)."""
    if is_scripted(model_id):
        return ()
    found = provider_of(model_id)
    if found is None:
        return ()
    provider = found[0]
    from specwire.runtime.models import anthropic_model, openai_model

    if provider == "anthropic":
        return (anthropic_model.KEY_ENV,)
    if provider == "openai":
        return (openai_model.KEY_ENV,)
    return (openai_model.BASE_URL_ENV,)


def adapter_sdk(model_id: str) -> str | None:
    """The SDK a model's adapter imports when it is missing (``None``: installed or none)."""
    found = None if is_scripted(model_id) else provider_of(model_id)
    if found is None:
        return None
    sdk = "anthropic" if found[0] == "anthropic" else "openai"
    return sdk if importlib.util.find_spec(sdk) is None else None


def unset(needs: Iterable[SecretNeed], environ: Mapping[str, str]) -> list[SecretNeed]:
    """The needs whose variable is unset or blank, each variable once (first use kept)."""
    missing: dict[str, SecretNeed] = {}
    for need in needs:
        if not environ.get(need.variable, "").strip() and need.variable not in missing:
            missing[need.variable] = need
    return list(missing.values())

"""The facts tier over an OpenComputer memory endpoint (``memory.backend: http``,
``memory.protocol: opencomputer``; docs/opencomputer.md).

What the model gets: the endpoint's recalled text before each turn (recall runs for every
message, with that message's text only; a failure blocks the turn) and the endpoint's own tools
as ``memory_<name>``. None of the fact tools (Remember, Recall, MemoryRead, MemoryForget) and no
auto-capture: the contract has no fact writes and no turn-completion callbacks.

The partition is ``derive_partition(tenant, spec, namespace)``: the tenant's id (``single.tenant``
on targets without tenants), the spec's name and the scope key writes go to
(``agent``, ``user:U123``, ...), so each audience of a scoped spec has its own partition. The
endpoint's credential is ``memory.token`` (per tenant on the managed target, as for our REST).
"""

from __future__ import annotations

from collections.abc import Callable

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment import tenant_secret_variable
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import MemorySeam
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.facts.scoping import FactScoping
from specwire.runtime.facts.wiring import FactsSettings, FactsWiring
from specwire.runtime.safety.secrets import SecretRef

DEFAULT_TENANT = "single.tenant"


def wire_opencomputer(
    memory: FactsData,
    layout: StoreLayout,
    settings: FactsSettings,
    scoping: FactScoping,
    *,
    tenant: Tenant | None,
    log: Callable[[str], None],
) -> FactsWiring:
    try:
        from specwire.runtime.facts.providers.http import opencomputer_wire as oc
        from specwire.runtime.facts.providers.http.opencomputer_client import OpenComputerClient
        from specwire.runtime.facts.providers.http.opencomputer_provider import (
            OpenComputerFactProvider,
        )
        from specwire.runtime.facts.providers.http.opencomputer_tools import provider_tools
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise MemoryServiceError(
            f"memory-service: this memory backend needs {exc.name or 'a missing package'}: "
            "pip install 'specwire[memory-http]'"
        ) from None
    url = memory.url or ""
    if url.startswith("$"):
        url = _resolve(url, "url")
    token_ref = memory.token
    if tenant is not None and token_ref is not None:
        token_ref = "$" + tenant_secret_variable(token_ref[1:], tenant.id)
    token = _resolve(token_ref, "token")
    partition = oc.derive_partition(
        tenant.id if tenant is not None else DEFAULT_TENANT,
        layout.spec_name,
        scoping.write_key.label(),
    )
    try:
        client = OpenComputerClient(url, token, partition)
    except ValueError as exc:
        raise MemoryServiceError(f"memory-service: http backend (opencomputer): {exc}") from None
    except Exception:  # httpx.InvalidURL (a bad port): one line, never the URL itself
        raise MemoryServiceError(
            "memory-service: http backend (opencomputer): the memory endpoint URL is not valid"
        ) from None

    def held(rule: str) -> None:
        log(
            f"[memory] the endpoint's recalled text was held by the injection scanner ({rule}): "
            "not put in the prompt\n"
        )

    provider = OpenComputerFactProvider(client, on_held=held)

    def recall(query: str, k: int) -> list[str]:
        recalled = provider.project(query)
        return [recalled.text] if recalled.text.strip() else []

    seam = MemorySeam(
        auto_recall=settings.auto_recall,
        recall_k=settings.recall_k,
        recall=recall if settings.auto_recall else None,
        # Every model request recalls again (the contract's cursor belongs to one request).
        recall_mode="per-turn",
        refresh_every=1,
        current_input_only=True,
    )
    tools = provider_tools(memory.tools or (), provider)
    log(f"[memory] facts live in an OpenComputer memory endpoint at {client.where}\n")
    names = "/".join(tool.name for tool in tools) or "no tools"
    log(
        f"[memory] {names} wired (recall every turn: {'on' if settings.auto_recall else 'off'}, "
        "autoCapture=false)\n"
    )
    return FactsWiring(
        store=None,
        provider=provider,
        tools=tools,
        seam=seam,
        release=client.close,
        scoping=scoping,
    )


def _resolve(reference: str | None, key: str) -> str:
    if reference is None or not reference.startswith("$"):
        raise MemoryServiceError(f"memory-service: memory.{key} must be a $SECRET reference")
    return SecretRef(reference[1:]).resolve()

"""A bundle's start checks, run after its arguments are parsed and before its banner, its first
file or its listening socket: fail fast, in one line per problem, never halfway through.

In this order:

1. **secrets**: every variable the start reads and is not set, in ONE line (the spec's secret
   references for the model, memory and, for ``serve``, the channels; the model adapter's key
   or base URL; an OpenAI embedder's key), each with where it is used;
2. **the model id**: a family the runtime has an adapter for (``anthropic/…``, ``claude-*``,
   ``openai/…``, ``gpt-*``, ``o<digit>…``, ``openai-compatible/…``, ``scripted``) and its SDK
   installed; one line per model that fails;
3. **the memory providers**: the primary and ``memory.providers`` answer within 1 s each
   (``runtime.hosts.provider_probes``); one line per provider that does not. A provider whose
   settings are missing is not probed: the secrets line already says why. Only the primary
   stops the start: the others are read beside it, and the router answers without a provider
   that fails (reporting it each turn), so an unreachable one is a warning line
   (``start_warnings``), not a refusal.

The host prints each problem as ``<spec>: <problem>`` and exits with status 2; nothing has been
created by then (no ``.specwire/`` folder, no session log, no tenant folder).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.hosts.start_needs import (
    ROUTED_LABEL_PREFIX,
    Endpoint,
    SecretNeed,
    adapter_sdk,
    endpoints,
    memory_needs,
    model_needs,
    reference,
    token_variables,
    unset,
)
from specwire.runtime.models.errors import ModelUnavailableError
from specwire.runtime.models.select import MODEL_ENV, ModelRef, is_scripted, provider_of

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import FragmentData

# Added when a model's variable is missing: the override needs none of them.
MODEL_HINT = f"; or set {MODEL_ENV} to run another model ({MODEL_ENV}=scripted runs offline)"
# The name a generated bundle gives its memory fragment (``templates/_shared/python.j2``).
BUNDLE_FRAGMENT_NAME = "MEMORY_FRAGMENT"


@lazy_methods_dataclass(frozen=True)
class StartCheck:
    """What one start of a bundle uses.

    ``models``: ``(where, model)`` pairs, the first the one the host runs (a crew lists every
    role's). ``memory``: the bundle's fragment (``None``: a bundle without memory, or one built
    before the hosts took it). ``secrets``: other variables this start reads (a channel's
    settings when serving). ``tenants``: the managed target's tenant ids (each reads its own
    memory token). ``cwd``: the agent's folder (default: the working directory).
    """

    spec_name: str
    models: tuple[tuple[str, ModelRef], ...]
    memory: Mapping[str, Any] | None = None
    secrets: tuple[SecretNeed, ...] = ()
    tenants: tuple[str, ...] = ()
    cwd: Path | None = None


def start_problems(check: StartCheck, warnings: list[str] | None = None) -> list[str]:
    """Every problem that stops this start, one line each (empty: start); a routed provider
    that does not answer is added to ``warnings`` instead. Settings are read from
    ``os.environ``, where the start itself reads them."""
    env = os.environ
    problems: list[str] = []
    fragment = _fragment(check.memory, problems)
    needs, model_ids = model_needs(check.models, env)
    for_models = {need.variable for need in needs}
    needs += check.secrets
    if fragment is not None:
        needs += memory_needs(fragment, check.tenants)
    missing = unset(needs, env)
    if missing:
        hint = any(need.variable in for_models for need in missing)
        problems.append(missing_line(missing) + (MODEL_HINT if hint else ""))
    overridden = bool(env.get(MODEL_ENV, "").strip())
    problems += [
        problem
        for model_id in model_ids
        if (problem := model_problem(model_id, from_env=overridden)) is not None
    ]
    if fragment is not None:
        # Loaded only here: a bundle without memory has nothing to probe.
        from specwire.runtime.hosts.provider_probes import probe_endpoints

        absent = {need.variable for need in missing}
        ready = [
            endpoint
            for endpoint in endpoints(fragment)
            if not absent & _variables(endpoint, check.tenants)
        ]
        # One probe round (in parallel, 1 s): each line starts with its endpoint's label.
        for line in probe_endpoints(
            ready,
            spec=fragment.spec_name,
            tenants=check.tenants,
            cwd=(check.cwd or Path.cwd()).resolve(),
        ):
            if not line.startswith(ROUTED_LABEL_PREFIX):
                problems.append(line)
            elif warnings is not None:
                warnings.append(f"{line}; recall goes on without it")
    return problems


def bundle_fragment(
    memory: Mapping[str, Any] | None, builder: Callable[..., Any]
) -> Mapping[str, Any] | None:
    """The fragment a start wires: ``memory`` when the host was given it, else the one the
    bundle's builder hands to ``wire_memory``, the ``MEMORY_FRAGMENT`` constant beside it in
    the generated module. Every generated bundle with memory defines it, whatever interface it
    was built for, so bundles committed before these checks get them without a rebuild (and a
    bundle passes nothing new that an older runtime would refuse)."""
    if memory is not None:
        return memory
    namespace = getattr(builder, "__globals__", None)
    found = namespace.get(BUNDLE_FRAGMENT_NAME) if isinstance(namespace, dict) else None
    return found if isinstance(found, Mapping) else None


def passes_start_checks(check: StartCheck, log: Callable[[str], None]) -> bool:
    """Run the checks; on a problem write each as ``<spec>: <problem>`` and return False."""
    warnings: list[str] = []
    problems = start_problems(check, warnings)
    for problem in problems:
        log(f"{check.spec_name}: {problem}\n")
    if not problems:
        for warning in warnings:
            log(f"{check.spec_name}: warning: {warning}\n")
    return not problems


def missing_line(missing: Sequence[SecretNeed]) -> str:
    listed = ", ".join(f"{need.variable} ({need.where})" for need in missing)
    noun = "variable is" if len(missing) == 1 else "variables are"
    return f"not started: {len(missing)} environment {noun} not set: {listed}"


def model_problem(model_id: str, *, from_env: bool = False) -> str | None:
    """Why the runtime cannot run ``model_id``: no adapter for its family, or a missing SDK."""
    if is_scripted(model_id):
        return None
    if provider_of(model_id) is None:
        return str(ModelUnavailableError(model_id, from_env=from_env))
    sdk = adapter_sdk(model_id)
    if sdk is not None:
        return (
            f'model "{model_id}" needs the "{sdk}" package, which is not installed; '
            f'run: pip install "specwire[{sdk}]"'
        )
    return None


def _fragment(memory: Mapping[str, Any] | None, problems: list[str]) -> FragmentData | None:
    if memory is None:
        return None
    from specwire.runtime.wiring import parse_fragment

    try:
        return parse_fragment(memory)
    except MemoryServiceError as exc:
        problems.append(str(exc))
        return None


def _variables(endpoint: Endpoint, tenants: Sequence[str]) -> set[str]:
    found = {variable for variable, _ in token_variables(endpoint, tenants)}
    for setting in (endpoint.dsn, endpoint.url):
        if (variable := reference(setting)) is not None:
            found.add(variable)
    return found

"""What every target emitter shares: the fragment, the file list, README facts.

Each target module builds its own template context and hands ``plan_bundle`` the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from specwire.emitters.bundle import Bundle
from specwire.emitters.literals import md_code
from specwire.emitters.pipeline import BundlePlan, OutputFile, build_bundle
from specwire.ir import lower
from specwire.ir.durations import UNIT_MS
from specwire.ir.model import IrAgent, IrSpec, ModelRef, SecretRef
from specwire.runtime.core.fragment import (
    EMBEDDER_EXTRAS,
    MAX_BODY_ENV,
    SERVE_HOST_ENV,
    SERVE_PORT_ENV,
    SLACK_API_URL_ENV,
    MemoryWiringFragment,
    tenant_secret_variable,
    wiki_enabled,
)

MODEL_ENV = "SPECWIRE_MODEL"
AGENT_FILE = "agent.py"
README_FILE = "README.md"


@dataclass(frozen=True)
class EnvVar:
    name: str
    purpose: str  # markdown, already escaped


def serve_env(*, slack: bool = False) -> tuple[EnvVar, ...]:
    """The rows every ``agent.py serve`` host reads (the Slack one only for a Slack bot)."""
    rows = [
        EnvVar(
            SERVE_HOST_ENV,
            f"the interface {md_code('serve')} listens on (default {md_code('127.0.0.1')})",
        ),
        EnvVar(
            SERVE_PORT_ENV, f"the port {md_code('serve')} listens on (default {md_code('8000')})"
        ),
        EnvVar(
            MAX_BODY_ENV,
            f"the largest request body {md_code('serve')} accepts, in bytes (default 1 MiB)",
        ),
    ]
    if slack:
        rows.append(
            EnvVar(
                SLACK_API_URL_ENV,
                "another base URL for the Slack Web API (optional; a proxy, a test double)",
            )
        )
    return tuple(rows)


def output_files(target: str) -> tuple[OutputFile, ...]:
    return (
        OutputFile(AGENT_FILE, f"{target}/{AGENT_FILE}.j2"),
        OutputFile(README_FILE, f"{target}/{README_FILE}.j2"),
    )


@dataclass(frozen=True)
class ModelValue:
    """A model id as the templates see it: the id itself, or the variable a secret names."""

    value: str
    secret: bool

    @property
    def spelling(self) -> str:
        """As written in the spec: ``scripted`` or ``$MODEL_ID``."""
        return f"${self.value}" if self.secret else self.value

    @property
    def prose(self) -> str:
        """Markdown naming the model in a README sentence ("running the model …")."""
        if self.secret:
            return f"named by the {md_code(self.value)} environment variable"
        return md_code(self.value)


def model_value(model: ModelRef) -> ModelValue:
    if isinstance(model, SecretRef):
        return ModelValue(model.env, secret=True)
    return ModelValue(model, secret=False)


def model_secret(model: ModelRef | None, whose: str = "") -> list[EnvVar]:
    """The README row for a model id given as a secret reference (none for a plain id)."""
    if not isinstance(model, SecretRef):
        return []
    required = f"required unless {md_code(MODEL_ENV)} is set"
    return [EnvVar(model.env, f"secret: the model id{whose} ({required})")]


def env_vars(
    model: ModelRef, secrets: Iterable[EnvVar] = (), extra: Iterable[EnvVar] = ()
) -> tuple[EnvVar, ...]:
    """The README's environment table: the model override, host settings, then secrets."""
    value = model_value(model)
    overridden = (
        f"the model id read from {md_code(value.value)}"
        if value.secret
        else f"the model id {md_code(value.value)}"
    )
    model_var = EnvVar(MODEL_ENV, f"overrides {overridden} (optional)")
    ordered = sorted(extra, key=lambda var: var.name)
    return (model_var, *ordered, *sorted(secrets, key=lambda var: (var.name, var.purpose)))


def memory_settings(fragment: MemoryWiringFragment) -> tuple[str, ...]:
    """Declared facts settings as ``key: value`` code spans in the spec's own spelling
    (``ttl: 90d``, ``recallK: 5``), fragment order; a disabled wiki block is listed flattened
    (``wiki.enabled: false``), an enabled one has its own line (``wiki_settings``)."""
    data = dict(fragment.to_data().get("memory", {}))
    if wiki_enabled(fragment):
        data.pop("wiki", None)
    mode = data.pop("recall_mode", None)
    if mode is not None:  # the spec says `autoRecall: per-turn`
        data["auto_recall"] = mode
    data.pop("scope", None)  # resolved, not declared: said in prose (``scope_note``)
    return tuple(md_code(f"{key}: {value}") for key, value in _flatten(data))


_SCOPE_NOTES: dict[tuple[str, str], str] = {
    ("channel", "user"): "Facts told in a direct message are that person's: they are recalled "
    "only in their direct messages{follow}. Facts told in a channel belong to that channel "
    "(everyone there heard them). Facts the owner keeps for the whole bot (`agent`) reach every "
    "conversation.",
    ("channel", "conversation"): "Facts belong to the conversation they were told in (a Slack "
    "channel or direct message, a webhook conversation){follow}. Facts the owner keeps for the "
    "whole bot (`agent`) reach every conversation.",
    ("channel", "agent"): "Facts belong to the bot, shared by every conversation (a fact told "
    "in a DM can be recalled in a channel){follow}.",
    ("managed", "user"): "Facts belong to the request's `user`: two users of one tenant never "
    "see each other's facts. A request without `user` keeps them in its session "
    "(`X-Session-Id`). Facts the owner keeps for the tenant (`agent`) reach every user.",
    ("managed", "conversation"): "Facts belong to the session (`X-Session-Id`, else the `user` "
    "field). Facts the owner keeps for the tenant (`agent`) reach every session.",
    ("managed", "agent"): "Facts belong to the tenant, shared by every session and user.",
    ("crew", "role"): "Facts belong to the role that kept them: another role does not recall "
    "them. A role shares a fact with the whole crew by remembering it with `scope: crew`.",
    ("crew", "crew"): "Facts are shared by every role of the crew.",
    ("crew", "agent"): "Facts belong to the agent, shared by every role.",
}
_FOLLOW_USER = (
    "; with `followUser`, a person's own facts are also recalled wherever they talk to the bot "
    "(a reply in a channel is read by everyone there)"
)


def scope_note(fragment: MemoryWiringFragment, target: str) -> str | None:
    """Who sees a fact, in the README's words (``memory.scope`` as resolved for the target);
    None when facts are the agent's alone (cli, research)."""
    memory = fragment.memory
    if memory is None or memory.scope is None:
        return None
    note = _SCOPE_NOTES.get((target, memory.scope.default))
    if note is None:
        return None
    return note.format(follow=_FOLLOW_USER if memory.scope.follow_user else "")


def wiki_settings(fragment: MemoryWiringFragment) -> tuple[str, ...]:
    data = fragment.to_data().get("memory", {}).get("wiki", {})
    return tuple(md_code(f"{key}: {value}") for key, value in _flatten(data))


def embedder_extra(fragment: MemoryWiringFragment) -> str | None:
    """The pip extra the declared facts embedder needs, or None without one."""
    memory = fragment.memory
    # On the http backend the memory service ranks facts: the bundle embeds nothing for them.
    if memory is None or memory.embedder is None or memory.backend == "http":
        return None
    return EMBEDDER_EXTRAS.get(memory.embedder.partition("/")[0])


def backend_env(fragment: MemoryWiringFragment, tenant_ids: Iterable[str] = ()) -> list[EnvVar]:
    """README rows for the fact backend's connection references (none for ``file``). On the
    managed target the memory service's token is one variable per tenant."""
    memory = fragment.memory
    if memory is None or memory.backend in (None, "file"):
        return []
    rows: list[EnvVar] = []
    if memory.dsn is not None:
        rows.append(
            EnvVar(memory.dsn[1:], "secret: the PostgreSQL connection string of the fact store")
        )
    if memory.url is not None and memory.url.startswith("$"):
        rows.append(EnvVar(memory.url[1:], "the memory service's base URL (http or https)"))
    if memory.token is not None:
        token = memory.token[1:]
        ids = list(tenant_ids)
        if not ids:
            rows.append(EnvVar(token, "secret: the memory service's bearer token"))
        for tenant_id in ids:
            rows.append(
                EnvVar(
                    tenant_secret_variable(token, tenant_id),
                    f"secret: the memory service's bearer token for tenant {md_code(tenant_id)}",
                )
            )
    return rows


def backend_note(fragment: MemoryWiringFragment) -> str | None:
    """One README line on where facts live, for the remote backends."""
    memory = fragment.memory
    if memory is None or memory.backend in (None, "file"):
        return None
    if memory.backend == "postgres":
        return (
            "Facts live in PostgreSQL (`memory.dsn`), shared by every process that serves this "
            'bundle; needs `pip install "specwire[postgres]"`.'
        )
    return (
        "Facts live in a memory service speaking the HTTP memory contract (`memory.url`); "
        'needs `pip install "specwire[memory-http]"`.'
    )


# Hosts that start the spec's dream after a turn (``runtime.hosts.turns``).
_DREAMING_TARGETS = frozenset({"channel", "managed"})


def learning_note(fragment: MemoryWiringFragment, target: str) -> str | None:
    """The README's learning line (fixed words and counts: the domain and paths are the
    spec's), or None when the spec does not learn."""
    learning = fragment.learning
    if learning is None:
        return None
    tools = "`study_sources` and `run_exam` tools" if learning.exam else "`study_sources` tool"
    commands = "`/study`, `/reflect` and `/exam`" if learning.exam else "`/study` and `/reflect`"
    exam = (
        "; `run_exam` grades what the wiki recalls against the exam's questions, and every "
        "failed question becomes a `[gap]` goal"
        if learning.exam
        else ""
    )
    dreams = fragment.memory is not None and fragment.memory.dream is not None
    dream = (
        "; a study pass follows each dream run"
        if learning.study_on_dream and dreams and target in _DREAMING_TARGETS
        else ""
    )
    heartbeat = (
        "; while the host runs, a study pass on each heartbeat tick (every "
        "`SPECWIRE_HEARTBEAT_S` seconds, default 1800)"
        if learning.study_on_heartbeat
        else ""
    )
    return (
        f"Learning: the {tools}, the `learning-loop` skill and {commands}; a study pass reads "
        f"the {len(learning.sources)} source(s) of the spec's `learning` block into sourced "
        f"wiki articles{exam}{dream}{heartbeat}. Source and exam paths are relative to the "
        "working directory."
    )


def continuity_settings(fragment: MemoryWiringFragment) -> tuple[str, ...]:
    data = dict(fragment.to_data().get("continuity", {}))
    if data.get("scope") == "audience":  # managed ``auto``, not a spelling: said in prose
        data.pop("scope")
    return tuple(md_code(f"{key}: {value}") for key, value in _flatten(data))


def continuity_scope(fragment: MemoryWiringFragment) -> str | None:
    """The resolved ``continuity.scope`` (None: continuity is off)."""
    return fragment.continuity.scope if fragment.continuity is not None else None


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    for key, value in data.items():
        spelled = f"{prefix}{_spec_key(key)}"
        if isinstance(value, Mapping):
            items.extend(_flatten(value, f"{spelled}."))
        elif isinstance(value, bool):
            items.append((spelled, "true" if value else "false"))
        elif key in ("ttl_ms", "every_ms") and isinstance(value, int):
            items.append((spelled, format_duration(value)))
        else:
            items.append((spelled, str(value)))
    return items


def _spec_key(key: str) -> str:
    """The spec's (CrewHaus) spelling of a fragment key: ``recall_k`` → ``recallK``."""
    if key == "ttl_ms":
        return "ttl"
    if key == "every_ms":
        return "every"
    if key == "budget_usd":  # CrewHaus spells this one in snake_case
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def format_duration(millis: int) -> str:
    """The largest unit that states ``millis`` exactly: 7776000000 → ``90d``."""
    for unit, size in sorted(UNIT_MS.items(), key=lambda item: -item[1]):
        if millis % size == 0:
            return f"{millis // size}{unit}"
    return f"{millis}ms"


def agent_context(agent: IrAgent, tools: tuple[str, ...]) -> dict[str, Any]:
    return {"instructions": agent.instructions, "tools": tools}


def emit_plan(
    *,
    spec: IrSpec,
    context: Mapping[str, Any],
    model: ModelRef,
    secrets: Iterable[EnvVar] = (),
    extra_env: Iterable[EnvVar] = (),
    user_strings: Iterable[str] = (),
) -> Bundle:
    """Lower ``spec`` to its fragment and build the target's bundle.

    ``model`` reaches the templates as ``model`` (a ``ModelValue``) and ``model_prose``; a
    model given as a secret reference adds its variable to the README's secrets.
    """
    fragment = lower(spec)
    tenant_ids = [tenant.id for tenant in getattr(spec, "tenants", ())]
    secret_vars = (*model_secret(model), *secrets, *backend_env(fragment, tenant_ids))
    value = model_value(model)
    full_context = {
        **context,
        "bash_options": dict(spec.bash),
        "model": value,
        "model_prose": value.prose,
        "env_vars": env_vars(model, secret_vars, extra_env),
        "secrets": bool(secret_vars),
        "memory_settings": memory_settings(fragment),
        "wiki_settings": wiki_settings(fragment),
        "embedder_extra": embedder_extra(fragment),
        "backend_note": backend_note(fragment),
        "continuity_settings": continuity_settings(fragment),
        "continuity_scope": continuity_scope(fragment),
        "learning_note": learning_note(fragment, spec.target),
        "scope_note": scope_note(fragment, spec.target),
    }
    plan = BundlePlan(
        spec_name=spec.name,
        target=spec.target,
        fragment=fragment,
        files=output_files(spec.target),
        context=MappingProxyType(full_context),
        user_strings=(
            value.spelling,
            value.value,
            *user_strings,
            *(var.name for var in secret_vars),
        ),
    )
    return build_bundle(plan)

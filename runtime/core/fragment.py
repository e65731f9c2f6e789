"""The compiler ↔ runtime contract: the memory wiring fragment and every shared vocabulary.

The compiler lowers a spec into a ``MemoryWiringFragment``; a generated bundle embeds it as a
literal and hands it to ``wire_memory``. It carries only knobs the runtime really wires and only
fields the user declared (``None`` means "not declared": the runtime applies its default), so
adding a knob never changes the bytes of bundles that do not use it.

This module is the one place each vocabulary and limit both sides need is written (tool names,
id patterns, recall and TTL bounds, what the runtime can wire); ``ir`` imports them from here.
``FRAGMENT_VERSION`` is the shape of the fragment: a bundle carries the version it was built
for and the specwire that built it, and ``wire_memory`` refuses a newer one in one line.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import FragmentData
    from specwire.runtime.core.fragment_model import (
        ContinuityFragment as ContinuityFragment,
    )
    from specwire.runtime.core.fragment_model import (
        DocumentBindingFragment as DocumentBindingFragment,
    )
    from specwire.runtime.core.fragment_model import (
        DreamFragment as DreamFragment,
    )
    from specwire.runtime.core.fragment_model import (
        ExamFragment as ExamFragment,
    )
    from specwire.runtime.core.fragment_model import (
        LearningFragment as LearningFragment,
    )
    from specwire.runtime.core.fragment_model import (
        MemoryFactsFragment as MemoryFactsFragment,
    )
    from specwire.runtime.core.fragment_model import (
        MemoryToolFragment as MemoryToolFragment,
    )
    from specwire.runtime.core.fragment_model import (
        MemoryWiringFragment as MemoryWiringFragment,
    )
    from specwire.runtime.core.fragment_model import (
        ModelPriceFragment as ModelPriceFragment,
    )
    from specwire.runtime.core.fragment_model import (
        ProviderFragment as ProviderFragment,
    )
    from specwire.runtime.core.fragment_model import (
        ScopeFragment as ScopeFragment,
    )
    from specwire.runtime.core.fragment_model import (
        ThredzFragment as ThredzFragment,
    )
    from specwire.runtime.core.fragment_model import (
        WikiFragment as WikiFragment,
    )

# The release: pyproject.toml reads it from here, bundle headers name it.
SPECWIRE_VERSION: Final = "0.3.0"
# 1: specwire 0.1 (no version field); 2: ``version`` and ``specwire`` fields; 3: bundles import
# from ``specwire.runtime.bundle`` (``BUNDLE_INTERFACE``); 4: ``memory.scope`` and
# ``memory.tiers``, and the per-conversation builders (channel and managed ``build_turn``, crew
# ``build_session``) take the host's ``Audience``; 5: ``memory.protocol``, ``memory.tools``,
# ``memory.providers`` and ``memory.documents``; 6: ``memory.state`` (every tier in PostgreSQL),
# ``learning``, ``memory.dream.prices`` and ``thredz``; 7: channel, managed, crew and research
# hosts take the spec's ``mcp_servers``, ``learning.study_on_heartbeat`` and learning into
# Thredz's wiki (a spec with ``learning`` and ``thredz`` but no wiki of its own), and continuity
# scope ``audience`` (managed: a person's focus, plans and handoff). A bundle carries the lowest
# version that reads it (``specwire.ir.lowering``): a cli or research bundle without any of
# those fields still says 3.
FRAGMENT_VERSION: Final = 7
# The version that put every tier in PostgreSQL and added learning, dream prices and Thredz,
# written for bundles that use nothing of version 7.
STATE_FRAGMENT_VERSION: Final = 6
# The version that added several providers, provider tools and documents, written for bundles
# that use nothing of version 6.
PROVIDERS_FRAGMENT_VERSION: Final = 5
# The version that added scopes and tiers, written for bundles that use nothing of version 5.
SCOPES_FRAGMENT_VERSION: Final = 4
# The version before scopes, still written for bundles that use nothing of version 4.
PRE_SCOPES_FRAGMENT_VERSION: Final = 3

# What a Slack app that talks to a channel bundle subscribes to and the bot scopes it needs: the
# channel host answers these events, the bundle README and docs/serving.md list them.
SLACK_EVENT_SUBSCRIPTIONS: Final = (
    "message.channels",
    "message.groups",
    "message.im",
    "app_mention",
)
SLACK_BOT_SCOPES: Final = (
    "chat:write",
    "channels:history",
    "groups:history",
    "im:history",
    "app_mentions:read",
)

ProofMode = Literal["ladder", "require", "off"]
# ``continuity.scope`` as the fragment carries it (the spec's ``auto`` is resolved): ``spec``, one
# continuity for everyone; ``session``, one per conversation (the host's session id);
# ``audience``, one per person (managed: the request's ``user``, else its conversation).
ContinuityScope = Literal["spec", "session", "audience"]
# ``memory.autoRecall`` (CrewHaus 0.4): ``true`` is ``"session-start"``; only ``"per-turn"`` is
# carried in the fragment (``recall_mode``), so a spec written with ``true`` keeps its bytes.
RecallMode = Literal["session-start", "per-turn"]
RECALL_MODES: Final[tuple[RecallMode, ...]] = ("session-start", "per-turn")
DreamModeName = Literal["deterministic", "full"]
DREAM_MODE_NAMES: Final[tuple[DreamModeName, ...]] = ("deterministic", "full")

# -- vocabularies ---------------------------------------------------------------------------

BUILTIN_TOOL_NAMES: Final[tuple[str, ...]] = ("bash", "grep", "ls", "read", "write")
# The spec's ``bash:`` block: network choices and per-call limits as (default, largest).
BASH_NETWORKS: Final[tuple[str, ...]] = ("none", "outbound")
BASH_LIMITS: Final[dict[str, tuple[int, int]]] = {
    "memoryMb": (2048, 1024 * 1024),
    "processes": (256, 32768),
    "fileSizeMb": (1024, 1024 * 1024),
    "cpuSeconds": (600, 86_400),
}
# Tools no tenant fence can confine (a shell reaches every path the process can): the managed
# target does not offer them.
UNFENCEABLE_TOOL_NAMES: Final[frozenset[str]] = frozenset({"bash"})
FACT_TOOL_NAMES: Final[tuple[str, ...]] = ("Remember", "Recall", "MemoryRead", "MemoryForget")
# Registration order of the continuity tools.
CONTINUITY_TOOL_NAMES: Final[tuple[str, ...]] = (
    "FocusRead",
    "FocusWrite",
    "PlanRead",
    "PlanUpdate",
    "PlanComplete",
    "GoalWrite",
    "GoalUpdate",
    "GoalList",
    "MemoryClear",
)
# Crewship's tier tools (``runtime.facts.tiers``), in registration order, and the dotted names
# Crewship gives them (a spec that lists those means these).
TIER_TOOL_NAMES: Final[tuple[str, ...]] = (
    "memory_read",
    "memory_write",
    "memory_search",
    "memory_append_daily",
)
CREWSHIP_TIER_TOOLS: Final[dict[str, str]] = {
    "memory.read": "memory_read",
    "memory.write": "memory_write",
    "memory.search": "memory_search",
    "memory.append_daily": "memory_append_daily",
}
WIKI_TOOL_NAMES: Final[tuple[str, ...]] = (
    "wiki_recall",
    "wiki_semantic_search",
    "wiki_search",
    "wiki_get",
    "wiki_write",
    "wiki_list",
    "wiki_related",
    "wiki_set_signals",
    "wiki_stats",
    "log_knowledge_gap",
)

# What this runtime can wire. ``check`` and ``build`` refuse anything else with a located error.
WIRABLE_BACKENDS: Final[tuple[str, ...]] = ("file", "http", "postgres")
# The connection keys each backend takes, all required (``memory.dsn``, ``memory.url``, …).
BACKEND_CONNECTION_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "file": (),
    "http": ("url", "token"),
    "postgres": ("dsn",),
}
# Embedders are named ``provider/model``; ``hash/<dim>`` takes a dimension within these bounds.
# ``mock/deterministic`` is CrewHaus's name for its offline test embedder: here it is an alias
# of ``hash/256`` (the same vectors under the same id, so stored vectors are shared).
WIRABLE_EMBEDDER_PROVIDERS: Final[tuple[str, ...]] = (
    "hash",
    "local",
    "mock",
    "openai",
    "openai-compatible",
)
HASH_EMBEDDER_DIM_MIN: Final = 16
HASH_EMBEDDER_DIM_MAX: Final = 4096
LOCAL_EMBEDDER_MODELS: Final[tuple[str, ...]] = ("all-minilm-l6-v2",)
MOCK_EMBEDDER_MODELS: Final[tuple[str, ...]] = ("deterministic",)
# What ``mock/deterministic`` loads.
MOCK_EMBEDDER_ALIAS: Final = "hash/256"
# The pip extra (``specwire[<extra>]``) each provider's embedder needs.
EMBEDDER_EXTRAS: Final[dict[str, str]] = {
    "hash": "embed",
    "local": "embed-local",
    "mock": "embed",
    "openai": "embed-openai",
    "openai-compatible": "embed-openai",
}
WIRABLE_TIERS: Final[tuple[str, ...]] = ("facts", "continuity", "wiki")

# -- several providers, other wires, documents (fragment version 5) -------------------------

# ``memory.protocol`` (http backend only): our REST contract (the default) or OpenComputer's
# HTTP memory contract version 1 (docs/opencomputer.md).
MemoryProtocol = Literal["specwire", "opencomputer"]
MEMORY_PROTOCOLS: Final[tuple[MemoryProtocol, ...]] = ("specwire", "opencomputer")
# ``memory.providers``: the primary first (it takes the writes and its failure blocks the turn),
# then providers the router also reads. ``markdown`` is a read-only vault of notes: never the
# primary.
ROUTED_BACKENDS: Final[tuple[str, ...]] = ("file", "http", "markdown", "postgres")
READ_ONLY_BACKENDS: Final[tuple[str, ...]] = ("markdown",)
MAX_PROVIDERS: Final = 8
# A provider's name (and a document binding's name): OpenComputer's resource id.
RESOURCE_ID_PATTERN: Final = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
RESOURCE_ID_MAX_LENGTH: Final = 128
# How long the router waits for one provider's recall, unless the spec says.
PROVIDER_DEADLINE_MS_DEFAULT: Final = 2_000
# ``memory.tools``: provider-defined tools of an OpenComputer memory endpoint, exposed to the
# model as ``memory_<name>``.
MemoryToolAccess = Literal["read", "write"]
MEMORY_TOOL_ACCESS: Final[tuple[MemoryToolAccess, ...]] = ("read", "write")
MEMORY_TOOL_NAME_PATTERN: Final = r"^[a-z0-9_]{1,32}$"
MEMORY_TOOL_PREFIX: Final = "memory_"
MAX_MEMORY_TOOLS: Final = 8
# The top-level argument OpenComputer reserves in a provider tool's input schema.
MEMORY_TOOL_RESERVED_ARGUMENT: Final = "memory"
# OpenComputer's recalled-text limit (``maxBytes``): default and ceiling.
RECALL_MAX_BYTES_DEFAULT: Final = 8192
RECALL_MAX_BYTES_CEILING: Final = 16384
# ``memory.documents``: document memory bindings (OpenComputer's ``documentMemory``), on the
# file and PostgreSQL backends. A ``document`` binding names one document (``id``); a
# ``collection`` binding reads every document of the agent's collection. Access defaults to
# ``read`` (no tool writes unless the spec says ``read-write``).
DocumentScope = Literal["document", "collection"]
DOCUMENT_SCOPES: Final[tuple[DocumentScope, ...]] = ("document", "collection")
DocumentAccess = Literal["read", "read-write"]
DOCUMENT_ACCESS: Final[tuple[DocumentAccess, ...]] = ("read", "read-write")
DOCUMENT_BACKENDS: Final[tuple[str, ...]] = ("file", "postgres")
MAX_DOCUMENT_BINDINGS: Final = 8
DOCUMENT_TOOL_NAMES: Final[tuple[str, ...]] = ("memory_save", "memory_read", "memory_list")
# Names a provider-defined tool may not take (``memory_<name>`` would shadow one of ours).
RESERVED_MEMORY_TOOL_NAMES: Final[frozenset[str]] = frozenset(
    {"read", "write", "search", "append_daily", "save", "list"}
)
# The JSON Schema keywords a provider tool's input may use: the runtime checks the model's
# arguments against every one of them before the call (``$ref`` is refused by the contract;
# other keywords are refused because they would not be enforced).
MEMORY_TOOL_SCHEMA_KEYWORDS: Final[frozenset[str]] = frozenset(
    {
        # annotations
        "$schema", "$comment", "title", "description", "default", "examples", "deprecated",
        "readOnly", "writeOnly", "format",
        # any type
        "type", "enum", "const", "allOf", "anyOf", "oneOf", "not",
        # objects
        "properties", "required", "additionalProperties", "minProperties", "maxProperties",
        # arrays
        "items", "minItems", "maxItems", "uniqueItems",
        # strings
        "minLength", "maxLength", "pattern",
        # numbers
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    }
)  # fmt: skip

# -- the learning loop (``learning``, fragment version 6) -----------------------------------
# How an exam sample's answer is checked against what the agent's wiki recalls for its
# question (``runtime.learning.exam``): ``contains`` — the answer appears in it, case and
# whitespace folded; ``covers`` — at least 60% of the answer's distinct words (stop words
# dropped) are in it, the continuity graders' notion of "covered" (``runtime.evals.tokens``).
ExamGrader = Literal["contains", "covers"]
EXAM_GRADERS: Final[tuple[ExamGrader, ...]] = ("contains", "covers")
# Registration order: after the wiki's tools.
STUDY_TOOL_NAME: Final = "study_sources"
EXAM_TOOL_NAME: Final = "run_exam"
LEARNING_TOOL_NAMES: Final[tuple[str, ...]] = (STUDY_TOOL_NAME, EXAM_TOOL_NAME)
MAX_LEARNING_SOURCES: Final = 64
# A failed exam sample becomes a continuity goal titled like ``log_knowledge_gap``'s.
GAP_TITLE_PREFIX: Final = "[gap] "

# -- ids and limits -------------------------------------------------------------------------

# The agent's state folder inside its workspace (``runtime.core.paths``): spec paths that name
# files of the workspace (learning sources) must stay out of it.
SPECWIRE_DIRNAME: Final = ".specwire"

TENANT_ID_PATTERN: Final = r"^[a-zA-Z0-9][a-zA-Z0-9_\-]{0,63}$"
# Ids the stores mint and the tools accept: four digits at least, more once 9999 is passed.
PLAN_ID_PATTERN: Final = r"^plan-(\d{4,})$"
GOAL_ID_PATTERN: Final = r"^goal-(\d{4,})$"
PLAN_FILE_PATTERN: Final = r"^(plan-\d{4,})-([a-z0-9-]+)\.md$"
# A wiki article's slug: its file name, so no dot, slash or upper case ever reaches a path.
WIKI_SLUG_PATTERN: Final = r"^[a-z0-9][a-z0-9-]{0,127}$"
RECALL_K_MIN: Final = 1
RECALL_K_MAX: Final = 50
MS_PER_HOUR: Final = 3_600_000
MS_PER_DAY: Final = 24 * MS_PER_HOUR
TTL_MIN_MS: Final = MS_PER_HOUR
TTL_MAX_DAYS: Final = 3650
# ``memory.dream.every``: at least five minutes, at most the TTL ceiling.
DREAM_EVERY_MIN_MS: Final = 5 * 60_000
DREAM_EVERY_MAX_DAYS: Final = TTL_MAX_DAYS


def storage_name(spec_name: str) -> str:
    """A spec name made safe as one path component (names may hold spaces, dots and colons):
    the bundle's folder and the spec's stores.

    A name that is already safe is used as is; otherwise the safe form gets a short hash of
    the original, so "support bot" and "support-bot" never share a store or a folder.
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec_name).strip("-.")
    if safe == spec_name:
        return safe
    digest = hashlib.sha256(spec_name.encode("utf-8")).hexdigest()[:8]
    return f"{safe or 'spec'}-{digest}"


# -- the serving hosts' environment (bundle READMEs list these) -----------------------------

TENANTS_ROOT_ENV: Final = "SPECWIRE_TENANTS_ROOT"
SERVE_HOST_ENV: Final = "SPECWIRE_HOST"
SERVE_PORT_ENV: Final = "SPECWIRE_PORT"
MAX_BODY_ENV: Final = "SPECWIRE_MAX_BODY_BYTES"
SLACK_API_URL_ENV: Final = "SPECWIRE_SLACK_API_URL"
TENANT_KEY_ENV_PREFIX: Final = "SPECWIRE_TENANT_KEY_"


def embedder_problem(spec: str) -> str | None:
    """Why this runtime cannot wire the embedder ``provider/model``, or None.

    Only what the name itself decides (provider, dimension, model); a missing extra or API key is
    found when the embedder loads.
    """
    provider, _, model = spec.partition("/")
    if provider not in WIRABLE_EMBEDDER_PROVIDERS:
        return (
            f'unknown embedder provider "{provider}": known providers: '
            f"{', '.join(WIRABLE_EMBEDDER_PROVIDERS)}"
        )
    if not model:
        return f'embedder "{spec}" names no model: use "{provider}/<model>"'
    if provider == "hash":
        if not model.isdigit() or not HASH_EMBEDDER_DIM_MIN <= int(model) <= HASH_EMBEDDER_DIM_MAX:
            return (
                f'bad dimension "{model}" for the hash embedder: use hash/<dim> with dim from '
                f"{HASH_EMBEDDER_DIM_MIN} to {HASH_EMBEDDER_DIM_MAX}, such as hash/256"
            )
    elif provider == "local" and model not in LOCAL_EMBEDDER_MODELS:
        return (
            f'unknown local embedder model "{model}": known models: '
            f"{', '.join(LOCAL_EMBEDDER_MODELS)}"
        )
    elif provider == "mock" and model not in MOCK_EMBEDDER_MODELS:
        return (
            f'unknown mock embedder "{model}": the one mock embedder is mock/deterministic '
            f"(an alias of {MOCK_EMBEDDER_ALIAS})"
        )
    return None


def tenant_key_variable(tenant_id: str) -> str:
    """The variable holding a tenant's API key (``tenant-acme`` →
    ``SPECWIRE_TENANT_KEY_TENANT_ACME``)."""
    return TENANT_KEY_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", tenant_id).upper()


def tenant_secret_variable(env: str, tenant_id: str) -> str:
    """A per-tenant variant of a secret's variable (``MEMORY_TOKEN`` and ``tenant-acme`` →
    ``MEMORY_TOKEN_TENANT_ACME``): the managed target's memory-service token per tenant."""
    return f"{env}_" + re.sub(r"[^A-Za-z0-9]", "_", tenant_id).upper()


# Runtime defaults for undeclared memory knobs (DESIGN §3).
DEFAULT_AUTO_RECALL = True
DEFAULT_AUTO_CAPTURE = False
DEFAULT_RECALL_K = 5
DEFAULT_AUTO_CAPTURE_THRESHOLD = 1
DEFAULT_WIKI_RECALL_K = 6
DEFAULT_FOCUS_MAX_CHARS = 4096
# Per-turn recall refreshes every user turn unless ``refreshEvery`` says otherwise.
DEFAULT_REFRESH_EVERY = 1
DEFAULT_SESSION_RECALL = False
# CrewHaus resolves an undeclared ``memory.dream.mode`` to ``full``; its model phase still runs
# only with a ``budget_usd`` above 0 and a priced model (otherwise it is refused and reported).
DEFAULT_DREAM_MODE: Final[DreamModeName] = "full"


ScopeName = Literal["user", "conversation", "role", "agent", "crew"]

# The fragment's pydantic models live in ``fragment_model`` and load on first use (PEP 562,
# ``__getattr__`` below): the vocabularies above are imported by every bundle, the models only by
# one that wires memory (or the compiler).
_MODEL_NAMES: Final = frozenset(
    {
        "ContinuityFragment",
        "DocumentBindingFragment",
        "DreamFragment",
        "ExamFragment",
        "LearningFragment",
        "MemoryFactsFragment",
        "MemoryToolFragment",
        "MemoryWiringFragment",
        "ModelPriceFragment",
        "ProviderFragment",
        "ScopeFragment",
        "ThredzFragment",
        "WikiFragment",
    }
)


def __getattr__(name: str) -> Any:
    if name in _MODEL_NAMES:
        from specwire.runtime.core import fragment_model

        return getattr(fragment_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fragment_json_schema() -> dict[str, Any]:
    from specwire.runtime.core.fragment_model import MemoryWiringFragment

    return MemoryWiringFragment.model_json_schema()


def dream_enabled(fragment: MemoryWiringFragment | FragmentData) -> bool:
    memory = fragment.memory
    return memory_enabled(fragment) and memory is not None and memory.dream is not None


def memory_enabled(fragment: MemoryWiringFragment | FragmentData) -> bool:
    return fragment.memory is not None and fragment.memory.enabled is not False


def continuity_enabled(fragment: MemoryWiringFragment | FragmentData) -> bool:
    return fragment.continuity is not None


def learning_enabled(fragment: MemoryWiringFragment | FragmentData) -> bool:
    """The learning loop studies into the wiki: it is on only with the wiki."""
    return fragment.learning is not None and wiki_enabled(fragment)


def learning_on_thredz(fragment: MemoryWiringFragment | FragmentData) -> bool:
    """Without a wiki of its own, a spec with ``thredz`` learns into Thredz's wiki (CrewHaus:
    learning needs ``memory.wiki`` or ``thredz``): the host wires the loop's tools over the
    Thredz server once it is connected (``runtime.learning.thredz_home``)."""
    return (
        fragment.learning is not None
        and fragment.thredz is not None
        and memory_enabled(fragment)
        and not wiki_enabled(fragment)
    )


def wiki_enabled(fragment: MemoryWiringFragment | FragmentData) -> bool:
    memory = fragment.memory
    return (
        memory_enabled(fragment)
        and memory is not None
        and memory.wiki is not None
        and memory.wiki.enabled is not False
    )

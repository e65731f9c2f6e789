"""The composition root: ``wire_memory(fragment, deps)`` wires every enabled memory tier.

Order of operations: validate the fragment, then facts, continuity, wiki, learning, skills and
slash commands. Tools are registered into ``deps.catalog`` in that order. A memoryless fragment
touches nothing: no directory is created and nothing is registered.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment import (
    FRAGMENT_VERSION,
    SPECWIRE_VERSION,
    continuity_enabled,
    learning_enabled,
    learning_on_thredz,
    memory_enabled,
    wiki_enabled,
)
from specwire.runtime.core.fragment_data import FragmentData, FragmentShapeError, read_fragment
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.seams import LoopOptions, MemorySeam
from specwire.runtime.core.tenancy import Tenant, assert_inside
from specwire.runtime.core.tool_types import (
    Catalog,
    EventSink,
    Tool,
    ToolContext,
    ToolResult,
)
from specwire.runtime.core.volume import DocumentVolume

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import LearningData
    from specwire.runtime.core.fragment_model import MemoryWiringFragment
    from specwire.runtime.dream.engine import FactsOpener
    from specwire.runtime.dream.fact_steps import DreamFacts
    from specwire.runtime.facts.pool import FactStorePool
    from specwire.runtime.sessions.store import LogSource, SessionLogs

# What ``wire_memory`` takes: the bundle's literal, the compiler's model or an already read one.
FragmentInput: TypeAlias = "FragmentData | MemoryWiringFragment | Mapping[str, Any]"


def _stderr(line: str) -> None:
    sys.stderr.write(line)


# Wiring announcements this process already wrote to its stderr. Per-turn hosts wire on every
# turn; saying "continuity on — <dir>" once per process is information, every turn it is noise.
# A caller that passes its own ``deps.log`` gets every line. Bounded (least recently repeated
# out first): with session-scoped continuity every conversation announces its own folder, and a
# serving process must not keep one line per conversation forever.
ANNOUNCED_MAX = 4096
_announced: OrderedDict[str, None] = OrderedDict()
_announced_lock = threading.Lock()


def _first_announcement(
    line: str,
    *,
    remembered: OrderedDict[str, None] = _announced,
    limit: int = ANNOUNCED_MAX,
) -> bool:
    """Whether ``line`` is new to ``remembered`` (the process's lines unless a caller passes its
    own), which keeps the ``limit`` most recently repeated lines."""
    with _announced_lock:
        if line in remembered:
            remembered.move_to_end(line)
            return False
        remembered[line] = None
        if len(remembered) > limit:
            remembered.popitem(last=False)
        return True


class _AnnounceOnce:
    """A log that drops repeated lines while wiring runs, then passes everything through
    (lines logged later by the seams, like capture counts, are never deduplicated)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self.wiring = True

    def __call__(self, line: str) -> None:
        if self.wiring and not _first_announcement(line):
            return
        self._log(line)


@lazy_dataclass(frozen=True)
class HostResources:
    """What a host lends every turn it runs: built once per serving process (after any fork),
    passed to each ``build_turn`` and on through ``MemoryDeps.resources``, closed by the host
    when it stops. Tuning (how many stores stay open, for how long) lives in what the host
    built (``FactStorePool(max_open=…, idle_s=…)``), not in module globals."""

    # Open fact stores the turns borrow and give back; None: each turn opens and closes its own.
    fact_stores: FactStorePool | None = None
    # The clock every tier stamps with (``MemoryDeps.now``, when set, wins). One clock object
    # per process: the pool lends a store only for the clock it was opened with.
    clock: Clock = utc_now


@lazy_methods_dataclass
class MemoryDeps:
    """What a host passes ``wire_memory``: the catalog, the folder and its resources."""

    catalog: Catalog
    cwd: Path
    tenant: Tenant | None = None
    # Where session logs live (default: `<root>/sessions`); must stay inside a tenant's root.
    session_root_dir: Path | None = None
    # The conversation's session id; required by continuity with scope "session" (with scope
    # "audience" continuity follows ``audience`` instead).
    session_scope: str | None = None
    # Also receives every event the memory tools emit (plan_update, goal_update, action_proof,
    # wiki_write).
    append_event: EventSink | None = None
    # A ready ``runtime.embedders.Embedder`` (tests); otherwise the spec's ``memory.embedder``
    # (and ``memory.wiki.embedder``) is loaded by name. Facts and the wiki rank by meaning with it.
    embedder: Any = None
    log: Callable[[str], None] = _stderr
    home_dir: Path | None = None
    now: Clock | None = None
    # Lent by the host (per-turn hosts); None: the wiring opens what it needs and ``close``
    # closes it.
    resources: HostResources | None = None
    # Who the agent talks to in this turn or session, as the host knows it (a Slack user and
    # channel, a managed request's user and session, a crew role). Required when the fragment
    # has ``memory.scope``; ignored without it (every fact is the agent's).
    audience: Audience | None = None

    def clock(self) -> Clock:
        """``now`` if set, else the host's clock, else the system's UTC clock."""
        if self.now is not None:
            return self.now
        return self.resources.clock if self.resources is not None else utc_now

    def fact_stores(self) -> FactStorePool | None:
        return self.resources.fact_stores if self.resources is not None else None


@lazy_methods_dataclass
class WiredStores:
    """The stores ``wire_memory`` opened, by tier (None where the tier is off)."""

    memory: Any = None
    continuity: Any = None
    wiki: Any = None
    documents: Any = None


@lazy_methods_dataclass
class WiredMemory:
    """What ``wire_memory`` wired: its stores, tools and loop options; ``close`` releases them."""

    stores: WiredStores = field(default_factory=WiredStores)
    tools: list[Tool] = field(default_factory=list)
    options: LoopOptions = field(default_factory=lambda: LoopOptions())
    # () -> the summary line of one study pass of the spec's ``learning`` sources into its
    # wiki (None: the spec does not learn); a host's heartbeat calls it
    # (``runtime.hosts.heartbeat``).
    study: Callable[[], str] | None = None
    _releases: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def close(self) -> None:
        """Release open stores: close the fact store's SQLite connection, or give it back to the
        host's pool (``HostResources.fact_stores``). Idempotent."""
        while self._releases:
            self._releases.pop()()


def parse_fragment(fragment: FragmentInput) -> FragmentData:
    """The fragment a bundle (a mapping: the literal the compiler wrote), the compiler (its
    pydantic model) or a caller that already parsed one hands over, checked without pydantic."""
    if isinstance(fragment, FragmentData):
        parsed = fragment
    else:
        data = _fragment_data(fragment)
        _check_version(data)
        try:
            parsed = read_fragment(data)
        except FragmentShapeError as exc:
            raise MemoryServiceError(f"memory-service: invalid fragment: {exc}") from None
    if not parsed.spec_name.strip():
        raise MemoryServiceError("memory-service: fragment.spec_name is required")
    return parsed


def _fragment_data(fragment: MemoryWiringFragment | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(fragment, Mapping):
        return fragment
    # The compiler's model: only a process that already imported pydantic can hold one.
    models = sys.modules.get("specwire.runtime.core.fragment_model")
    if models is not None and isinstance(fragment, models.MemoryWiringFragment):
        data: dict[str, Any] = fragment.to_data()
        return data
    raise MemoryServiceError(
        f"memory-service: invalid fragment: must be a mapping, not {type(fragment).__name__}"
    )


def _check_version(fragment: Mapping[str, Any]) -> None:
    """A fragment newer than this runtime is refused before its shape is looked at."""
    version = fragment.get("version", 1)  # specwire 0.1 bundles carry no version
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise MemoryServiceError(f"memory-service: invalid fragment: version: {version!r}")
    if version > FRAGMENT_VERSION:
        built_by = fragment.get("specwire")
        needs = f"specwire {built_by} or newer" if isinstance(built_by, str) else "a newer specwire"
        raise MemoryServiceError(
            f"this bundle needs {needs} (its memory fragment is version {version}; the installed "
            f"specwire {SPECWIRE_VERSION} reads versions up to {FRAGMENT_VERSION}): "
            f'pip install "specwire>={built_by or SPECWIRE_VERSION}"'
        )


def _layout(
    fragment: FragmentData, deps: MemoryDeps, state_of: FragmentData
) -> tuple[StoreLayout, LogSource]:
    layout = StoreLayout.for_cwd(deps.cwd, fragment.spec_name, deps.tenant)
    if state_in_database(state_of):
        # The proof ladder and capture read the logs every host writes there (and, after them,
        # the files of sessions logged before the spec moved its state to the database).
        from specwire.runtime.sessions.store import FallbackLogReader, FileSessionLogs

        files = deps.session_root_dir or layout.sessions_dir
        in_database = session_logs_for(state_of, deps.tenant, files, deps.clock())
        return layout, FallbackLogReader(in_database, FileSessionLogs(files))
    if deps.session_root_dir is None:
        return layout, layout.sessions_dir
    sessions_dir = deps.session_root_dir
    if deps.tenant is not None:
        sessions_dir = assert_inside(sessions_dir, deps.tenant.root)
    return layout, sessions_dir


def _teeing(tool: Tool, sink: EventSink) -> Tool:
    """The same tool, with every event it emits also sent to ``sink``."""
    handler = tool.handler

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        inner = ctx.emit

        def emit(kind: str, payload: Mapping[str, Any]) -> None:
            inner(kind, payload)
            sink(kind, payload)

        return handler(parsed, dataclasses.replace(ctx, emit=emit))

    return dataclasses.replace(tool, handler=handle)


def _check_supported(fragment: FragmentData) -> None:
    memory = fragment.memory
    if memory_enabled(fragment) and memory is not None:
        from specwire.runtime.facts.wiring import check_backend

        check_backend(memory.backend)


def wire_memory(fragment: FragmentInput, deps: MemoryDeps) -> WiredMemory:
    return _wire(fragment, deps, facts=True)


def _wire(
    fragment: FragmentInput,
    deps: MemoryDeps,
    *,
    facts: bool,
    state_of: FragmentData | None = None,
) -> WiredMemory:
    """``state_of``: the fragment whose ``memory.state`` says where the state documents live
    (default: ``fragment``; ``wire_continuity`` drops the memory section but not that)."""
    parsed = parse_fragment(fragment)
    _check_supported(parsed)
    wired = WiredMemory()
    if not memory_enabled(parsed) and not continuity_enabled(parsed):
        return wired

    layout, sessions_dir = _layout(parsed, deps, state_of or parsed)
    now = deps.clock()
    announce = _AnnounceOnce(deps.log) if deps.log is _stderr else None
    try:
        volume = _state_volume(state_of or parsed, deps, layout)
        _wire_tiers(
            parsed, deps, wired, layout, sessions_dir, now, announce or deps.log, facts, volume
        )
    except BaseException:
        wired.close()
        raise
    finally:
        if announce is not None:
            announce.wiring = False
    return wired


def _wire_tiers(
    parsed: FragmentData,
    deps: MemoryDeps,
    wired: WiredMemory,
    layout: StoreLayout,
    sessions_dir: LogSource,
    now: Clock,
    log: Callable[[str], None],
    with_facts: bool,
    volume: DocumentVolume | None,
) -> None:
    facts_on = with_facts and memory_enabled(parsed)
    continuity_on = continuity_enabled(parsed)
    wiki_on = wiki_enabled(parsed)

    if facts_on and parsed.memory is not None:
        from specwire.runtime.facts.wiring import wire_facts

        facts = wire_facts(
            parsed.memory,
            layout,
            sessions_dir=sessions_dir,
            now=now,
            log=log,
            embedder=deps.embedder,
            tenant=deps.tenant,
            fact_stores=deps.fact_stores(),
            audience=deps.audience,
            # ``memory.providers`` paths: the agent's folder, or a tenant's own root.
            agent_folder=deps.tenant.root if deps.tenant is not None else deps.cwd,
        )
        wired.stores.memory = facts.store if facts.store is not None else facts.provider
        wired._releases.append(facts.release)
        wired.tools.extend(facts.tools)
        wired.options["memory"] = facts.seam
        if parsed.memory.session_recall:
            from specwire.runtime.facts.session_index import session_recall_seam

            wired.options["memory"] = session_recall_seam(
                facts.seam,
                layout,
                exclude=deps.session_scope,
                now=now,
                scope=facts.scoping.write_key,
                visible=facts.scoping.visible,
                volume=volume,
            )
        if parsed.memory.dream is not None:
            from specwire.runtime.dream.model_phase import spec_prices
            from specwire.runtime.dream.schedule import DreamJob, dream_settings

            job = DreamJob(
                layout,
                dream_settings(parsed.memory.dream),
                deps.log,
                proof_mode=parsed.continuity.proof if parsed.continuity is not None else "ladder",
                emit=deps.append_event,
                now=now,
                volume=volume,
                prices=spec_prices(parsed.memory.dream.prices),
                facts=dream_facts(parsed, deps.tenant, now),
            )
            wired.options["memory"] = dataclasses.replace(
                wired.options["memory"], dream=job.start_if_due
            )
        if parsed.memory.tiers:
            from specwire.runtime.facts.tiers.wiring import wire_tier_notes

            tiers = wire_tier_notes(
                parsed.memory,
                facts.provider,
                deps.audience,
                wired.options.get("memory"),
                now=now,
                log=log,
            )
            wired.tools.extend(tiers.tools)
            wired.options["memory"] = tiers.seam
        if parsed.memory.documents:
            from specwire.runtime.documents.wiring import wire_documents

            documents = wire_documents(
                parsed.memory,
                layout,
                wired.options.get("memory"),
                tenant=deps.tenant,
                now=now,
                log=log,
            )
            wired.stores.documents = documents.session.store
            wired.tools.extend(documents.tools)
            wired.options["memory"] = documents.seam

    if continuity_on and parsed.continuity is not None:
        continuity = _build_continuity(parsed, deps, layout, sessions_dir, now, log, volume)
        wired.stores.continuity = continuity.store
        wired.tools.extend(continuity.tools)
        wired.options["continuity"] = continuity.seam

    if wiki_on:
        _wire_wiki_tier(parsed, deps, wired, layout, now, log, volume)

    learning_on = learning_enabled(parsed) and wired.stores.wiki is not None
    if learning_on:
        _wire_learning(parsed, deps, wired, log)
    # Learning into Thredz's wiki: its skill and commands here, its tools from the host.
    learning_on = learning_on or learning_on_thredz(parsed)

    plans_on = continuity_on and parsed.continuity is not None and parsed.continuity.plan
    _wire_skills_and_commands(
        wired,
        deps,
        facts_on=facts_on,
        continuity_on=continuity_on,
        plans_on=plans_on,
        wiki_on=wiki_on,
        learning=parsed.learning if learning_on else None,
        dream_on=facts_on and parsed.memory is not None and parsed.memory.dream is not None,
    )

    if deps.append_event is not None:
        wired.tools = [_teeing(tool, deps.append_event) for tool in wired.tools]
    for tool in wired.tools:
        deps.catalog.register(tool)


def _wire_wiki_tier(
    parsed: FragmentData,
    deps: MemoryDeps,
    wired: WiredMemory,
    layout: StoreLayout,
    now: Clock,
    log: Callable[[str], None],
    volume: DocumentVolume | None,
) -> None:
    from specwire.runtime.wiki.wiring import build_wiki

    assert parsed.memory is not None and parsed.memory.wiki is not None
    wiki_fragment = parsed.memory.wiki
    declared = wiki_fragment.embedder or parsed.memory.embedder
    embedder = deps.embedder
    if embedder is None and declared is not None:
        from specwire.runtime.embedders import load_embedder

        embedder = load_embedder(declared)
    plans_on = parsed.continuity is not None and parsed.continuity.plan
    goals = wired.stores.continuity if plans_on else None
    wiki = build_wiki(
        wiki_fragment, layout, embedder=embedder, goals=goals, now=now, log=log, volume=volume
    )
    wired.stores.wiki = wiki.store
    wired.tools.extend(wiki.tools)
    if wiki.recall is not None:
        wired.options["memory"] = _fused_seam(
            wired.options.get("memory"), wiki.recall, wiki.recall_k
        )


def _wire_learning(
    parsed: FragmentData, deps: MemoryDeps, wired: WiredMemory, log: Callable[[str], None]
) -> None:
    from specwire.runtime.core.fragment import DEFAULT_WIKI_RECALL_K
    from specwire.runtime.learning.wiring import (
        study_after_dream,
        study_pass_summary,
        wire_learning,
    )

    assert parsed.learning is not None and parsed.memory is not None
    wiki = parsed.memory.wiki
    plans_on = parsed.continuity is not None and parsed.continuity.plan
    learning = wire_learning(
        parsed.learning,
        wired.stores.wiki,
        goals=wired.stores.continuity if plans_on else None,
        recall_k=(wiki.recall_k if wiki is not None else None) or DEFAULT_WIKI_RECALL_K,
        workspace=deps.cwd,
        log=log,
    )
    wired.tools.extend(learning.tools)
    context = learning.context
    wired.study = lambda: study_pass_summary(context)
    seam = wired.options.get("memory")
    if parsed.learning.study_on_dream and seam is not None and seam.dream is not None:
        wired.options["memory"] = dataclasses.replace(
            seam, dream=study_after_dream(seam.dream, learning.context, deps.log)
        )


def _fused_seam(
    facts: MemorySeam | None, wiki_recall: Callable[[str, int], list[str]], wiki_k: int
) -> MemorySeam:
    """The facts seam with the top ``wiki_k`` articles' lines after the fact lines
    (``recall(q, k) = [...fact lines, ...wiki lines]``). Auto-recall is on even when fact
    auto-recall is off."""
    fact_recall = facts.recall if facts is not None and facts.auto_recall else None
    fact_k = facts.recall_k if fact_recall is not None and facts is not None else 0

    def recall(query: str, k: int) -> list[str]:
        lines = fact_recall(query, fact_k) if fact_recall is not None else []
        return [*lines, *wiki_recall(query, wiki_k)]

    base = facts if facts is not None else MemorySeam()
    return dataclasses.replace(base, auto_recall=True, recall_k=fact_k + wiki_k, recall=recall)


def _build_continuity(
    fragment: FragmentData,
    deps: MemoryDeps,
    layout: StoreLayout,
    sessions_dir: LogSource,
    now: Clock,
    log: Callable[[str], None],
    volume: DocumentVolume | None,
) -> Any:
    from specwire.runtime.continuity.wiring import build_continuity

    assert fragment.continuity is not None
    return build_continuity(
        fragment.continuity,
        layout,
        sessions_dir=sessions_dir,
        session_scope=deps.session_scope,
        now=now,
        log=log,
        volume=volume,
        audience=deps.audience,
    )


def _state_volume(
    fragment: FragmentData, deps: MemoryDeps, layout: StoreLayout
) -> DocumentVolume | None:
    """Where continuity, the wiki and dream state keep their documents: None (files under the
    layout's root) unless the fragment says ``memory.state: postgres``; then the tenant's spec
    in the facts' database, on the process's pool for ``memory.dsn`` (opened and migrated once
    per process, not per turn)."""
    return state_volume(fragment, layout, deps.tenant)


def state_volume(
    fragment: FragmentData, layout: StoreLayout, tenant: Tenant | None
) -> DocumentVolume | None:
    """The ``PostgresVolume`` of ``tenant``'s spec when the fragment keeps state in PostgreSQL
    (the owner's commands open the same one); None for files."""
    memory = fragment.memory
    if memory is None or memory.state != "postgres":
        return None
    from specwire.runtime.core.errors import StoreError
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool
    from specwire.runtime.pg.volume import PostgresVolume

    try:
        return PostgresVolume(
            shared_postgres_pool(memory),
            layout.root,
            tenant=tenant.id if tenant is not None else DEFAULT_TENANT,
            spec=layout.spec_name,
        )
    except StoreError as exc:
        raise MemoryServiceError(f"memory-service: postgres state: {exc}") from exc


def dream_facts(
    fragment: FragmentData, tenant: Tenant | None, now: Clock = utc_now
) -> FactsOpener | None:
    """What the dream's fact steps run on: the spec's PostgreSQL facts with ``memory.backend:
    postgres`` (connected when the run starts, released when its fact steps end), None (the
    spec's file store) otherwise. Never the local SQLite file of a spec whose facts live in
    the database: a worker would create ``facts/<spec>.sqlite3`` and consolidate nothing."""
    memory = fragment.memory
    if memory is None or memory.backend != "postgres":
        return None
    spec = fragment.spec_name

    @contextmanager
    def opened() -> Iterator[DreamFacts]:
        from specwire.runtime.facts.providers.connect import connect_remote

        remote = connect_remote(memory, spec=spec, tenant=tenant, embedder=None, now=now)
        try:
            provider: Any = remote.provider
            yield cast("DreamFacts", provider)
        finally:
            remote.release()

    return opened


def _wire_skills_and_commands(
    wired: WiredMemory,
    deps: MemoryDeps,
    *,
    facts_on: bool,
    continuity_on: bool,
    plans_on: bool,
    wiki_on: bool,
    learning: LearningData | None = None,
    dream_on: bool = False,
) -> None:
    from specwire.runtime.skills.loader import (
        DREAM_COMMANDS,
        EXAM_COMMANDS,
        FACTS_COMMANDS,
        FOCUS_COMMANDS,
        LEARNING_COMMANDS,
        PLAN_COMMANDS,
        WIKI_COMMANDS,
        load_commands,
        load_skills,
    )

    home_dir = deps.home_dir if deps.home_dir is not None else Path.home()
    builtin_skills = (
        ({"continuity"} if continuity_on else set())
        | ({"wiki"} if wiki_on else set())
        | ({"dream"} if dream_on else set())
    )
    if learning is not None:
        builtin_skills.add("learning-loop")
    allowed_commands = (
        (FOCUS_COMMANDS if continuity_on else frozenset())
        | (PLAN_COMMANDS if plans_on else frozenset())
        | (FACTS_COMMANDS if facts_on else frozenset())
        | (WIKI_COMMANDS if wiki_on else frozenset())
        | (LEARNING_COMMANDS if learning is not None else frozenset())
        | (EXAM_COMMANDS if learning is not None and learning.exam is not None else frozenset())
        | (DREAM_COMMANDS if dream_on else frozenset())
    )
    skills = load_skills(builtin_skills, cwd=deps.cwd, home_dir=home_dir, warn=deps.log)
    if learning is not None:
        from specwire.runtime.learning.skill import rendered_skills

        skills = rendered_skills(skills, learning)
    commands = load_commands(allowed_commands, cwd=deps.cwd, home_dir=home_dir, warn=deps.log)
    if skills:
        wired.options["skills"] = skills
    if commands:
        wired.options["slash_commands"] = commands


def wire_continuity(fragment: FragmentInput, deps: MemoryDeps) -> WiredMemory | None:
    """Wire only the continuity tier (None when the fragment has no continuity)."""
    parsed = parse_fragment(fragment)
    if not continuity_enabled(parsed):
        return None
    only_continuity = dataclasses.replace(parsed, memory=None)
    return _wire(only_continuity, deps, facts=True, state_of=parsed)


def wire_wiki(fragment: FragmentInput, deps: MemoryDeps) -> WiredMemory | None:
    """Wire only the wiki tier (None when the fragment has no enabled wiki). Without
    continuity, knowledge gaps are recorded in the wiki itself."""
    parsed = parse_fragment(fragment)
    if not wiki_enabled(parsed):
        return None
    only_wiki = dataclasses.replace(parsed, continuity=None)
    return _wire(only_wiki, deps, facts=False)


# -- session logs: files, or the database with ``memory.state: postgres`` -----------------------


def state_in_database(fragment: FragmentData) -> bool:
    """Whether the spec keeps its state tiers (session logs, usage, ...) in PostgreSQL."""
    memory = fragment.memory
    return memory is not None and memory.state == "postgres"


def session_logs_for(
    fragment: FragmentData, tenant: Tenant | None, sessions_dir: Path, now: Clock = utc_now
) -> SessionLogs:
    """Where this spec's (this tenant's) session logs live: the database's
    ``session_log_events`` with ``memory.state: postgres`` (on the process's pool for
    ``memory.dsn``), else JSONL files in ``sessions_dir``."""
    from specwire.runtime.sessions.store import FileSessionLogs

    if not state_in_database(fragment):
        return FileSessionLogs(sessions_dir)
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    assert fragment.memory is not None
    return PostgresSessionLogs(
        shared_postgres_pool(fragment.memory),
        tenant=tenant.id if tenant is not None else DEFAULT_TENANT,
        spec=fragment.spec_name,
        now=now,
    )

"""Crew delegation: the ``Delegate`` tool runs another role's loop as a linked sub-session.

``Delegate {role, task}`` runs the named role (a role of the spec, never another) as a
single-turn session whose user message is ``task``, and returns that role's answer. The sub-
session shares the crew's tools (``Delegate`` included, so roles chain) and stores. Links both
ways: the caller's log records ``sub_agent_start`` / ``sub_agent_end`` naming the child session
(the proof ladder follows these, so a step can be proven by a tool call a sub-session made, and
the proof names that session); the child's ``session_start`` names its ``parent``, the
``runId`` (the crew session the user talks to) and the delegation chain. With an ``activity``
(the crew host's, on a terminal) the sub-session's progress shows on stderr, labelled
``role ← caller``.

With scoped memory (a bundle whose ``build_session`` takes the role's audience), each role runs
with its own wiring (``role_setup``, built once per role and process): its ``role`` memories are
its own, ``crew`` memories every role's. Otherwise every role shares the caller's tools.

Bounds: a role already in the chain is refused (A → B → A is a cycle, reported as such, never a
hang); at most ``MAX_DEPTH`` delegations below the entry session, ``MAX_FAN_OUT`` per session
and ``MAX_PER_RUN`` in one run (depth × fan-out would otherwise allow thousands).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import Field

from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import (
    DELEGATE_TOOL_NAME,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolInput,
    ToolRefusal,
    ToolResult,
    guarded,
)
from specwire.runtime.hosts.activity import Activity
from specwire.runtime.hosts.types import RoleConfig, TurnSetup
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import Model, ModelError
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.sessions.store import SessionLogs, SessionRecorder

MAX_DEPTH: Final = 4
MAX_FAN_OUT: Final = 8
MAX_PER_RUN: Final = 32
MAX_TASK_CHARS: Final = 8_000


class DelegateInput(ToolInput):
    role: str = Field(
        min_length=1, max_length=64, description="The role to hand the task to (a crew role)."
    )
    task: str = Field(
        min_length=1,
        max_length=MAX_TASK_CHARS,
        description="What that role should do, self-contained: it sees only this text, the "
        "shared memory and the plan.",
    )


@dataclass(frozen=True)
class _Place:
    role: str
    chain: tuple[str, ...]  # the roles from the run's entry session down to this one
    run_id: str


class Crew:
    """The roles of one crew process and the sessions delegation opened."""

    def __init__(
        self,
        *,
        spec_name: str,
        entry: str,
        roles: Mapping[str, RoleConfig],
        model_for: Callable[[RoleConfig], Model | None],
        options: LoopOptions,
        sessions_dir: Path,
        log: Callable[[str], None],
        session_logs: SessionLogs | None = None,
        role_setup: Callable[[str], TurnSetup] | None = None,
        activity: Activity | None = None,
    ) -> None:
        self.spec_name = spec_name
        self.activity = activity
        self.role_setup = role_setup
        self._setups: dict[str, TurnSetup] = {}
        self._setups_lock = threading.Lock()
        self.entry = entry
        self.roles = dict(roles)
        self.model_for = model_for
        self.options = options
        self.sessions_dir = sessions_dir
        # Where the sub-sessions log (the database with memory.state: postgres); None: files
        # in ``sessions_dir``.
        self.session_logs = session_logs
        self.log = log
        self.catalog: ToolCatalog | None = None
        self.root_role = entry
        self._places: dict[str, _Place] = {}
        self._fan_out: dict[str, int] = {}
        self._per_run: dict[str, int] = {}
        self._lock = threading.Lock()

    def tool(self, catalog: ToolCatalog) -> Tool:
        """The ``Delegate`` tool; sub-sessions run with ``catalog`` (which should hold it)."""
        self.catalog = catalog
        listing = "; ".join(
            f"{name}: {_first_line(role.instructions)}" for name, role in self.roles.items()
        )
        return Tool(
            DELEGATE_TOOL_NAME,
            "Hand a task to another role of the crew and get its answer back. The role works "
            f"in its own linked session with the shared memory and plan. Roles: {listing}",
            DelegateInput,
            guarded(DELEGATE_TOOL_NAME, self._delegate),
        )

    def _tools_for(self, role: str) -> tuple[ToolCatalog, LoopOptions]:
        """The catalog and loop options a role's sub-session runs with."""
        shared = self.catalog if self.catalog is not None else ToolCatalog()
        if self.role_setup is None:
            return shared, self.options
        with self._setups_lock:
            setup = self._setups.get(role)
            if setup is None:
                setup = self.role_setup(role)
                delegate = shared.get(DELEGATE_TOOL_NAME)
                if delegate is not None and setup.catalog.get(DELEGATE_TOOL_NAME) is None:
                    setup.catalog.register(delegate)
                self._setups[role] = setup
        return setup.catalog, setup.options

    def _session_log(self, session_id: str) -> SessionRecorder:
        if self.session_logs is not None:
            return self.session_logs.open(session_id)
        return SessionLog(self.sessions_dir, session_id)

    def release(self) -> None:
        """Release the roles' own wirings (their fact stores). Idempotent."""
        with self._setups_lock:
            setups, self._setups = list(self._setups.values()), {}
        for setup in setups:
            setup.release()

    def _place(self, session_id: str) -> _Place:
        # A session delegation did not open is the one the user talks to: the run's root.
        return self._places.get(session_id) or _Place(self.root_role, (self.root_role,), session_id)

    def _delegate(self, args: DelegateInput, ctx: ToolContext) -> ToolResult:
        role = self.roles.get(args.role)
        if role is None:
            known = ", ".join(self.roles)
            raise ToolRefusal(f'unknown role "{args.role}" (roles: {known})')
        with self._lock:
            place = self._place(ctx.session_id)
            if args.role in place.chain:
                cycle = " → ".join([*place.chain, args.role])
                raise ToolRefusal(
                    f"delegation cycle refused: {cycle} ({args.role} is already working on this "
                    "task further up; answer it yourself or hand it to another role)"
                )
            if len(place.chain) > MAX_DEPTH:
                raise ToolRefusal(f"delegation depth limit reached ({MAX_DEPTH} levels)")
            if self._fan_out.get(ctx.session_id, 0) >= MAX_FAN_OUT:
                raise ToolRefusal(f"at most {MAX_FAN_OUT} delegations per session")
            if self._per_run.get(place.run_id, 0) >= MAX_PER_RUN:
                raise ToolRefusal(f"at most {MAX_PER_RUN} delegations per run")
            self._fan_out[ctx.session_id] = self._fan_out.get(ctx.session_id, 0) + 1
            self._per_run[place.run_id] = self._per_run.get(place.run_id, 0) + 1
            child = _Place(args.role, (*place.chain, args.role), place.run_id)
            child_id = new_session_id()
            self._places[child_id] = child
        model = self.model_for(role)
        if model is None:
            raise ToolRefusal(f"the model of role {args.role} could not be loaded")
        catalog, options = self._tools_for(args.role)
        ctx.emit(
            "sub_agent_start",
            {"childSessionId": child_id, "role": args.role, "task": args.task},
        )
        replies: list[str] = []
        stop = "abort"
        label = f"{args.role} ← {place.role}"
        if self.activity is not None:
            self.activity.note(label, f"started: {_first_line(args.task)}")
        try:
            result = run_chat_loop(
                model=model,
                instructions=role.instructions,
                catalog=catalog,
                session_log=self._session_log(child_id),
                inputs=[args.task],
                output=replies.append,
                single_turn=True,
                spec_name=self.spec_name,
                target="crew",
                session_info={
                    "role": args.role,
                    "entry": self.entry,
                    "parent": ctx.session_id,
                    "runId": child.run_id,
                    "chain": list(child.chain),
                },
                log=self.log,
                stream=None if self.activity is None else self.activity.sink(label),
                **options,
            )
            stop = result.stop_reason
        except ModelError as exc:
            stop = "error"
            return ToolResult(f"{args.role} could not answer: {exc}", True)
        finally:
            ctx.emit("sub_agent_end", {"childSessionId": child_id, "stopReason": stop})
        answer = "\n".join(replies).strip() or "(no answer)"
        return ToolResult(f"answer from {args.role} (session {child_id}):\n{answer}")


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= 120 else line[:119] + "…"

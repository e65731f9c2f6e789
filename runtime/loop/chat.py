"""The agent loop: read user messages, call the model, run its tools, log everything.

``run_chat_loop`` consumes the memory seams (``memory``, ``continuity``, ``skills``,
``slash_commands`` — the keys of ``LoopOptions``, spread in by hosts) without importing any
store. One session log (JSONL) records the session:

``session_start`` → ``recall`` (when auto-recall ran) → ``context`` (the system blocks exactly as
injected) → per turn ``user_message`` (+ a ``synthetic`` one for a slash command), ``tool_use`` /
``tool_result`` pairs, tool events, ``context_refresh`` (the prompt after the plan tail changed),
``context_evicted`` (user messages leaving the window), ``assistant_message`` (with ``usage``:
the turn's input/output/cached tokens, when the model reports them) → ``session_end``.

Teardown always runs, once: ``continuity.on_handoff``, then ``memory.on_capture``, then
``session_end``. The stop reason is ``exit`` (end of input or ``/exit``), ``complete`` (a
single-turn session answered) or ``abort`` (an exception; it is re-raised after teardown).
A failed auto-recall is such an exception (``RecallUnavailableError``): the turn is not
answered rather than answered with silently empty memory.

Per-turn recall (``MemorySeam.recall_mode == "per-turn"``): after the session's first recall,
every ``refresh_every`` user turns recall runs again, first for the latest user message, then
for the other messages typed since the last recall (newest first, ``MAX_REFRESH_QUERIES``
queries in all), at most ``recall_k`` lines.
The new block **replaces** the recalled block (or removes it when nothing was found), so the
prompt never holds more than ``recall_k`` recalled lines. Each refresh logs a ``recall`` event
(with ``turn`` and ``refresh: true``) and, when the prompt changed, a ``context_refresh``; a
failed refresh blocks the turn exactly as the first recall does. A per-turn host (channel,
managed) runs one loop per message: there the conversation's last recall is read back from its
session log and carried into the prompt (a ``recall`` event with ``carried: true``) until the
next refresh is due, which then recalls for the messages typed since.

At teardown, after capture, ``memory.on_session_end`` leaves the session's summary record for
session recall (``memory.sessionRecall``).

Streaming (``stream=sink``): a sink that raises ``StreamCancelled`` (a client went away, Ctrl-C)
during a model call or around a tool ends the turn there, cleanly, and ``run_chat_loop`` does
not raise it. The turn is recorded once, as an ``assistant_message`` with ``"cancelled": true``:
``text`` is what had been streamed of the unfinished answer (since the last ``Restart``),
``usage`` the turn's finished model calls plus the cancelled one (the provider's last
``UsageReport`` when it sent one, else an estimate, and never less output than about four
characters a token of the streamed text). No tool of the unfinished response runs; calls of a
tool round not yet run get an error result in the conversation (not in the log, which holds only
what ran); nothing is auto-captured from a cancelled answer; ``output`` and the sink are not
called for it. The session goes on with the next message (``LoopResult.cancelled_turns`` counts
them); a single-turn session stops with ``cancelled``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import RecallUnavailableError
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.seams import (
    ContinuitySeam,
    HandoffInput,
    LedgerEntry,
    MemorySeam,
    Skill,
    SlashCommand,
    StopReason,
)
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.core.undecodable import valid_text
from specwire.runtime.loop.cancelled import CANCELLED_RESULT, StreamWatch
from specwire.runtime.loop.commands import help_text, parse_command, unknown_command_text
from specwire.runtime.loop.context import (
    DEFAULT_CONTEXT_MAX_CHARS,
    DEFAULT_CONTEXT_MAX_MESSAGES,
    ContextWindow,
)
from specwire.runtime.loop.prompt import (
    blocks_payload,
    continuity_tail_block,
    handoff_block,
    recalled_memory_block,
    skills_block,
)
from specwire.runtime.loop.tools import ToolRunner, skill_tool
from specwire.runtime.models.streaming import (
    StreamCancelled,
    StreamSink,
    ToolDone,
    ToolRunning,
    TurnDone,
    complete_streaming,
)
from specwire.runtime.models.types import (
    AssistantMessage,
    Model,
    ModelRequest,
    SystemBlock,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from specwire.runtime.safety.redaction import redact
from specwire.runtime.sessions.store import SessionRecorder

if TYPE_CHECKING:
    from specwire.runtime.loop.history import ConversationHistory

InputSource = Iterable[str] | Callable[[], str | None]
# A per-turn refresh recalls for the latest message and at most this many earlier ones in all.
MAX_REFRESH_QUERIES = 4


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


@lazy_methods_dataclass(frozen=True)
class LoopResult:
    """How a chat loop run ended: its session, turns, stop reason and usage."""

    session_id: str
    turns: int  # completed turns: user messages the model answered
    stop_reason: StopReason
    # The model calls' tokens summed over the run; None when the model reported none.
    usage: Usage | None = None
    # Turns the stream sink cancelled (recorded with "cancelled": true; not in ``turns``).
    cancelled_turns: int = 0


def run_chat_loop(
    *,
    model: Model,
    instructions: str,
    catalog: ToolCatalog,
    session_log: SessionRecorder,
    inputs: InputSource,
    output: Callable[[str], None],
    memory: MemorySeam | None = None,
    continuity: ContinuitySeam | None = None,
    skills: list[Skill] | None = None,
    slash_commands: dict[str, SlashCommand] | None = None,
    single_turn: bool = False,
    max_tool_rounds: int = 8,
    context_max_messages: int = DEFAULT_CONTEXT_MAX_MESSAGES,
    context_max_chars: int = DEFAULT_CONTEXT_MAX_CHARS,
    history: ConversationHistory | None = None,
    spec_name: str = "",
    target: str = "",
    session_info: Mapping[str, Any] | None = None,
    log: Callable[[str], None] = _stderr,
    deadline: float | None = None,
    stream: StreamSink | None = None,
) -> LoopResult:
    """Run one session until the input ends, ``/exit``, or (``single_turn``) one answer.

    ``inputs`` is an iterable of messages or a callable returning the next one (``None`` or
    ``EOFError`` at the end). ``output`` receives each reply; ``log`` receives diagnostic lines
    (each ending in a newline). ``history`` seeds earlier turns of the conversation (see
    ``runtime.loop.history``); new turns are numbered after its last turn. ``deadline`` (a
    ``time.monotonic()`` instant) stops the session before any model call after it: the turn
    answers with a note and the stop reason is ``deadline``. ``stream`` receives the model's
    answer as it is written and the loop's tool progress (``runtime.models.streaming``); what is
    recorded and passed to ``output`` is the same with or without it.
    """
    if max_tool_rounds < 0:
        raise ValueError("max_tool_rounds must be >= 0")
    session = _Session(
        model=model,
        instructions=instructions,
        session_log=session_log,
        output=output,
        memory=memory,
        continuity=continuity,
        skills=list(skills or []),
        slash_commands=dict(slash_commands or {}),
        max_tool_rounds=max_tool_rounds,
        window=ContextWindow(context_max_messages, context_max_chars),
        runner=ToolRunner(catalog, session_log, log, [skill_tool(skills)] if skills else []),
        log=log,
        deadline=deadline,
        stream=stream,
    )
    stop: StopReason = "abort"
    try:
        session.start(spec_name, target, dict(session_info or {}), history)
        stop = session.converse(iter_messages(inputs), single_turn=single_turn)
    finally:
        session.teardown(stop)
    return LoopResult(
        session_log.session_id,
        session.completed_turns,
        stop,
        session.usage,
        session.cancelled_turns,
    )


def iter_messages(inputs: InputSource) -> Iterator[str]:
    if isinstance(inputs, str):
        yield inputs
    elif callable(inputs):
        while True:
            try:
                line = inputs()
            except EOFError:
                return
            if line is None:
                return
            yield line
    else:
        yield from inputs


class _Session:
    def __init__(
        self,
        *,
        model: Model,
        instructions: str,
        session_log: SessionRecorder,
        output: Callable[[str], None],
        memory: MemorySeam | None,
        continuity: ContinuitySeam | None,
        skills: list[Skill],
        slash_commands: dict[str, SlashCommand],
        max_tool_rounds: int,
        window: ContextWindow,
        runner: ToolRunner,
        log: Callable[[str], None],
        deadline: float | None = None,
        stream: StreamSink | None = None,
    ) -> None:
        self.model = model
        self.deadline = deadline
        self.stream = stream
        self.watch = StreamWatch(stream) if stream is not None else None
        self.cancelled_turns = 0
        self.deadline_passed = False
        self.instructions = instructions
        self.session_log = session_log
        self.session_id = session_log.session_id
        self.output = output
        self.memory = memory
        self.continuity = continuity
        self.skills = skills
        self.slash_commands = slash_commands
        self.max_tool_rounds = max_tool_rounds
        self.window = window
        self.runner = runner
        self.log = log
        self.turn = 0
        self.completed_turns = 0
        self.usage: Usage | None = None
        self.ledger: list[LedgerEntry] = []
        self.prefix: list[SystemBlock] = []
        self.tail: SystemBlock | None = None
        self.suffix: list[SystemBlock] = []
        self._context_open = False
        self._torn_down = False
        # Per-turn recall: the turn of the last recall and the prompts typed since.
        self._recalled_at = 0
        self._since_recall: list[str] = []
        self._seeded = False

    # -- start -------------------------------------------------------------------------------

    def start(
        self, spec_name: str, target: str, info: dict[str, Any], history: ConversationHistory | None
    ) -> None:
        payload = {"spec": spec_name, "target": target, "model": self.model.model_id, **info}
        self.session_log.append("session_start", payload)
        self.prefix = [SystemBlock("instructions", self.instructions)]
        continuity = self.continuity
        note = self._hook_text("load_handoff", continuity.load_handoff if continuity else None)
        handoff = handoff_block(note)
        if handoff is not None:
            self.prefix.append(handoff)
        tail = self._hook_text("load_plan", continuity.load_plan if continuity else None)
        self.tail = continuity_tail_block(tail)
        block = skills_block(self.skills)
        self.suffix = [block] if block is not None else []
        self._seed(history)

    def _open_context(self, first_prompt: str) -> None:
        """Before the session's first model call: recall, then log exactly what the prompt holds.

        Recall waits for the first message so it can look for what the user is asking about,
        not only for what the instructions mention.
        """
        self._context_open = True
        self.prefix[1:1] = self._memory_blocks()
        carried = self._carried_recall()
        lines = carried if carried is not None else self._auto_recall(first_prompt)
        recalled = recalled_memory_block(lines)
        if recalled is not None:
            self.prefix.insert(1, recalled)  # right after the instructions
        self.session_log.append("context", {"blocks": blocks_payload(self.system())})

    def _memory_blocks(self) -> list[SystemBlock]:
        """The tiers' memory blocks (``memory.tiers``); a failure blocks the turn, like a
        failed recall (an answer from silently empty memory would contradict earlier ones)."""
        memory = self.memory
        if memory is None or memory.memory_blocks is None:
            return []
        try:
            blocks = list(memory.memory_blocks())
        except Exception as exc:
            self.log(f"[memory] memory notes unavailable ({type(exc).__name__}: {exc})\n")
            raise RecallUnavailableError(
                "memory is unavailable, so the turn was not answered: the memory notes could "
                f"not be read ({exc}); try again once the memory store is reachable"
            ) from exc
        return [SystemBlock(kind, text) for kind, text in blocks if text.strip()]

    def _auto_recall(self, first_prompt: str) -> list[str]:
        """Facts for the first message first, then facts for the instructions; k at most."""
        memory = self.memory
        if memory is None or not memory.auto_recall or memory.recall is None:
            return []
        self._recalled_at = self.turn
        event: dict[str, Any] = {"query": first_prompt, "seed": self.instructions}
        earlier = list(reversed(self._since_recall[:-1]))[: MAX_REFRESH_QUERIES - 1]
        if earlier:  # per-turn recall on a per-turn host: the messages since the last recall
            event["earlier"] = earlier
        try:
            return self._recall([first_prompt, *earlier, self.instructions], event)
        except RecallUnavailableError:
            self._context_open = False
            raise

    def _carried_recall(self) -> list[str] | None:
        """Per-turn recall on a per-turn host (one loop run per message): the conversation's
        last recalled lines while the next refresh is not due, else None (recall now, for the
        messages typed since the last recall). Read back from the session log."""
        memory = self.memory
        if (
            memory is None
            or memory.recall is None
            or not memory.auto_recall
            or memory.recall_mode != "per-turn"
            or not self._seeded
        ):
            return None
        turn = 0
        typed: list[tuple[int, str]] = []
        last: tuple[int, list[str]] | None = None
        for logged in self.session_log.events():
            payload = logged.payload
            if logged.type == "user_message" and payload.get("synthetic") is not True:
                number = payload.get("turn")
                turn = number if isinstance(number, int) else turn
                typed.append((turn, str(payload.get("text", ""))))
            elif logged.type == "recall" and "error" not in payload and "carried" not in payload:
                found = payload.get("lines")
                if turn < self.turn and isinstance(found, list):
                    last = (turn, [str(line) for line in found])
        if last is None:
            return None
        last_turn, lines = last
        if self.turn - last_turn >= max(1, memory.refresh_every):
            self._since_recall = [text for number, text in typed if last_turn < number < self.turn]
            self._since_recall.append("")  # the current prompt's place (see ``_auto_recall``)
            return None
        self._recalled_at = last_turn
        self.session_log.append(
            "recall", {"carried": True, "fromTurn": last_turn, "count": len(lines), "lines": lines}
        )
        return lines

    def _recall(self, queries: list[str], event: dict[str, Any]) -> list[str]:
        """Recall for each query in turn (best first), deduplicated, ``recall_k`` lines at most;
        logged as a ``recall`` event. A failure raises ``RecallUnavailableError``."""
        memory = self.memory
        assert memory is not None and memory.recall is not None
        k = memory.recall_k
        if memory.current_input_only:
            queries = queries[:1]
        started = time.perf_counter()
        try:
            found = [line for query in queries for line in memory.recall(query, k)]
        except Exception as exc:
            self.log(f"[memory] auto-recall failed ({type(exc).__name__}: {exc})\n")
            self.session_log.append("recall", {**event, "count": 0, "lines": [], "error": str(exc)})
            raise RecallUnavailableError(
                f"memory is unavailable, so the turn was not answered: auto-recall failed "
                f"({exc}); try again once the memory store is reachable"
            ) from exc
        elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
        lines = list(dict.fromkeys(line for line in found if line.strip()))[:k]
        self.session_log.append(
            "recall", {**event, "count": len(lines), "lines": lines, "elapsedMs": elapsed_ms}
        )
        if lines:
            self.log(f"[memory] recalled {len(lines)} memory(ies) into the prompt\n")
        return lines

    def _record_diagnostics(self, turn: int) -> None:
        """The memory providers that failed during this turn (besides the primary, whose
        failure blocks the turn): one ``memory_diagnostic`` event and one log line each."""
        memory = self.memory
        if memory is None or memory.diagnostics is None:
            return
        for line, payload in memory.diagnostics():
            self.log(line)
            self.session_log.append("memory_diagnostic", {**payload, "turn": turn})

    def _refresh_due(self) -> bool:
        memory = self.memory
        return (
            memory is not None
            and memory.auto_recall
            and memory.recall is not None
            and memory.recall_mode == "per-turn"
            and self.turn - self._recalled_at >= max(1, memory.refresh_every)
        )

    def _refresh_recall(self) -> None:
        """Per-turn recall: the recalled block replaced by recall for the latest messages."""
        latest = list(reversed(self._since_recall))[:MAX_REFRESH_QUERIES]
        event: dict[str, Any] = {"query": latest[0], "turn": self.turn, "refresh": True}
        if len(latest) > 1:
            event["earlier"] = latest[1:]
        block = recalled_memory_block(self._recall(latest, event))  # a failure blocks the turn
        self._since_recall = []
        self._recalled_at = self.turn
        kept = [b for b in self.prefix if b.kind != "recalled_memory"]
        if block is not None:
            kept.insert(1, block)  # right after the instructions, where the first one was
        if kept == self.prefix:
            return
        self.prefix = kept
        self.session_log.append("context_refresh", {"blocks": blocks_payload(self.system())})

    def _hook_text(self, hook: str, func: Callable[[], str | None] | None) -> str | None:
        if func is None:
            return None
        try:
            return func()
        except Exception as exc:
            self.log(f"[continuity] warning: {hook} failed ({type(exc).__name__}: {exc})\n")
            return None

    def _seed(self, history: ConversationHistory | None) -> None:
        if history is None:
            return
        for entry in history.turns:
            for message in entry.messages():  # user, tool rounds, answer: all in the turn's group
                self.window.add(message, entry.turn, entry.typed or None)
                if isinstance(message, AssistantMessage):
                    self.runner.reserve_ids(call.id for call in message.tool_calls)
        self.turn = history.last_turn
        self._seeded = history.last_turn > 0

    def system(self) -> list[SystemBlock]:
        tail = [self.tail] if self.tail is not None else []
        return [*self.prefix, *tail, *self.suffix]

    # -- turns -------------------------------------------------------------------------------

    def converse(self, messages: Iterator[str], *, single_turn: bool) -> StopReason:
        for raw in messages:
            # A secret value typed by a person is replaced by its name before anything sees it:
            # the model, the ledger and handoff on disk, the captured facts. Bytes that were
            # not UTF-8 (argv and stdin decode them as lone surrogates) become U+FFFD.
            text = redact(valid_text(raw)).strip()
            if not text:
                continue
            prompt = text
            synthetic = False
            command = parse_command(text) if text.startswith("/") else None
            if command is not None:
                if command.name == "exit":
                    return "exit"
                if command.name == "help":
                    self.output(help_text(self.slash_commands))
                    continue
                found = self.slash_commands.get(command.name)
                if found is None:
                    self.output(unknown_command_text(command.name, self.slash_commands))
                    continue
                prompt = found.render(command.arguments).strip()
                synthetic = True
            cancelled = not self._turn(text, prompt, synthetic)
            if self.deadline_passed:
                return "deadline"
            if cancelled and single_turn:
                return "cancelled"
            if single_turn:
                return "complete"
        return "exit"

    def _turn(self, typed: str, prompt: str, synthetic: bool) -> bool:
        """One turn; False when the stream sink cancelled it."""
        self.turn += 1
        turn = self.turn
        self.session_log.append("user_message", {"text": typed, "turn": turn})
        if synthetic:
            self.session_log.append(
                "user_message", {"text": prompt, "turn": turn, "synthetic": True}
            )
        self._since_recall.append(prompt)
        try:
            if not self._context_open:
                self._open_context(prompt)
                self._since_recall = []
            elif self._refresh_due():
                self._refresh_recall()
        except BaseException:
            self._record_diagnostics(turn)  # the providers that failed beside the primary
            raise
        self.window.add(UserMessage(prompt, synthetic=synthetic), turn, typed)
        try:
            reply, usage = self._answer(turn)
        except StreamCancelled:
            self._record_cancelled(turn)
            return False
        finally:
            self._record_diagnostics(turn)
        self.window.add(AssistantMessage(reply), turn)
        event: dict[str, Any] = {"text": reply, "turn": turn}
        if usage is not None:  # the turn's model calls, summed (tool rounds included)
            event["usage"] = usage.payload()
            self.usage = usage if self.usage is None else self.usage + usage
        self.session_log.append("assistant_message", event)
        self.completed_turns += 1
        if self.stream is not None:
            # The answer is whole and recorded: a sink cancelling now has nothing left to stop.
            with suppress(StreamCancelled):
                self.stream(TurnDone(reply))
        if reply:
            self.output(reply)
        return True

    def _record_cancelled(self, turn: int) -> None:
        watch = self.watch
        assert watch is not None  # only a sink raises StreamCancelled
        text, usage = watch.cancelled_call()
        self.window.add(AssistantMessage(text), turn)
        event: dict[str, Any] = {"text": text, "turn": turn, "cancelled": True}
        if usage is not None:
            event["usage"] = usage.payload()
            self.usage = usage if self.usage is None else self.usage + usage
        self.session_log.append("assistant_message", event)
        self.cancelled_turns += 1
        self.log(f"[loop] turn {turn} cancelled while it was streamed\n")

    def _answer(self, turn: int) -> tuple[str, Usage | None]:
        rounds = 0
        usage: Usage | None = None
        if self.watch is not None:
            self.watch.start_turn()
        while True:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.deadline_passed = True
                self.log(f"[loop] turn {turn} stopped: the run's deadline passed\n")
                return "[stopped: the run's deadline passed]", usage
            self._evict()
            request = ModelRequest(self.system(), self.window.messages(), self.runner.specs())
            if self.watch is not None:
                self.watch.start_call(request)
            response = complete_streaming(self.model, request, self.watch)
            if response.usage is not None:
                usage = response.usage if usage is None else usage + response.usage
            if self.watch is not None:
                self.watch.end_call(response.usage)
            if not response.tool_calls:
                return response.text, usage
            if rounds >= self.max_tool_rounds:
                note = f"[stopped: the tool-round limit ({self.max_tool_rounds}) was reached]"
                self.log(
                    f"[loop] warning: turn {turn} hit max_tool_rounds={self.max_tool_rounds}\n"
                )
                return (f"{response.text}\n{note}" if response.text else note), usage
            rounds += 1
            calls = [self.runner.assign_id(call) for call in response.tool_calls]
            self.window.add(AssistantMessage(response.text, tuple(calls)), turn)
            self._run_tools(calls, turn)
            if self.runner.continuity_dirty:
                self.runner.continuity_dirty = False
                self._refresh_tail()

    def _run_tools(self, calls: list[ToolCall], turn: int) -> None:
        done: set[str] = set()
        try:
            for call in calls:
                if self.stream is not None:
                    self.stream(ToolRunning(call.id, call.name))
                result = self.runner.run(call)
                done.add(call.id)
                self.window.add(
                    ToolResultMessage(call.id, call.name, result.text, result.is_error), turn
                )
                if self.stream is not None:
                    self.stream(ToolDone(call.id, call.name, result.is_error))
        except StreamCancelled:
            # Every call of the round answered in the conversation (the APIs require it).
            for call in calls:
                if call.id not in done:
                    self.window.add(
                        ToolResultMessage(call.id, call.name, CANCELLED_RESULT, True), turn
                    )
            raise

    def _refresh_tail(self) -> None:
        continuity = self.continuity
        if continuity is None:
            return
        try:
            tail = continuity.on_plan_dirty()
        except Exception as exc:
            self.log(f"[continuity] warning: on_plan_dirty failed ({type(exc).__name__}: {exc})\n")
            return
        refreshed = continuity_tail_block(tail)
        if refreshed == self.tail:
            return
        self.tail = refreshed
        self.session_log.append("context_refresh", {"blocks": blocks_payload(self.system())})

    def _evict(self) -> None:
        evicted = self.window.evict_overflow()
        if not evicted:
            return
        entries = [LedgerEntry("user", e.text, self.session_id, e.turn) for e in evicted]
        for entry in entries:
            self.session_log.append(
                "context_evicted", {"role": entry.role, "text": entry.text, "turn": entry.turn}
            )
        continuity = self.continuity
        if continuity is None or not continuity.ledger:
            return
        self.ledger.extend(entries)
        if continuity.record_requirements is None:
            return
        try:
            continuity.record_requirements(entries)
        except Exception as exc:
            self.log(
                f"[continuity] warning: record_requirements failed ({type(exc).__name__}: {exc})\n"
            )

    # -- teardown ----------------------------------------------------------------------------

    def teardown(self, stop: StopReason) -> None:
        if self._torn_down:
            return
        self._torn_down = True
        on_handoff = self.continuity.on_handoff if self.continuity is not None else None
        if on_handoff is not None:
            handoff = HandoffInput(self.session_id, stop, tuple(self.ledger))
            self._guard("[continuity] on_handoff", lambda: on_handoff(handoff))
        memory = self.memory
        # The conversation's turns, not this run's: a per-turn host runs one turn per message.
        conversation_turns = self.turn
        if (
            memory is not None
            and memory.auto_capture
            and memory.on_capture is not None
            and self.completed_turns > 0
            and conversation_turns >= max(1, memory.capture_threshold)
        ):
            on_capture = memory.on_capture
            self._guard(
                "[memory] on_capture", lambda: on_capture(conversation_turns, self.session_id)
            )
        on_session_end = memory.on_session_end if memory is not None else None
        if on_session_end is not None and self.completed_turns > 0:
            session_log = self.session_log
            self._guard(
                "[memory] on_session_end",
                lambda: on_session_end(self.session_id, stop, session_log.events()),
            )
        self._guard(
            "[loop] session_end",
            lambda: self.session_log.append(
                "session_end", {"stopReason": stop, "turns": self.completed_turns}
            ),
        )

    def _guard(self, what: str, action: Callable[[], object]) -> None:
        try:
            action()
        except Exception as exc:
            self.log(f"{what} failed during teardown ({type(exc).__name__}: {exc})\n")

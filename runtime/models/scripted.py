"""The scripted model: offline, deterministic, readable in a demo.

A bundle built with ``model: scripted`` summarizes these directives in its README ("Try it
offline"); this table is the full reference.

It reads the latest user message and follows one directive per message:

==============================================  ==================================================
message                                         what the model does
==============================================  ==================================================
``remember: <fact>``                            calls ``Remember {text}``
``recall: <query>``                             calls ``Recall {query}``
``focus: <text>``                               calls ``FocusWrite {focus}``
``plan: <title>: <step>; <step>; ...``          calls ``PlanUpdate {action: create, title, steps}``
``claim <n>``                                   calls ``PlanUpdate {action: set_step_status,
                                                step: n, status: claimed}``
``prove <n>``                                   calls ``PlanComplete {step: n, evidence:
                                                [{toolUseId}]}`` citing the most recent successful
                                                non-memory tool call of the conversation
``call <ToolName> <json>``                      calls any tool with that JSON object as input
``forget: <query>``                             calls ``MemoryForget {query, reason,
                                                justification}``
``steps:`` then one directive per line          follows the directives in order, one tool call
                                                after another (``call fetch {…}`` then
                                                ``prove 1``), then answers one line per result
``ask about <topic>: <question>``               asks ``<question>``, unless every word of
                                                ``<topic>`` is on one line of its context (a
                                                system block — recalled memory, handoff, plan,
                                                instructions — an earlier message, or an item
                                                of a tool result): then it answers
                                                ``Known: <that line>.`` and asks nothing. When
                                                the context does not say and ``Recall`` is
                                                offered, it first calls ``Recall {query:
                                                <topic>}`` and decides on its result
``split into <n> sub-goals: <goal>`` (a line)   answers a JSON array of ``n`` sub-goals: the
                                                goal's blank-line-separated parts (else its
                                                lines), numbered angles of the goal when fewer
anything else                                   answers ``Noted: <message>.``, adding
                                                ``From memory: <first recalled fact>.`` when a
                                                recalled-memory block is in the prompt and
                                                ``Resuming: <next step>.`` when a handoff or plan
                                                block names an unfinished step
==============================================  ==================================================

Every answer reports its usage, estimated at about four characters a token
(``runtime.models.estimate``). A request's ``max_output_tokens`` is honoured as a provider's
``max_tokens`` is: an answer over it is cut to it, and a tool call that does not fit is dropped.

``scripted/failing`` is the scripted model that never answers: every call raises a retryable
``ModelServerError`` (a simulated 503), so a role's ``modelFallbacks`` can be shown offline.

Keywords are case-insensitive. After a tool call the model is called again with the result and
answers one line: ``Done: <first line of the result>`` (for ``Recall``: the whole result, every
matched fact with its relevance) or ``That failed: <first line>``. A
directive naming a tool that is not offered in the request is answered with a line saying the
tool is unavailable; no call is made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from specwire.runtime.core.ids import new_tool_use_id
from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.core.tool_types import is_evidence_tool
from specwire.runtime.models.errors import ModelServerError
from specwire.runtime.models.estimate import CHARS_PER_TOKEN, answer_tokens, prompt_tokens
from specwire.runtime.models.streaming import StreamSink
from specwire.runtime.models.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    SystemBlockKind,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from specwire.runtime.models.word_stream import stream_words

FORGET_REASON = "the user asked to forget it"
RECALL_TOOL = "Recall"
_MAX_ECHO = 200

_KEYED = re.compile(r"^(remember|recall|focus|plan|forget)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)
_NUMBERED = re.compile(r"^(claim|prove)\s+(\d+)\s*\.?$", re.IGNORECASE)
_ASK = re.compile(r"^ask\s+about\s+([^:]+?)\s*:\s*(.+)$", re.IGNORECASE | re.DOTALL)
_CALL = re.compile(r"^call\s+([A-Za-z_][\w.-]*)\s*(.*)$", re.IGNORECASE | re.DOTALL)
_STEPS = re.compile(r"^steps\s*:\s*\n", re.IGNORECASE)
_SPLIT = re.compile(
    r"^split into (\d+) sub-goals\s*:\s*(.*)\Z", re.IGNORECASE | re.DOTALL | re.MULTILINE
)
_STEP_LINE = LazyPattern(r"^\s*\d+\.\s*\[([^\]]+)\]\s*\S")
_HEADING = LazyPattern(r"^\s*#+\s*(.*?)\s*$")


def first_line(text: str, limit: int = _MAX_ECHO) -> str:
    """The first non-blank line of ``text``, stripped and cut to ``limit`` characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _call(name: str, tool_input: dict[str, Any]) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(new_tool_use_id(), name, tool_input)])


def _say(text: str) -> ModelResponse:
    return ModelResponse(text=text)


class ScriptedModel:
    """Follows the directives in the module docstring; see there."""

    def __init__(self, model_id: str = "scripted", *, word_delay: float = 0.0) -> None:
        self._model_id = model_id
        self._word_delay = word_delay

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        response = cap_answer(self._respond(request), request.max_output_tokens)
        return replace(response, usage=estimate_usage(request, response))

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """The same response as ``complete``, reported word by word."""
        response = self.complete(request)
        stream_words(response, sink, delay=self._word_delay)
        return response

    def _respond(self, request: ModelRequest) -> ModelResponse:
        if not request.messages:
            return _say("Hello. Tell me what to do, or try `remember: <fact>`.")
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            chained = _next_chained_step(request)
            if chained is not None:
                return chained
            asked = _pending_ask(request)
            return _say(asked if asked is not None else _summarize(request.messages))
        if isinstance(last, UserMessage):
            text = last.text.strip()
            steps = _chain(text)
            return _answer(steps[0] if steps else text, request)
        return _say("(waiting for a message)")


def _chain(text: str) -> list[str]:
    """The directives of a ``steps:`` message, one per non-blank line (else none)."""
    if not _STEPS.match(text):
        return []
    return [line.strip() for line in text.splitlines()[1:] if line.strip()]


def _next_chained_step(request: ModelRequest) -> ModelResponse | None:
    """In a ``steps:`` turn, the next directive after the tool results so far (None when the
    chain is done: the turn then ends with a summary of every result)."""
    rounds = 0
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            steps = _chain(message.text.strip())
            return _answer(steps[rounds], request) if rounds < len(steps) else None
        if isinstance(message, AssistantMessage) and message.tool_calls:
            rounds += 1
    return None


def _split(count: int, goal: str) -> ModelResponse:
    parts = [part.strip() for part in re.split(r"\n\s*\n", goal.strip()) if part.strip()]
    if len(parts) < 2:
        parts = [line.strip() for line in goal.splitlines() if line.strip()]
    subject = first_line(goal) or "the goal"
    while len(parts) < count:
        parts.append(f"{subject} (angle {len(parts) + 1} of {count})")
    return _say(json.dumps(parts[:count], ensure_ascii=False))


FAILING_MODEL_ID = "scripted/failing"


class FailingModel:
    """The ``scripted/failing`` model: every call fails with a retryable error (a simulated
    503), so fallbacks can be exercised offline."""

    def __init__(self, model_id: str = FAILING_MODEL_ID) -> None:
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        raise ModelServerError(
            f'model "{self._model_id}" failed on purpose (a simulated 503, retryable): it never '
            "answers; use it to try a role's modelFallbacks"
        )


def estimate_usage(request: ModelRequest, response: ModelResponse) -> Usage:
    """A deterministic estimate (about four characters a token) so budgets test offline."""
    return Usage(input=prompt_tokens(request), output=answer_tokens(response), cached=0)


def cap_answer(response: ModelResponse, cap: int | None) -> ModelResponse:
    """``response`` as a model stopped at ``cap`` answer tokens would give it: whole when it
    fits, else its text cut to the cap and no tool call (an unfinished call is never run)."""
    if cap is None or answer_tokens(response) <= cap:
        return response
    return ModelResponse(text=response.text[: max(0, cap) * CHARS_PER_TOKEN])


def _summarize(messages: list[Message]) -> str:
    """One line for the tool results of the turn (after its user message)."""
    results: list[ToolResultMessage] = []
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, ToolResultMessage):
            results.append(message)
    parts = [
        f"That failed: {first_line(r.text)}" if r.is_error else f"Done: {_result_line(r)}"
        for r in reversed(results)
    ]
    return " | ".join(parts)


def _result_line(result: ToolResultMessage) -> str:
    """The first line of a result; for ``Recall``, every line, so the matched facts show."""
    if result.name != RECALL_TOOL:
        return first_line(result.text)
    lines = [line.strip().removeprefix("• ") for line in result.text.splitlines() if line.strip()]
    return " ".join(lines)


def _answer(text: str, request: ModelRequest) -> ModelResponse:
    split = _SPLIT.search(text)
    if split:
        return _split(max(1, min(int(split.group(1)), 32)), split.group(2))
    keyed = _KEYED.match(text)
    if keyed:
        return _keyed_directive(keyed.group(1).lower(), keyed.group(2).strip(), request)
    numbered = _NUMBERED.match(text)
    if numbered:
        step = int(numbered.group(2))
        if numbered.group(1).lower() == "claim":
            return _tool(
                request,
                "PlanUpdate",
                {"action": "set_step_status", "step": step, "status": "claimed"},
            )
        return _prove(request, step)
    asked = _ASK.match(text)
    if asked:
        topic = asked.group(1).strip()
        first_call = isinstance(request.messages[-1], UserMessage)
        if first_call and "Recall" in request.tool_names() and known_line(topic, request) is None:
            return _call("Recall", {"query": topic})  # look in memory before asking
        return _say(_ask(topic, asked.group(2).strip(), request))
    called = _CALL.match(text)
    if called:
        return _call_directive(request, called.group(1), called.group(2).strip())
    return _say(_plain_answer(text, request))


_KEYED_USAGE = {
    "remember": "remember: <a fact to keep>",
    "recall": "recall: <what to look up>",
    "focus": "focus: <what we are working on>",
    "plan": "plan: <title>: <step>; <step>",
    "forget": "forget: <what to forget>",
}


def _keyed_directive(keyword: str, argument: str, request: ModelRequest) -> ModelResponse:
    if not argument:
        return _say(f"Usage: {_KEYED_USAGE[keyword]}")
    builders: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
        "remember": lambda arg: ("Remember", {"text": arg}),
        "recall": lambda arg: ("Recall", {"query": arg}),
        "focus": lambda arg: ("FocusWrite", {"focus": arg}),
        "plan": _plan_input,
        "forget": lambda arg: (
            "MemoryForget",
            {"query": arg, "reason": FORGET_REASON, "justification": FORGET_REASON},
        ),
    }
    name, tool_input = builders[keyword](argument)
    return _tool(request, name, tool_input)


def _plan_input(argument: str) -> tuple[str, dict[str, Any]]:
    title, _, rest = argument.partition(":")
    steps = [step.strip() for step in rest.split(";") if step.strip()]
    return "PlanUpdate", {"action": "create", "title": title.strip(), "steps": steps}


def _tool(request: ModelRequest, name: str, tool_input: dict[str, Any]) -> ModelResponse:
    if name not in request.tool_names():
        offered = ", ".join(request.tool_names()) or "none"
        return _say(f"The {name} tool is unavailable here (tools offered: {offered}).")
    return _call(name, tool_input)


def _call_directive(request: ModelRequest, name: str, raw: str) -> ModelResponse:
    try:
        tool_input = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        return _say(f"I could not read the input for {name} as JSON: {exc.msg}.")
    if not isinstance(tool_input, dict):
        return _say(f"The input for {name} must be a JSON object.")
    return _tool(request, name, tool_input)


def _prove(request: ModelRequest, step: int) -> ModelResponse:
    evidence = latest_work_tool_use(request.messages)
    if evidence is None:
        return _say(
            f"I have no successful tool call to cite for step {step} yet: "
            "run the action first, then prove the step."
        )
    return _tool(request, "PlanComplete", {"step": step, "evidence": [{"toolUseId": evidence}]})


def latest_work_tool_use(messages: list[Message]) -> str | None:
    """The id of the most recent successful tool call that is not a memory tool."""
    called = {
        call.id
        for message in messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    }
    for message in reversed(messages):
        if (
            isinstance(message, ToolResultMessage)
            and not message.is_error
            and is_evidence_tool(message.name)
            and message.tool_use_id in called
        ):
            return message.tool_use_id
    return None


def _plain_answer(text: str, request: ModelRequest) -> str:
    parts = [f"Noted: {first_line(text).rstrip('.!?')}."]
    recalled = request.block("recalled_memory")
    if recalled is not None:
        fact = _first_recalled_fact(recalled.text)
        if fact:
            parts.append(f"From memory: {fact.rstrip('.')}.")
    step = _next_step(request)
    if step:
        parts.append(f"Resuming: {step.rstrip('.')}.")
    return " ".join(parts)


def _first_recalled_fact(block: str) -> str | None:
    for line in block.splitlines():
        if line.startswith("- ") and line[2:].strip():
            return first_line(line[2:])
    return None


def _next_step(request: ModelRequest) -> str | None:
    """The handoff's first next action, else the first unfinished plan step line."""
    handoff = request.block("handoff")
    if handoff is not None:
        action = _first_next_action(handoff.text)
        if action:
            return action
    kinds: tuple[SystemBlockKind, ...] = ("handoff", "continuity_tail")
    for kind in kinds:
        block = request.block(kind)
        if block is None:
            continue
        for line in block.text.splitlines():
            step = _STEP_LINE.match(line)
            if step and not step.group(1).strip().lower().startswith("proven"):
                return first_line(line)
    return None


def _first_next_action(text: str) -> str | None:
    in_section = False
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            in_section = heading.group(1).lower().startswith("next action")
            continue
        if in_section and line.strip().startswith("- ") and line.strip()[2:].strip():
            return first_line(line.strip()[2:])
    return None


_WORD = LazyPattern(r"\w+")
_BULLET = LazyPattern(r"^\s*(?:[-*•]|\d+\.)\s+(?:\(\d[\d.]*\)\s+)?")


def _pending_ask(request: ModelRequest) -> str | None:
    """After the ``Recall`` an ask directive made: the question, or what memory says."""
    user = next((m for m in reversed(request.messages) if isinstance(m, UserMessage)), None)
    asked = _ASK.match(user.text.strip()) if user is not None else None
    if asked is None:
        return None
    return _ask(asked.group(1).strip(), asked.group(2).strip(), request)


def _ask(topic: str, question: str, request: ModelRequest) -> str:
    """The question, or what the context already says about its topic (nothing is asked)."""
    known = known_line(topic, request)
    if known is None:
        return first_line(question)
    return f"Known: {known.rstrip('.!?')}."


def known_line(topic: str, request: ModelRequest) -> str | None:
    """The first line of the model's context holding every word of ``topic``: the system blocks
    in prompt order, then the conversation except its latest user message (the one that asks).
    Of a tool result only its items count (bulleted or numbered lines), not the header that
    restates the call (``no memories matched "<query>"``)."""
    wanted = set(_WORD.findall(topic.casefold()))
    if not wanted:
        return None
    asking = max(
        (i for i, message in enumerate(request.messages) if isinstance(message, UserMessage)),
        default=-1,
    )
    lines = [line for block in request.system for line in block.text.splitlines()]
    for index, message in enumerate(request.messages):
        if index == asking:
            continue
        found = message.text.splitlines()
        if isinstance(message, ToolResultMessage):
            found = [line for line in found if _BULLET.match(line)]
        lines += found
    for line in lines:
        if wanted <= set(_WORD.findall(line.casefold())):
            return first_line(_BULLET.sub("", line))
    return None

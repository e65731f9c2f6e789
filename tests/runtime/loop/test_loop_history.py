"""history_from_log: earlier turns replayed faithfully (tool rounds included) for per-turn hosts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from loop_support import (
    Recording,
    catalog_of,
    echo_tool,
    failing_tool,
    new_log,
    payloads,
    replay,
)
from pydantic import BaseModel, ConfigDict

from specwire.runtime.core.seams import ContinuitySeam, LedgerEntry, SlashCommand
from specwire.runtime.core.tool_types import Tool, ToolCatalog, ToolContext, ToolResult
from specwire.runtime.loop import LoopResult, run_chat_loop
from specwire.runtime.loop.history import (
    NO_RESULT_TEXT,
    ConversationHistory,
    HistoryTurn,
    ToolRound,
    history_from_log,
)
from specwire.runtime.models import (
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    ScriptedModel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from specwire.runtime.sessions.log import SessionLog

INSTRUCTIONS = "You are a careful support engineer."


def ignore(text: str) -> None:
    pass


COMMANDS = {
    "shout": SlashCommand(
        "shout", "Echo the text loudly.", "<text>", 'call Echo {"text": "$ARGUMENTS!"}', "project"
    )
}


def per_turn(
    log: SessionLog,
    message: str,
    *,
    model: Model | None = None,
    catalog: ToolCatalog | None = None,
    **kwargs: Any,
) -> LoopResult:
    """One single-turn run seeded from the log, the way the channel and managed hosts run."""
    return run_chat_loop(
        model=model or ScriptedModel(),
        instructions=INSTRUCTIONS,
        catalog=catalog if catalog is not None else catalog_of(echo_tool(), failing_tool()),
        session_log=log,
        inputs=[message],
        output=ignore,
        log=ignore,
        single_turn=True,
        history=history_from_log(log.path),
        **kwargs,
    )


def tool_uses(log: SessionLog) -> list[dict[str, Any]]:
    return payloads(log, "tool_use")


def plan_complete_tool(cited: list[Any]) -> Tool:
    """A stand-in PlanComplete that records the evidence it is given."""

    class Input(BaseModel):
        model_config = ConfigDict(extra="forbid")
        step: int
        evidence: list[dict[str, str]]

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        cited.append(parsed.evidence)
        return ToolResult("proven")

    return Tool("PlanComplete", "Complete a step.", Input, handle)


# -- tool rounds -------------------------------------------------------------------------------


def test_a_tool_round_is_replayed_as_the_model_saw_it(tmp_path: Path) -> None:
    model = Recording(ScriptedModel())
    log = new_log(tmp_path)
    per_turn(log, 'call Echo {"text": "hi"}', model=model)
    [use] = tool_uses(log)

    [turn] = history_from_log(log.path).turns
    call = ToolCall(use["id"], "Echo", {"text": "hi"})
    assert turn.rounds == (
        ToolRound(
            AssistantMessage("", (call,)), (ToolResultMessage(use["id"], "Echo", "echo: hi"),)
        ),
    )
    # Exactly what the model was sent during the live turn, then the answer it gave.
    live = model.requests[-1].messages
    assert turn.messages() == [*live, AssistantMessage("Done: echo: hi")]

    per_turn(log, "next", model=model)
    assert model.requests[-1].messages == [*turn.messages(), UserMessage("next")]


def test_a_later_message_can_cite_a_call_made_in_an_earlier_one(tmp_path: Path) -> None:
    cited: list[Any] = []
    catalog = catalog_of(echo_tool(), plan_complete_tool(cited))
    log = new_log(tmp_path)
    per_turn(log, 'call Echo {"text": "the action"}', catalog=catalog)
    per_turn(log, "something else", catalog=catalog)
    per_turn(log, "prove 1", catalog=catalog)
    echo_id = tool_uses(log)[0]["id"]
    assert cited == [[{"toolUseId": echo_id}]]
    assert payloads(log, "assistant_message")[-1]["text"] == "Done: proven"


def test_calls_made_together_replay_as_consecutive_rounds(tmp_path: Path) -> None:
    model = replay(
        tmp_path,
        [
            {
                "tool_calls": [
                    {"name": "Echo", "input": {"text": "a"}},
                    {"name": "Echo", "input": {"text": "b"}},
                ]
            },
            {"tool_calls": [{"name": "Echo", "input": {"text": "c"}}]},
            {"text": "all done"},
        ],
    )
    log = new_log(tmp_path)
    per_turn(log, "do three things", model=model)
    ids = [use["id"] for use in tool_uses(log)]

    [turn] = history_from_log(log.path).turns
    assert [[c.id for c in r.calls.tool_calls] for r in turn.rounds] == [[i] for i in ids]
    assert [[r.text for r in rnd.results] for rnd in turn.rounds] == [
        ["echo: a"],
        ["echo: b"],
        ["echo: c"],
    ]
    roles = [m.role for m in turn.messages()]
    assert roles == ["user", *["assistant", "tool"] * 3, "assistant"]
    assert turn.assistant == AssistantMessage("all done")


def test_error_results_are_replayed_as_errors_and_never_cited(tmp_path: Path) -> None:
    cited: list[Any] = []
    catalog = catalog_of(echo_tool(), failing_tool(), plan_complete_tool(cited))
    log = new_log(tmp_path)
    per_turn(log, 'call Echo {"text": "ok"}', catalog=catalog)
    per_turn(log, 'call Explode {"text": "x"}', catalog=catalog)
    per_turn(log, 'call Nowhere {"text": "x"}', catalog=catalog)  # not offered: no call made
    per_turn(log, 'call Explode {"bad": 1}', catalog=catalog)  # rejected input
    history = history_from_log(log.path)
    results = [r for t in history.turns for rnd in t.rounds for r in rnd.results]
    assert [(r.name, r.is_error) for r in results] == [
        ("Echo", False),
        ("Explode", True),
        ("Explode", True),
    ]
    assert "kaboom" in results[1].text

    per_turn(log, "prove 2", catalog=catalog)
    assert cited == [[{"toolUseId": results[0].tool_use_id}]]


def test_the_synthetic_message_of_a_slash_command_is_replayed_with_its_tool_round(
    tmp_path: Path,
) -> None:
    log = new_log(tmp_path)
    per_turn(log, "/shout hey", slash_commands=COMMANDS)
    [turn] = history_from_log(log.path).turns
    assert (turn.turn, turn.typed) == (1, "/shout hey")
    assert turn.user == UserMessage('call Echo {"text": "hey!"}', synthetic=True)
    assert [r.results[0].text for r in turn.rounds] == ["echo: hey!"]


# -- what the log cannot say --------------------------------------------------------------------


def write(log: SessionLog, *events: tuple[str, dict[str, Any]]) -> None:
    for kind, payload in events:
        log.append(kind, payload)


def use(call_id: str, name: str = "Echo", **tool_input: Any) -> tuple[str, dict[str, Any]]:
    return ("tool_use", {"id": call_id, "name": name, "input": tool_input})


def result(
    call_id: str, text: str, name: str = "Echo", is_error: bool = False
) -> tuple[str, dict[str, Any]]:
    return ("tool_result", {"toolUseId": call_id, "name": name, "isError": is_error, "text": text})


def said(role: str, text: str, turn: int) -> tuple[str, dict[str, Any]]:
    return (f"{role}_message", {"text": text, "turn": turn})


def test_a_call_without_a_logged_result_is_answered_with_an_error(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    write(
        log,
        said("user", "go", 1),
        use("tu_000000000000000a", text="lost"),
        use("tu_000000000000000b", text="kept"),
        result("tu_000000000000000b", "echo: kept"),
        said("assistant", "partly done", 1),
    )
    [turn] = history_from_log(log.path).turns
    [only] = turn.rounds
    assert [c.id for c in only.calls.tool_calls] == ["tu_000000000000000a", "tu_000000000000000b"]
    assert only.results == (
        ToolResultMessage("tu_000000000000000a", "Echo", NO_RESULT_TEXT, is_error=True),
        ToolResultMessage("tu_000000000000000b", "Echo", "echo: kept"),
    )
    # The scripted model (like any) never cites the unanswered call.
    assert (
        ScriptedModel()
        .complete(request_with([*turn.messages(), UserMessage("prove 1")]))
        .tool_calls
        == []
    )


def request_with(messages: list[Message]) -> ModelRequest:
    return ModelRequest([], messages, [])


def test_orphan_results_and_malformed_uses_are_dropped(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    write(
        log,
        result("tu_00000000000000f0", "before any turn"),
        said("user", "go", 1),
        result("tu_00000000000000f1", "no call for this"),
        ("tool_use", {"id": 7, "name": "Echo", "input": {}}),
        ("tool_use", {"id": "tu_00000000000000f2", "name": "Echo", "input": "not an object"}),
        result("tu_00000000000000f2", "its call was malformed"),
        use("tu_0000000000000001", text="x"),
        result("tu_0000000000000001", "echo: x"),
        result("tu_0000000000000001", "a second result for the same call"),
        said("assistant", "done", 1),
        use("tu_00000000000000f3", text="after the answer"),
        result("tu_00000000000000f3", "after the answer"),
    )
    [turn] = history_from_log(log.path).turns
    assert [m.text for m in turn.messages()] == ["go", "", "echo: x", "done"]


def test_an_unanswered_turn_does_not_leak_its_tool_calls_into_the_next(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    write(
        log,
        said("user", "crashes mid-tool", 1),
        use("tu_0000000000000001", text="a"),
        said("user", "again", 2),
        said("assistant", "fine", 2),
    )
    history = history_from_log(log.path)
    assert history.last_turn == 2
    assert history.turns == [
        HistoryTurn(2, UserMessage("again"), AssistantMessage("fine"), "again")
    ]


def test_huge_results_are_cut_with_a_note(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    write(
        log,
        said("user", "dump", 1),
        use("tu_0000000000000001", text="big"),
        result("tu_0000000000000001", "x" * 25),
        use("tu_0000000000000002", text="small"),
        result("tu_0000000000000002", "y" * 10),
        said("assistant", "dumped", 1),
    )
    [turn] = history_from_log(log.path, max_result_chars=10).turns
    big, small = (r.results[0].text for r in turn.rounds)
    assert big.startswith("x" * 10 + "\n[… 15 more character(s) not replayed")
    assert small == "y" * 10
    # The default cap leaves ordinary results alone.
    [whole] = history_from_log(log.path).turns
    assert whole.rounds[0].results[0].text == "x" * 25
    with pytest.raises(ValueError):
        history_from_log(log.path, max_result_chars=-1)


# -- evicted turns and the context window -------------------------------------------------------


def test_evicted_turns_are_not_replayed_with_their_tool_rounds(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    per_turn(log, 'call Echo {"text": "one"}')
    per_turn(log, 'call Echo {"text": "two"}')
    log.append("context_evicted", {"role": "user", "text": 'call Echo {"text": "one"}', "turn": 1})
    history = history_from_log(log.path)
    assert [t.turn for t in history.turns] == [2]
    texts = [m.text for m in history.turns[0].messages()]
    assert texts == ['call Echo {"text": "two"}', "", "echo: two", "Done: echo: two"]
    assert history.last_turn == 2


def continuity_seam(recorded: list[Sequence[LedgerEntry]]) -> ContinuitySeam:
    return ContinuitySeam(
        lambda: None, lambda: None, True, record_requirements=lambda e: recorded.append(list(e))
    )


def test_the_window_evicts_replayed_tool_rounds_whole_and_once(tmp_path: Path) -> None:
    """Per-turn runs with a small character budget: the big tool turn leaves the window once."""
    recorded: list[Sequence[LedgerEntry]] = []
    model = Recording(ScriptedModel())
    log = new_log(tmp_path)
    seam = continuity_seam(recorded)
    big = "z" * 120
    for message in [f'call Echo {{"text": "{big}"}}', "two", "three", "four"]:
        per_turn(log, message, model=model, continuity=seam, context_max_chars=300)

    assert [(e["turn"], e["text"][:9]) for e in payloads(log, "context_evicted")] == [
        (1, "call Echo")
    ]
    assert [[(e.turn, e.text[:9]) for e in batch] for batch in recorded] == [[(1, "call Echo")]]
    for request in model.requests:
        assert isinstance(request.messages[0], UserMessage)  # never a result without its call
    assert model.requests[-1].messages == [
        UserMessage("two"),
        AssistantMessage("Noted: two."),
        UserMessage("three"),
        AssistantMessage("Noted: three."),
        UserMessage("four"),
    ]


def test_seeded_tool_rounds_count_toward_the_message_limit(tmp_path: Path) -> None:
    model = Recording(ScriptedModel())
    log = new_log(tmp_path)
    per_turn(log, 'call Echo {"text": "a"}', model=model)  # 4 messages
    per_turn(log, "b", model=model, context_max_messages=4)  # 4 + 1: turn 1 goes
    assert [e["turn"] for e in payloads(log, "context_evicted")] == [1]
    assert model.requests[-1].messages == [UserMessage("b")]
    assert [t.turn for t in history_from_log(log.path).turns] == [2]


def test_a_seeded_history_turn_with_rounds_reaches_the_model(tmp_path: Path) -> None:
    model = Recording(ScriptedModel())
    call = ToolCall("tu_00000000000000aa", "Echo", {"text": "x"})
    earlier = HistoryTurn(
        3,
        UserMessage('call Echo {"text": "x"}'),
        AssistantMessage("Done: echo: x"),
        rounds=(
            ToolRound(
                AssistantMessage("", (call,)),
                (ToolResultMessage(call.id, "Echo", "echo: x"),),
            ),
        ),
    )
    log = new_log(tmp_path)
    run_chat_loop(
        model=model,
        instructions=INSTRUCTIONS,
        catalog=catalog_of(echo_tool()),
        session_log=log,
        inputs=["now"],
        output=ignore,
        log=ignore,
        history=ConversationHistory([earlier], last_turn=3),
    )
    assert model.requests[0].messages == [*earlier.messages(), UserMessage("now")]
    assert payloads(log, "user_message") == [{"text": "now", "turn": 4}]


def test_an_id_reused_from_an_earlier_message_gets_a_fresh_one(tmp_path: Path) -> None:
    fixed = "tu_00000000000000aa"
    call = {"tool_calls": [{"id": fixed, "name": "Echo", "input": {"text": "x"}}]}
    model = replay(tmp_path, [call, {"text": "done"}, call, {"text": "done again"}])
    log = new_log(tmp_path)
    per_turn(log, "first", model=model)
    per_turn(log, "second", model=model)
    ids = [use["id"] for use in tool_uses(log)]
    assert ids[0] == fixed and ids[1] != fixed and len(set(ids)) == 2

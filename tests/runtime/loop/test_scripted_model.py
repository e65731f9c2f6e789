"""The scripted model's directives, its summaries, its plain answers, script mode, selection."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.models import (
    AssistantMessage,
    Message,
    ModelError,
    ModelRequest,
    ModelUnavailableError,
    ReplayModel,
    ScriptedModel,
    SystemBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    select_model,
)

TOOLS = [
    "Remember",
    "Recall",
    "MemoryForget",
    "FocusWrite",
    "PlanUpdate",
    "PlanComplete",
    "read",
]
TU = re.compile(r"^tu_[0-9a-f]{16}$")


def request(
    messages: list[Message],
    *,
    tools: list[str] | None = None,
    system: list[SystemBlock] | None = None,
) -> ModelRequest:
    names = TOOLS if tools is None else tools
    return ModelRequest(
        system or [SystemBlock("instructions", "be helpful")],
        messages,
        [ToolSpec(name, "", {}) for name in names],
    )


def only_call(text: str, **kwargs: Any) -> ToolCall:
    response = ScriptedModel().complete(request([UserMessage(text)], **kwargs))
    assert response.text == ""
    [call] = response.tool_calls
    assert TU.match(call.id)
    return call


@pytest.mark.parametrize(
    ("text", "name", "tool_input"),
    [
        ("remember: the customer uses EUR", "Remember", {"text": "the customer uses EUR"}),
        ("Recall: billing plan", "Recall", {"query": "billing plan"}),
        ("focus: ship the fix", "FocusWrite", {"focus": "ship the fix"}),
        (
            "plan: Fix export: reproduce; patch ;verify",
            "PlanUpdate",
            {"action": "create", "title": "Fix export", "steps": ["reproduce", "patch", "verify"]},
        ),
        (
            "plan: Just a title",
            "PlanUpdate",
            {"action": "create", "title": "Just a title", "steps": []},
        ),
        (
            "claim 2",
            "PlanUpdate",
            {"action": "set_step_status", "step": 2, "status": "claimed"},
        ),
        (
            "forget: old address",
            "MemoryForget",
            {
                "query": "old address",
                "reason": "the user asked to forget it",
                "justification": "the user asked to forget it",
            },
        ),
        ('call read {"path": "a.txt"}', "read", {"path": "a.txt"}),
        ("call read", "read", {}),
    ],
)
def test_directives_become_tool_calls(text: str, name: str, tool_input: dict[str, Any]) -> None:
    call = only_call(text)
    assert (call.name, call.input) == (name, tool_input)


def test_each_call_gets_a_fresh_tool_use_id() -> None:
    assert only_call("remember: a").id != only_call("remember: a").id


def test_a_directive_for_a_tool_not_offered_answers_unavailable() -> None:
    response = ScriptedModel().complete(request([UserMessage("remember: x")], tools=["read"]))
    assert response.tool_calls == []
    assert response.text == "The Remember tool is unavailable here (tools offered: read)."


def test_bad_json_in_a_call_directive_is_answered_not_called() -> None:
    response = ScriptedModel().complete(request([UserMessage("call read {nope")]))
    assert response.tool_calls == []
    assert response.text.startswith("I could not read the input for read as JSON")


def test_an_empty_directive_argument_gets_usage() -> None:
    response = ScriptedModel().complete(request([UserMessage("remember:   ")]))
    assert response.text == "Usage: remember: <a fact to keep>"


def _turn(call: ToolCall, text: str, is_error: bool = False) -> list[Message]:
    return [
        AssistantMessage("", (call,)),
        ToolResultMessage(call.id, call.name, text, is_error),
    ]


def test_prove_cites_the_latest_successful_non_memory_tool_call() -> None:
    read1 = ToolCall("tu_00000000000000a1", "read", {"path": "a"})
    read2 = ToolCall("tu_00000000000000a2", "read", {"path": "b"})
    failed = ToolCall("tu_00000000000000a3", "read", {"path": "c"})
    remember = ToolCall("tu_00000000000000a4", "Remember", {"text": "x"})
    messages: list[Message] = [
        UserMessage("call read"),
        *_turn(read1, "A"),
        UserMessage("call read"),
        *_turn(read2, "B"),
        UserMessage("call read"),
        *_turn(failed, "no such file", is_error=True),
        UserMessage("remember: x"),
        *_turn(remember, "remembered"),
        UserMessage("prove 1"),
    ]
    [call] = ScriptedModel().complete(request(messages)).tool_calls
    assert call.name == "PlanComplete"
    assert call.input == {"step": 1, "evidence": [{"toolUseId": "tu_00000000000000a2"}]}


def test_prove_without_evidence_says_so() -> None:
    response = ScriptedModel().complete(request([UserMessage("prove 3")]))
    assert response.tool_calls == []
    assert "no successful tool call to cite for step 3" in response.text


def test_after_a_tool_result_it_summarizes_the_first_line() -> None:
    call = ToolCall("tu_00000000000000b1", "read", {})
    ok = request([UserMessage("call read"), *_turn(call, "\nfirst line\nsecond")])
    failed = request([UserMessage("call read"), *_turn(call, "read: missing\nmore", True)])
    assert ScriptedModel().complete(ok).text == "Done: first line"
    assert ScriptedModel().complete(failed).text == "That failed: read: missing"


def test_a_plain_message_is_noted() -> None:
    response = ScriptedModel().complete(request([UserMessage("hello there.")]))
    assert response.text == "Noted: hello there."


def test_a_plain_answer_reflects_recalled_memory_and_the_next_step() -> None:
    system = [
        SystemBlock("instructions", "be helpful"),
        SystemBlock(
            "recalled_memory",
            "<recalled_memory>\nRelevant facts remembered from earlier sessions:\n"
            "- the plan is Enterprise.\n- second fact\n</recalled_memory>",
        ),
        SystemBlock(
            "handoff",
            "<handoff>\n# Handoff\n## Active plan\n1. [proven] reproduce\n2. [open] patch\n"
            "## Next actions\n- Do: patch the exporter\n- Do: verify\n## Last session\n</handoff>",
        ),
    ]
    text = ScriptedModel().complete(request([UserMessage("what next?")], system=system)).text
    assert text == (
        "Noted: what next. From memory: the plan is Enterprise. Resuming: Do: patch the exporter."
    )


def test_without_a_handoff_it_resumes_from_the_first_unfinished_plan_step() -> None:
    system = [
        SystemBlock("instructions", "x"),
        SystemBlock(
            "continuity_tail",
            "<current_plan>\nplan-0001 — Ship\n1. [proven] build\n"
            "2. [claimed — unverified] test\n3. [open] release\n</current_plan>",
        ),
    ]
    text = ScriptedModel().complete(request([UserMessage("status")], system=system)).text
    assert text == "Noted: status. Resuming: 2. [claimed — unverified] test."


def write_script(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_script_mode_replays_responses_in_order(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        {
            "responses": [
                {"tool_calls": [{"name": "read", "input": {"path": "x"}}]},
                {"text": "all done"},
            ]
        },
    )
    model = select_model("scripted", environ={"SPECWIRE_SCRIPT": str(path)})
    assert isinstance(model, ReplayModel)
    empty = request([UserMessage("anything")])
    [call] = model.complete(empty).tool_calls
    assert (call.name, call.input) == ("read", {"path": "x"}) and TU.match(call.id)
    assert model.complete(empty).text == "all done"
    assert model.complete(empty).text == "[script exhausted after 2 responses]"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"nope": 1}, "expected a list of responses"),
        ([{"text": 3}], "response 1: text must be a string"),
        ([{"text": "a"}, {"tool_calls": [{"input": {}}]}], "response 2, tool call 1"),
        ([{"txt": "typo"}], "unknown key(s) txt"),
    ],
)
def test_a_bad_script_is_a_clear_error(tmp_path: Path, data: Any, message: str) -> None:
    path = write_script(tmp_path, data)
    with pytest.raises(ModelError) as caught:
        select_model("scripted", environ={"SPECWIRE_SCRIPT": str(path)})
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_spec_model_ids_select_the_scripted_model() -> None:
    assert isinstance(select_model("scripted", environ={}), ScriptedModel)
    model = select_model("scripted/demo", environ={})
    assert isinstance(model, ScriptedModel) and model.model_id == "scripted/demo"


def test_specwire_model_overrides_the_spec_model() -> None:
    model = select_model("openai/gpt-4o", environ={"SPECWIRE_MODEL": "scripted"})
    assert isinstance(model, ScriptedModel)


def test_an_unknown_model_is_unavailable_with_a_way_out() -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        select_model("mystery/claude-x", environ={})
    message = str(caught.value)
    assert '"mystery/claude-x"' in message
    assert "anthropic/<model>" in message and "openai-compatible/<model>" in message
    assert "SPECWIRE_MODEL=scripted" in message


def test_the_override_itself_can_name_an_unavailable_model() -> None:
    with pytest.raises(ModelUnavailableError, match=r'"mystery-5" \(from SPECWIRE_MODEL\)'):
        select_model("scripted", environ={"SPECWIRE_MODEL": "mystery-5"})


def test_the_process_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECWIRE_MODEL", "nope-model")
    with pytest.raises(ModelUnavailableError, match="nope-model"):
        select_model("scripted")

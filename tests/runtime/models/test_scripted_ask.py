"""The scripted model's ``ask about <topic>: <question>`` directive: it asks only what its
context does not already answer."""

from __future__ import annotations

from specwire.runtime.models import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    SystemBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from specwire.runtime.models.types import Message

ASK = "ask about contact channel: Which contact channel do you prefer?"


def complete(
    messages: list[Message], system: list[SystemBlock] | None = None, tools: tuple[str, ...] = ()
) -> ModelResponse:
    blocks = system or [SystemBlock("instructions", "You help customers.")]
    request = ModelRequest(blocks, messages, [ToolSpec(name, "", {}) for name in tools])
    return ScriptedModel().complete(request)


def answer(messages: list[Message], system: list[SystemBlock] | None = None) -> str:
    return complete(messages, system).text


def test_it_asks_when_nothing_in_context_names_the_topic() -> None:
    assert answer([UserMessage(ASK)]) == "Which contact channel do you prefer?"


def test_a_recalled_fact_answers_the_question_instead() -> None:
    recalled = SystemBlock(
        "recalled_memory",
        "<recalled_memory>\nRelevant facts remembered from earlier sessions:\n"
        "- My preferred contact channel is email.\n</recalled_memory>",
    )
    system = [SystemBlock("instructions", "You help customers."), recalled]
    assert answer([UserMessage(ASK)], system) == "Known: My preferred contact channel is email."


def test_every_topic_word_must_be_on_one_line() -> None:
    recalled = SystemBlock("recalled_memory", "- the contact is Ada\n- the channel is #ops")
    system = [SystemBlock("instructions", "x"), recalled]
    assert answer([UserMessage(ASK)], system) == "Which contact channel do you prefer?"


def test_an_earlier_message_of_the_conversation_counts_but_not_the_asking_one() -> None:
    earlier: list[Message] = [
        UserMessage("Email is my contact channel, always."),
        AssistantMessage("Noted: Email is my contact channel, always."),
        UserMessage(ASK),
    ]
    assert answer(earlier) == "Known: Email is my contact channel, always."


def test_in_a_chain_a_tool_result_after_the_asking_message_counts() -> None:
    chain = "steps:\nrecall: contact channel\n" + ASK
    call = ToolCall("tu_0123456789abcdef", "Recall", {"query": "contact channel"})
    messages: list[Message] = [
        UserMessage(chain),
        AssistantMessage("", (call,)),
        ToolResultMessage(call.id, "Recall", "1 fact:\n- contact channel: email only"),
    ]
    assert answer(messages) == "Known: contact channel: email only."
    missing: list[Message] = [
        UserMessage(chain),
        AssistantMessage("", (call,)),
        ToolResultMessage(call.id, "Recall", "no facts found"),
    ]
    assert answer(missing) == "Which contact channel do you prefer?"


def test_with_recall_offered_it_looks_in_memory_before_asking() -> None:
    response = complete([UserMessage(ASK)], tools=("Recall",))
    assert response.text == ""
    [call] = response.tool_calls
    assert (call.name, call.input) == ("Recall", {"query": "contact channel"})
    found = '1 memory match(es) for "contact channel":\n  • (1.00) contact channel is email'
    after: list[Message] = [
        UserMessage(ASK),
        AssistantMessage("", (call,)),
        ToolResultMessage(call.id, "Recall", found),
    ]
    assert complete(after, tools=("Recall",)).text == "Known: contact channel is email."


def test_a_recall_that_finds_nothing_is_not_knowledge_even_if_it_echoes_the_topic() -> None:
    call = ToolCall("tu_0123456789abcdef", "Recall", {"query": "contact channel"})
    after: list[Message] = [
        UserMessage(ASK),
        AssistantMessage("", (call,)),
        ToolResultMessage(call.id, "Recall", 'no memories matched "contact channel" (store: 0)'),
    ]
    assert complete(after, tools=("Recall",)).text == "Which contact channel do you prefer?"


def test_known_from_context_it_does_not_call_recall() -> None:
    system = [SystemBlock("instructions", "Our contact channel is the ticket form.")]
    response = complete([UserMessage(ASK)], system, tools=("Recall",))
    assert response.tool_calls == []
    assert response.text == "Known: Our contact channel is the ticket form."

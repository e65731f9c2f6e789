"""Token counts estimated from a request's text, before (or without) a provider's count.

About four characters a token: what the scripted model reports as its usage (so budgets test
offline), and what the dream's budget guard (``runtime.hosts.dream_session.BudgetedModel``)
takes a call's prompt to cost before it is sent. A provider's tokenizer differs (code and JSON
run nearer three characters a token, CJK one or more tokens a character): a guard that must
not overspend also uses what the previous call reported.
"""

from __future__ import annotations

import json

from specwire.runtime.models.types import AssistantMessage, ModelRequest, ModelResponse

CHARS_PER_TOKEN = 4


def _chars(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def tokens_of_chars(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def prompt_tokens(request: ModelRequest) -> int:
    """The request's prompt: system blocks, messages (with tool calls), tool specs."""
    prompt = sum(len(block.text) for block in request.system)
    for message in request.messages:
        prompt += len(message.text)
        if isinstance(message, AssistantMessage):
            prompt += sum(_chars(call.input) + len(call.name) for call in message.tool_calls)
    prompt += sum(len(t.name) + len(t.description) + _chars(t.input_schema) for t in request.tools)
    return tokens_of_chars(prompt)


def answer_tokens(response: ModelResponse) -> int:
    """The response's text and tool calls."""
    answer = len(response.text) + sum(
        _chars(call.input) + len(call.name) for call in response.tool_calls
    )
    return tokens_of_chars(answer)

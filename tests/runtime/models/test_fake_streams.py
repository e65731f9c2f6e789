"""The streaming fakes speak what the official SDKs parse, at the rate and with the faults asked."""

from __future__ import annotations

import threading
from importlib.util import find_spec
from typing import Any

import pytest

from tests.support.fake_streams import FakeToolCall, StreamReply, serve_stream, words

# The SDKs are imported by the tests that use them: importing them costs seconds, which every
# xdist worker would pay at collection.
pytestmark = pytest.mark.skipif(
    find_spec("anthropic") is None or find_spec("openai") is None,
    reason="the anthropic and openai SDKs are not installed",
)
USER = [{"role": "user", "content": "hi"}]


def test_words_join_back_to_the_text() -> None:
    text = "  Two  words\nand more "
    assert "".join(words(text)) == text
    assert words("one two") == ["one ", "two"]


def test_the_anthropic_fake_streams_text_and_tool_arguments_in_pieces() -> None:
    import anthropic

    call = FakeToolCall("ls", {"path": "src/deep/folder"})
    reply = StreamReply(text="Hello there, world.", tool_calls=[call], argument_piece=5)
    with serve_stream("anthropic", [reply]) as fake:
        client = anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0)
        with client.messages.stream(model="m", max_tokens=9, messages=USER) as stream:
            kinds = [
                getattr(event.delta, "type", "")
                for event in stream
                if event.type == "content_block_delta"
            ]
            final = stream.get_final_message()
    assert kinds.count("text_delta") == 3
    assert kinds.count("input_json_delta") > 3
    assert [block.type for block in final.content] == ["text", "tool_use"]
    assert final.content[1].input == {"path": "src/deep/folder"}
    assert fake.records[0].finished and fake.records[0].deltas_sent == len(kinds)


def test_the_openai_fake_streams_chunks_and_usage_when_asked() -> None:
    import openai

    reply = StreamReply(text="a b c d", tool_calls=[FakeToolCall("grep", {"pattern": "x"})])
    with serve_stream("openai", [reply]) as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.url + "/v1", max_retries=0)
        chunks = list(
            client.chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        )
        whole = client.chat.completions.create(model="m", messages=USER)
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["a ", "b ", "c ", "d"]
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 25
    assert whole.choices[0].message.content == "a b c d"
    assert whole.choices[0].message.tool_calls[0].function.arguments == '{"pattern": "x"}'


def test_hold_last_keeps_the_last_token_until_released() -> None:
    import openai

    hold = threading.Event()
    reply = StreamReply(text="first words then the end", hold_last=hold)
    seen: list[str] = []
    with serve_stream("openai", [reply]) as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.url + "/v1", max_retries=0)
        for chunk in client.chat.completions.create(model="m", messages=USER, stream=True):
            piece = chunk.choices[0].delta.content if chunk.choices else None
            if piece:
                seen.append(piece)
                if len(seen) == 4:  # all but the last: it waits for the test
                    assert fake.records[0].deltas_sent == 4
                    assert not fake.records[0].finished
                    hold.set()
    assert "".join(seen) == "first words then the end"


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_a_provider_error_mid_stream_reaches_the_sdk(wire: Any) -> None:
    reply = StreamReply(text="one two three four", fail_after=2)
    with serve_stream(wire, [reply]) as fake, pytest.raises(Exception, match="Overloaded"):
        _drain(wire, fake.url)
    assert fake.records[0].deltas_sent == 2


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_a_cut_stream_fails_in_the_sdk(wire: Any) -> None:
    reply = StreamReply(text="one two three four", cut_after=1)
    # The SDKs raise different transport errors.
    with serve_stream(wire, [reply]) as fake, pytest.raises(Exception):  # noqa: B017
        _drain(wire, fake.url)
    assert fake.records[0].deltas_sent == 1


def _drain(wire: str, url: str) -> None:
    if wire == "anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
        with client.messages.stream(model="m", max_tokens=9, messages=USER) as stream:
            stream.get_final_message()
    else:
        import openai

        client = openai.OpenAI(api_key="k", base_url=url + "/v1", max_retries=0)
        list(client.chat.completions.create(model="m", messages=USER, stream=True))

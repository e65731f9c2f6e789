"""The Slack Web API, outbound: replies posted in the thread with ``chat.postMessage``, and a
streamed reply's message updated with ``chat.update`` (``runtime.hosts.http.slack_stream``), or
removed with ``chat.delete`` when it ended with nothing to show.

Through the official ``slack_sdk`` client, which retries connection errors and rate limits
(``Retry-After``). ``$SPECWIRE_SLACK_API_URL`` points it at another base URL (a proxy, or a fake
Slack API in tests).

Every text is escaped as Slack's formatting reference asks (``&``, ``<`` and ``>``): the model
writes it, and a prompt injection may write it, so none of it may become a control sequence — a
``<!channel>`` or ``<!here>`` ping (even where the workspace lets only admins use them), a
``<@U…>`` mention, or a ``<https://…|label>`` link shown under a label of the model's choice.
Slack's own markdown (``*bold*``, ``_italics_``, code) and bare URLs still render.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from specwire.runtime.core.fragment import SLACK_API_URL_ENV

if TYPE_CHECKING:
    from slack_sdk import WebClient

# Slack cuts a message's text at 40,000 characters; longer replies are split.
MAX_TEXT = 39_000


class SlackPoster:
    def __init__(self, bot_token: str, *, timeout_s: int = 30) -> None:
        from slack_sdk import WebClient
        from slack_sdk.http_retry.builtin_handlers import (
            ConnectionErrorRetryHandler,
            RateLimitErrorRetryHandler,
            ServerErrorRetryHandler,
        )

        base_url = os.environ.get(SLACK_API_URL_ENV, "").strip() or WebClient.BASE_URL
        self._client: WebClient = WebClient(
            token=bot_token,
            base_url=base_url if base_url.endswith("/") else base_url + "/",
            timeout=timeout_s,
            retry_handlers=[
                ConnectionErrorRetryHandler(max_retry_count=2),
                RateLimitErrorRetryHandler(max_retry_count=2),
                ServerErrorRetryHandler(max_retry_count=2),
            ],
        )

    def post(self, channel: str, thread_ts: str, text: str) -> str:
        """Post ``text`` in the thread (in parts past ``MAX_TEXT``); the first message's ts."""
        parts = slack_text(text)
        first = self._post_one(channel, thread_ts, parts[0])
        for part in parts[1:]:
            self._post_one(channel, thread_ts, part)
        return first

    def update(self, channel: str, ts: str, text: str) -> None:
        """Replace the text of the bot's message ``ts`` (its first ``MAX_TEXT`` characters)."""
        self._update_one(channel, ts, slack_text(text)[0])

    def finish(self, channel: str, thread_ts: str, ts: str, text: str) -> None:
        """The streamed message ``ts`` ends as ``text``: its first part, the rest posted after."""
        first, *rest = slack_text(text)
        self._update_one(channel, ts, first)
        for part in rest:
            self._post_one(channel, thread_ts, part)

    def delete(self, channel: str, ts: str) -> None:
        """Remove the bot's message ``ts`` (a streamed reply that ended with nothing to show)."""
        self._client.chat_delete(channel=channel, ts=ts)

    def _update_one(self, channel: str, ts: str, text: str) -> None:
        self._client.chat_update(channel=channel, ts=ts, text=text)

    def _post_one(self, channel: str, thread_ts: str, text: str) -> str:
        posted = self._client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)
        return str(posted.get("ts") or "")


def slack_escaped(text: str) -> str:
    """``text`` as Slack shows it literally: ``&``, ``<`` and ``>`` as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_text(text: str) -> list[str]:
    """``text`` escaped, in parts of at most ``MAX_TEXT`` characters (one empty part for no
    text), never cutting an entity in two."""
    return split_text(slack_escaped(text))


def split_text(text: str) -> list[str]:
    """``text`` in parts of at most ``MAX_TEXT`` characters (one empty part for no text); a
    part never ends inside an ``&…;`` entity."""
    parts: list[str] = []
    start = 0
    while len(text) - start > MAX_TEXT:
        end = start + MAX_TEXT
        amp = text.rfind("&", max(start, end - 4), end)  # "&amp;" is the longest entity
        if amp > start and ";" not in text[amp:end]:
            end = amp
        parts.append(text[start:end])
        start = end
    parts.append(text[start:])
    return parts

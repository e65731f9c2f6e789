"""The Slack Web API, outbound: replies posted in the thread with ``chat.postMessage``, and a
streamed reply's message updated with ``chat.update`` (``runtime.hosts.http.slack_stream``).

Through the official ``slack_sdk`` client, which retries connection errors and rate limits
(``Retry-After``). ``$SPECWIRE_SLACK_API_URL`` points it at another base URL (a proxy, or a fake
Slack API in tests).
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
        parts = split_text(text)
        first = self._post_one(channel, thread_ts, parts[0])
        for part in parts[1:]:
            self._post_one(channel, thread_ts, part)
        return first

    def update(self, channel: str, ts: str, text: str) -> None:
        """Replace the text of the bot's message ``ts`` (at most ``MAX_TEXT`` characters)."""
        self._client.chat_update(channel=channel, ts=ts, text=text[:MAX_TEXT])

    def finish(self, channel: str, thread_ts: str, ts: str, text: str) -> None:
        """The streamed message ``ts`` ends as ``text``: its first part, the rest posted after."""
        first, *rest = split_text(text)
        self.update(channel, ts, first)
        for part in rest:
            self._post_one(channel, thread_ts, part)

    def _post_one(self, channel: str, thread_ts: str, text: str) -> str:
        posted = self._client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)
        return str(posted.get("ts") or "")


def split_text(text: str) -> list[str]:
    """``text`` in parts of at most ``MAX_TEXT`` characters (one empty part for no text)."""
    return [text[start : start + MAX_TEXT] for start in range(0, max(len(text), 1), MAX_TEXT)]

"""The Slack Web API, outbound: replies posted in the thread with ``chat.postMessage``.

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

    def post(self, channel: str, thread_ts: str, text: str) -> None:
        for start in range(0, max(len(text), 1), MAX_TEXT):
            self._client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, text=text[start : start + MAX_TEXT]
            )

"""The Slack Web API, outbound: replies posted in the thread with ``chat.postMessage``, and a
streamed reply's message updated with ``chat.update`` (``runtime.hosts.http.slack_stream``), or
removed with ``chat.delete`` when it ended with nothing to show.

Through the official ``slack_sdk`` client, which retries connection errors and rate limits
(``Retry-After``). ``$SPECWIRE_SLACK_API_URL`` points it at another base URL (a proxy, or a fake
Slack API in tests).

A post is not idempotent: a connection lost or a server error after Slack stored the message
would post it twice if simply retried. So ``chat.postMessage`` is retried only on rate limits
(nothing was stored); after an ambiguous failure the thread is read back
(``conversations.replies``, the ``*:history`` scopes the bot already has for its events) and a
message of the bot's own since just before the attempt counts as posted when it carries this
post's own mark: each post sends a random ``post`` id in its message ``metadata`` (read back with
``include_all_metadata``), so a message of the same text another turn posted on purpose (a
second "Done.") is never taken for it. Only when none is there is the post sent again (and when
the thread cannot be read, too: a reply is never dropped for want of a check).

Every text is escaped as Slack's formatting reference asks (``&``, ``<`` and ``>``): the model
writes it, and a prompt injection may write it, so none of it may become a control sequence — a
``<!channel>`` or ``<!here>`` ping (even where the workspace lets only admins use them), a
``<@U…>`` mention, or a ``<https://…|label>`` link shown under a label of the model's choice.
Slack's own markdown (``*bold*``, ``_italics_``, code) and bare URLs still render.
"""

from __future__ import annotations

import http.client
import os
import secrets
import time
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.fragment import SLACK_API_URL_ENV

if TYPE_CHECKING:
    from slack_sdk import WebClient

# Slack cuts a message's text at 40,000 characters; longer replies are split.
MAX_TEXT = 39_000
# Sends of one message after an ambiguous failure (each preceded by a look at the thread).
POST_ATTEMPTS = 3
# How far before an attempt a message found in the thread may be dated (clocks differ).
POSTED_SLACK_S = 120.0
# The message metadata's event type that carries a post's own id.
POST_EVENT = "specwire_reply"


class SlackPoster:
    def __init__(self, bot_token: str, *, timeout_s: int = 30) -> None:
        from slack_sdk import WebClient
        from slack_sdk.http_retry.builtin_handlers import (
            ConnectionErrorRetryHandler,
            RateLimitErrorRetryHandler,
            ServerErrorRetryHandler,
        )

        base_url = os.environ.get(SLACK_API_URL_ENV, "").strip() or WebClient.BASE_URL
        base_url = base_url if base_url.endswith("/") else base_url + "/"
        self._client: WebClient = WebClient(
            token=bot_token,
            base_url=base_url,
            timeout=timeout_s,
            retry_handlers=[
                ConnectionErrorRetryHandler(max_retry_count=2),
                RateLimitErrorRetryHandler(max_retry_count=2),
                ServerErrorRetryHandler(max_retry_count=2),
            ],
        )
        # Posts: a rate limit is retried (nothing was stored), anything else comes back here.
        self._poster: WebClient = WebClient(
            token=bot_token,
            base_url=base_url,
            timeout=timeout_s,
            retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
        )
        self._bot_user: str | None = None

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
        from slack_sdk.errors import SlackApiError

        attempt = 1
        mark = secrets.token_hex(8)  # this post's id, the same in every attempt
        metadata = {"event_type": POST_EVENT, "event_payload": {"post": mark}}
        while True:
            started = time.time()
            try:
                posted = self._poster.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=text, metadata=metadata
                )
                return str(posted.get("ts") or "")
            except (OSError, http.client.HTTPException, SlackApiError) as exc:
                refused = isinstance(exc, SlackApiError) and exc.response.status_code < 500
                if refused or attempt >= POST_ATTEMPTS:
                    raise  # refused (a bad channel, a revoked token) was not stored
                found = self._posted_since(channel, thread_ts, text, mark, started - POSTED_SLACK_S)
                if found:
                    return found
            time.sleep(0.5 * attempt)
            attempt += 1

    def _posted_since(
        self, channel: str, thread_ts: str, text: str, mark: str, oldest: float
    ) -> str:
        """The ts of the bot's own message ``text`` marked ``mark`` in the thread dated
        ``oldest`` or later, or "" (also when the thread cannot be read)."""
        try:
            bot = self._bot_user_id()
            replies = self._client.conversations_replies(
                channel=channel,
                ts=thread_ts,
                oldest=f"{oldest:.6f}",
                limit=200,
                include_all_metadata=True,
            )
        except Exception:  # noqa: BLE001 (no history scope, Slack down: post again)
            return ""
        messages: list[Any] = list(replies.get("messages") or [])
        for message in reversed(messages):
            mine = message.get("user") == bot if bot else bool(message.get("bot_id"))
            same = message.get("text") == text and _mark_of(message) == mark
            if mine and same and message.get("ts"):
                return str(message["ts"])
        return ""

    def _bot_user_id(self) -> str:
        if self._bot_user is None:
            self._bot_user = str(self._client.auth_test().get("user_id") or "")
        return self._bot_user


def _mark_of(message: Any) -> str | None:
    """The post id in a message's ``metadata`` (``POST_EVENT``), or None."""
    metadata = message.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != POST_EVENT:
        return None
    payload = metadata.get("event_payload")
    found = payload.get("post") if isinstance(payload, dict) else None
    return found if isinstance(found, str) else None


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

"""The Slack Events API, inbound: request signatures, the event envelope, retries.

Slack signs each request with the app's signing secret: ``X-Slack-Signature`` is
``v0=`` + hex HMAC-SHA256 of ``v0:<X-Slack-Request-Timestamp>:<raw body>``. A request older
than five minutes is refused (a replayed capture). Slack retries an event it did not see
acknowledged within three seconds, with the same ``event_id``; a message that mentions the bot
also arrives twice (``message`` and ``app_mention``, two event ids, one ``ts``), so both keys
de-duplicate.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specwire.runtime.core.scopes import Audience

MAX_SKEW_S = 5 * 60
_UNIX_TIME = re.compile(r"[0-9]{1,12}")  # not str.isdigit(): it takes "²", which int() refuses
_MENTION = re.compile(r"<@[A-Z0-9]+>")
# Message subtypes that are edits, deletions, joins and the like: not something said to the bot.
_SAID = frozenset({None, "thread_broadcast", "file_share"})


def signature_problem(
    signing_secret: str, timestamp: str | None, signature: str | None, body: bytes, *, now: float
) -> str | None:
    """Why the request is not Slack's, or None when its signature checks out."""
    if not timestamp or not signature:
        return "missing X-Slack-Request-Timestamp or X-Slack-Signature"
    if not _UNIX_TIME.fullmatch(timestamp):
        return "X-Slack-Request-Timestamp is not a Unix time"
    if abs(now - int(timestamp)) > MAX_SKEW_S:
        return "the request timestamp is more than 5 minutes away from now (a replay?)"
    base = b"v0:" + timestamp.encode("ascii") + b":" + body
    expected = "v0=" + hmac.new(signing_secret.encode("utf-8"), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace")):
        return "the signature does not match the signing secret"
    return None


@dataclass(frozen=True)
class SlackMessage:
    event_id: str
    team: str
    channel: str
    user: str
    text: str
    ts: str
    thread_ts: str | None
    # Slack's ``channel_type``: ``im`` for a direct message, ``channel``, ``group``, ``mpim``.
    channel_type: str | None = None

    @property
    def direct(self) -> bool:
        """A direct message between the person and the bot (Slack's DM channel ids start with
        ``D`` when an event carries no ``channel_type``)."""
        if self.channel_type is not None:
            return self.channel_type == "im"
        return self.channel.startswith("D")

    def audience(self) -> Audience:
        """The person and the channel (never the thread: a fact said in a channel is that
        channel's); ``private`` only in a direct message."""
        return Audience(
            user=f"slack:{self.team}:{self.user}",
            conversation=f"slack:{self.team}:{self.channel}",
            private=self.direct,
        )

    @property
    def reply_thread(self) -> str:
        """Replies go into the message's thread (a top-level message starts one)."""
        return self.thread_ts or self.ts

    def conversation_key(self, session_key: str) -> str:
        if session_key == "channel":
            return f"slack:{self.team}:{self.channel}"
        if session_key == "user":
            return f"slack:{self.team}:user:{self.user}"
        return f"slack:{self.team}:{self.channel}:{self.reply_thread}"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def message_from_envelope(envelope: Mapping[str, Any]) -> SlackMessage | None:
    """The person's message an ``event_callback`` carries, or None when there is nothing to
    answer: another event type, an edit or deletion, or a message from a bot (this one
    included — answering itself would loop)."""
    event = envelope.get("event")
    if not isinstance(event, Mapping) or event.get("type") not in ("message", "app_mention"):
        return None
    if event.get("bot_id") or event.get("subtype") not in _SAID:
        return None
    user, channel, ts = (
        _text(event.get("user")),
        _text(event.get("channel")),
        _text(event.get("ts")),
    )
    event_id = _text(envelope.get("event_id"))
    if user is None or channel is None or ts is None or event_id is None:
        return None
    if user in _bot_user_ids(envelope):
        return None
    text = _MENTION.sub("", _text(event.get("text")) or "").strip()
    if not text:
        return None
    return SlackMessage(
        event_id=event_id,
        team=_text(envelope.get("team_id")) or _text(event.get("team")) or "-",
        channel=channel,
        user=user,
        text=text,
        ts=ts,
        thread_ts=_text(event.get("thread_ts")),
        channel_type=_text(event.get("channel_type")),
    )


def _bot_user_ids(envelope: Mapping[str, Any]) -> set[str]:
    authorizations = envelope.get("authorizations")
    ids: set[str] = set()
    if isinstance(authorizations, list):
        for authorization in authorizations:
            if isinstance(authorization, Mapping) and authorization.get("is_bot"):
                user_id = _text(authorization.get("user_id"))
                if user_id:
                    ids.add(user_id)
    return ids


class SeenEvents:
    """Keys seen in the last ``window_s`` seconds (bounded): Slack's retries come within
    minutes, so an hour covers them; a restart forgets (documented)."""

    def __init__(self, *, window_s: float = 3600.0, capacity: int = 100_000) -> None:
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._window_s = window_s
        self._capacity = capacity
        self._lock = threading.Lock()

    def first_time(self, *keys: str, now: float | None = None) -> bool:
        """Record ``keys``; True when none of them was seen before."""
        moment = time.monotonic() if now is None else now
        with self._lock:
            self._expire(moment)
            fresh = not any(key in self._seen for key in keys)
            for key in keys:
                self._seen[key] = moment
                self._seen.move_to_end(key)
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
            return fresh

    def _expire(self, moment: float) -> None:
        while self._seen:
            key, at = next(iter(self._seen.items()))
            if moment - at <= self._window_s:
                return
            del self._seen[key]

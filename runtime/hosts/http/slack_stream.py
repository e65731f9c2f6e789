"""One Slack answer shown while it is written: posted at its first words, then updated.

The turn's sink only records what there is to show; a thread of the reply's own talks to Slack,
so a slow or rate-limited Slack never holds up the model. The first message is posted as soon as
there is something to show (words, or the tool the agent is running); then it is updated with
``chat.update`` at most once per ``UPDATE_INTERVAL_S``, counted from the end of the previous call
(Slack allows about one message a second per channel, and ``chat.update`` is rate limited too;
on HTTP 429 the Slack client waits the ``Retry-After`` it was given, and that wait delays every
later call). The last update is the final reply, exactly as the non-streamed bot would have
posted it (an empty reply keeps the text shown before the tools, or deletes the message);
until then the message ends with a line in italics saying what is happening
(``_writing…_``, ``_running Recall…_``, ``_starting again (…)…_``), which the final text drops.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from specwire.runtime.hosts.http.reply_stream import (
    ReplyPieces,
    RestartPiece,
    TextPiece,
    ToolPiece,
)
from specwire.runtime.hosts.http.slack_replies import MAX_TEXT, SlackPoster
from specwire.runtime.models.streaming import StreamEvent

UPDATE_INTERVAL_S = 1.0
WRITING = "writing…"
# How long ``finish`` waits for Slack to take the final text (retries and Retry-After included).
FINISH_WAIT_S = 300.0


class SlackReplyStream:
    def __init__(
        self,
        poster: SlackPoster,
        channel: str,
        thread_ts: str,
        *,
        log: Callable[[str], None],
        interval_s: float = UPDATE_INTERVAL_S,
    ) -> None:
        self._poster = poster
        self._channel = channel
        self._thread_ts = thread_ts
        self._log = log
        self._interval_s = interval_s
        self._pieces = ReplyPieces()
        self._changed = threading.Condition()
        self._text = ""
        self._status = ""
        self._dirty = False
        self._final: str | None = None
        self._ts: str | None = None  # the posted message, once there is one
        self._failure: Exception | None = None
        self._worker = threading.Thread(target=self._run, name="slack-reply", daemon=True)
        self._worker.start()

    def sink(self, event: StreamEvent) -> None:
        """The turn's ``StreamSink``: never blocks on Slack."""
        pieces = self._pieces.feed(event)
        if not pieces:
            return
        with self._changed:
            for piece in pieces:
                if isinstance(piece, TextPiece):
                    self._text += piece.text
                    self._status = ""
                elif isinstance(piece, ToolPiece):
                    self._status = f"running {piece.name}…" if piece.status == "running" else ""
                elif isinstance(piece, RestartPiece):
                    self._text = ""
                    self._status = f"starting again ({piece.reason})…"
            self._dirty = True
            self._changed.notify()

    def finish(self, text: str) -> None:
        """End the reply as ``text`` (posted whole when nothing was shown yet) and wait until
        Slack has it; raises what posting the final text raised."""
        with self._changed:
            self._final = text
            self._changed.notify()
        self._worker.join(FINISH_WAIT_S)
        if self._worker.is_alive():
            raise TimeoutError(f"Slack did not take the reply within {FINISH_WAIT_S:g} s")
        if self._failure is not None:
            raise self._failure

    def _shown(self) -> str:
        """The text so far and, on its own line, what is happening (``_writing…_``, ``_running
        Recall…_``): a message still being written always ends with that line."""
        status = f"_{self._status or WRITING}_"
        room = MAX_TEXT - len(status) - 2
        text = self._text if len(self._text) <= room else self._text[: room - 1] + "…"
        return f"{text}\n{status}" if text else status

    def _run(self) -> None:
        last_call = float("-inf")
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._dirty or self._final is not None)
                # Paced from the end of the previous call, the final text included.
                while (wait := last_call + self._interval_s - time.monotonic()) > 0:
                    self._changed.wait(wait)
                final = self._final
                shown = self._shown()
                so_far = self._text
                self._dirty = False
            if final is not None:
                self._post_final(final, so_far)
                return
            self._show(shown)
            last_call = time.monotonic()

    def _show(self, shown: str) -> None:
        try:
            if self._ts is None:
                self._ts = self._poster.post(self._channel, self._thread_ts, shown) or None
            else:
                self._poster.update(self._channel, self._ts, shown)
        except Exception as exc:  # the next update or the final text tries again
            self._log(f"[serve] slack {self._channel}: could not update the reply: {exc}\n")

    def _post_final(self, text: str, so_far: str) -> None:
        """The reply ends as ``text``; an empty one (a model may end with no words after its
        tools) leaves what was shown before, without its status line, or no message at all."""
        try:
            if self._ts is None:
                if text:
                    self._poster.post(self._channel, self._thread_ts, text)
            elif text:
                self._poster.finish(self._channel, self._thread_ts, self._ts, text)
            elif so_far:
                self._poster.update(self._channel, self._ts, so_far)
            else:
                self._poster.delete(self._channel, self._ts)
        except Exception as exc:
            self._failure = exc

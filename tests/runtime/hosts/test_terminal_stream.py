"""The console's view of a streamed turn: tokens to stdout once, tool lines, restarts, Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.hosts.terminal_stream import (
    CancelOnInterrupt,
    TerminalStream,
    first_argument,
)
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models.scripted import ScriptedModel
from specwire.runtime.models.streaming import (
    Restart,
    StreamCancelled,
    StreamSink,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    ToolDone,
    ToolRunning,
    TurnDone,
)
from specwire.runtime.models.types import ModelRequest, ModelResponse
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.tools.builtin import builtin_catalog


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _stream(*, tty: bool = False) -> tuple[TerminalStream, io.StringIO, io.StringIO]:
    out = io.StringIO()
    err: io.StringIO = _Tty() if tty else io.StringIO()
    return TerminalStream(lambda: out, lambda: err), out, err


class WordStreamingScripted(ScriptedModel):
    """The scripted model's answers, reported word by word (as a streaming adapter would)."""

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        response = self.complete(request)
        words = response.text.split(" ")
        for index, word in enumerate(words):
            piece = word if index == len(words) - 1 else word + " "
            if piece:
                sink(TextDelta(piece))
        for call in response.tool_calls:
            sink(ToolCallStarted(call.id, call.name))
            sink(ToolArgumentsDelta(call.id, json.dumps(call.input)))
        return response


def test_a_streamed_reply_is_printed_once_exactly_as_an_unstreamed_one() -> None:
    shown, out, err = _stream()
    shown.turn_started()
    for piece in ("Noted: ", "hello", "."):
        shown(TextDelta(piece))
    assert out.getvalue() == "Noted: hello."  # shown before the turn ends
    shown(TurnDone("Noted: hello."))
    shown.output("Noted: hello.")  # the loop's output call for the same reply
    shown.output("Commands:")  # anything else the loop prints is printed
    assert out.getvalue() == "Noted: hello.\nCommands:\n"
    assert err.getvalue() == ""


def test_what_the_stream_did_not_show_is_printed_at_the_end() -> None:
    shown, out, _ = _stream()
    shown(TextDelta("partial answer"))
    shown(TurnDone("partial answer\n[stopped: the tool-round limit (1) was reached]"))
    shown.output("partial answer\n[stopped: the tool-round limit (1) was reached]")
    assert out.getvalue() == "partial answer\n[stopped: the tool-round limit (1) was reached]\n"


def test_tool_lines_show_on_a_terminal_only_without_control_characters() -> None:
    shown, out, err = _stream(tty=True)
    shown(TextDelta("Let me look."))
    shown(ToolCallStarted("t1", "read"))
    shown(ToolArgumentsDelta("t1", '{"path": "ti\\u001b[31mcket'))
    shown(ToolArgumentsDelta("t1", '.txt"}'))
    shown(ToolRunning("t1", "read"))
    shown(ToolDone("t1", "read", True))
    assert out.getvalue() == "Let me look.\n"
    assert err.getvalue() == "  ↳ read  ti [31mcket.txt\n  ↳ read failed\n"
    assert "\x1b" not in err.getvalue()

    piped, _, piped_err = _stream(tty=False)
    piped(ToolRunning("t1", "read"))
    piped(ToolDone("t1", "read", False))
    assert piped_err.getvalue() == ""


def test_first_argument_is_short_and_redacted_of_nothing_it_cannot_parse() -> None:
    assert first_argument('{"command": "' + "x" * 100 + '"}') == "x" * 59 + "…"
    assert first_argument('{"flag": true, "n": 3}') == "3"
    assert first_argument("{not json") == ""
    assert first_argument("[1, 2]") == ""


def test_a_restart_is_announced_and_the_answer_starts_again() -> None:
    shown, out, err = _stream()
    shown(TextDelta("The ans"))
    shown(Restart("the model server failed (503); answering with the fallback model"))
    shown(TextDelta("Noted: hi."))
    shown(TurnDone("Noted: hi."))
    shown.output("Noted: hi.")
    assert out.getvalue() == "The ans\nNoted: hi.\n"
    assert err.getvalue().startswith("[restarting the answer: the model server failed")


def test_a_requested_cancel_raises_at_the_next_event_but_never_at_turn_done() -> None:
    shown, out, err = _stream()
    shown.turn_started()
    shown(TextDelta("Some"))
    shown.cancel_requested = True
    with pytest.raises(StreamCancelled):
        shown(TextDelta(" more"))
    assert out.getvalue() == "Some\n"
    assert "[stopped: Ctrl-C]" in err.getvalue()
    shown.cancel_requested = True
    shown(TurnDone("Some more"))  # the answer is whole: nothing to stop
    assert shown.cancel_requested is False


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals: main thread"
)
def test_ctrl_c_in_a_turn_asks_to_stop_and_a_second_one_interrupts() -> None:
    shown, _, _ = _stream()
    interrupts = CancelOnInterrupt(shown)
    lines = iter(["hello"])
    read = interrupts.reading(lambda: next(lines, None))
    with interrupts.installed():
        with pytest.raises(KeyboardInterrupt):  # at the prompt: as before
            os.kill(os.getpid(), signal.SIGINT)
        assert read() == "hello"
        os.kill(os.getpid(), signal.SIGINT)
        assert shown.cancel_requested is True
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _session(tmp_path: Path, model: ScriptedModel, shown: TerminalStream | None) -> list[Any]:
    tmp_path.mkdir()
    (tmp_path / "ticket.txt").write_text("Invoice export fails.\n", encoding="utf-8")
    catalog: ToolCatalog = builtin_catalog(["read"], tmp_path)
    printed: list[str] = []
    log = SessionLog(tmp_path / "sessions", "sess_" + "0" * 16)
    run_chat_loop(
        model=model,
        instructions="You help.",
        catalog=catalog,
        session_log=log,
        inputs=["hello there", 'call read {"path": "ticket.txt"}'],
        output=shown.output if shown else printed.append,
        log=lambda _: None,
        stream=shown,
    )
    events = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
    recorded = [(event["type"], json.dumps(event["payload"])) for event in events]
    return [(kind, re.sub(r"tu_[0-9a-f]+", "tu_", payload)) for kind, payload in recorded] + printed


def test_a_streamed_session_prints_and_records_what_an_unstreamed_one_does(
    tmp_path: Path,
) -> None:
    shown, out, _ = _stream()
    streamed = _session(tmp_path / "a", WordStreamingScripted(), shown)
    plain = _session(tmp_path / "b", ScriptedModel(), None)
    assert out.getvalue().splitlines() == plain[-2:]
    assert out.getvalue() == "Noted: hello there.\nDone: Invoice export fails.\n"
    assert streamed == plain[:-2]


def test_the_models_text_acts_on_no_terminal_but_keeps_its_bytes_when_piped() -> None:
    # Review finding H7-4: tool lines were cleaned of control characters, the answer was not:
    # a model (or the page it was told to read) could clear the screen, rewrite the tool lines
    # above, retitle the window or set the clipboard (OSC 52) as its words streamed in.
    hostile = ["Done.\x1b[1A\x1b[2K", "  \u21b3 ls\x1b]52;c;cm0gLXJmIH4=\x07", "\r\x9b2J\tok\n"]
    out = _Tty()
    shown = TerminalStream(lambda: out, lambda: io.StringIO())
    for piece in hostile:
        shown(TextDelta(piece))
    shown(TurnDone("".join(hostile)))
    shown.output("".join(hostile))
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out.getvalue())
    assert out.getvalue().startswith("Done. [1A [2K") and "\tok\n" in out.getvalue()

    piped, piped_out, _ = _stream()
    for piece in hostile:
        piped(TextDelta(piece))
    piped(TurnDone("".join(hostile)))
    assert piped_out.getvalue() == "".join(hostile) + "\n"


def test_a_console_hosts_reply_acts_on_no_terminal_either(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from specwire.runtime.hosts.console import stdout_line

    tty, piped = _Tty(), io.StringIO()
    for out in (tty, piped):
        monkeypatch.setattr("sys.stdout", out)
        stdout_line("thread-1: Noted.\x1b]0;pwned\x07\x1b[2J")
    assert tty.getvalue() == "thread-1: Noted. ]0;pwned  [2J\n"
    assert piped.getvalue() == "thread-1: Noted.\x1b]0;pwned\x07\x1b[2J\n"

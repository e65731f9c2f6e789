"""What every host shares on the local console: stdin/stdout/stderr, argv, model selection.

What is written to the console passes ``runtime.core.undecodable.valid_text`` first: a lone
surrogate (from bytes that were not UTF-8) is shown as U+FFFD instead of failing the write.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence

from specwire.runtime.core.progress import is_terminal
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.core.undecodable import valid_text
from specwire.runtime.hosts.preflight import StartCheck, passes_start_checks
from specwire.runtime.hosts.terminal_stream import terminal_safe
from specwire.runtime.loop.tools import SKILL_TOOL_NAME
from specwire.runtime.models import Model, ModelError
from specwire.runtime.models.select import ModelRef, select_spec_model
from specwire.runtime.safety.redaction import redact

PROMPT = "> "


def stderr_log(text: str) -> None:
    sys.stderr.write(valid_text(redact(text)))
    sys.stderr.flush()


def stdout_line(text: str) -> None:
    """One line of output (a reply): on a terminal without the control characters a model's
    text could act on it with (``hosts.terminal_stream.terminal_safe``)."""
    shown = valid_text(text)
    if is_terminal(sys.stdout):
        shown = terminal_safe(shown)
    sys.stdout.write(shown + "\n")
    sys.stdout.flush()


def stdin_reader(prompt: str = PROMPT) -> Callable[[], str | None]:
    """Read one line per call (``None`` at end of input); prompt only when stdin is a TTY.

    Bytes that are not UTF-8 are read as U+FFFD, whatever the locale's error handler is (a
    strict one would end the session with a traceback on the first such byte)."""
    interactive = sys.stdin.isatty()
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")

    def read() -> str | None:
        if interactive:
            try:
                return input(prompt)
            except EOFError:
                return None
        line = sys.stdin.readline()
        return None if line == "" else line.rstrip("\r\n")

    return read


def parse_argv(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace | int:
    """Parse ``argv`` (default ``sys.argv[1:]``); usage errors and ``--help`` become exit codes."""
    try:
        return parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def message_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--message",
        "-m",
        action="append",
        default=[],
        metavar="TEXT",
        help=f"{what} (repeatable); run them in order without reading stdin, then exit",
    )


def load_model(
    model: ModelRef,
    prog: str,
    *,
    log: Callable[[str], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Model | None:
    """The selected model, or ``None`` after a clear message on stderr (an unavailable model,
    or a model id given as a secret reference whose variable is not set).

    ``log`` (default ``stderr_log``) receives the message as one line ending in a newline;
    ``environ`` (default ``os.environ``) is where ``SPECWIRE_MODEL`` and secrets are read.
    """
    try:
        return select_spec_model(model, environ=environ)
    except ModelError as exc:
        (stderr_log if log is None else log)(f"{prog}: {exc}\n")
        return None


def parse_and_load(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    model: ModelRef,
    prog: str,
    check: StartCheck | None = None,
) -> tuple[argparse.Namespace, Model] | int:
    """A host's start: its arguments, then its start checks (``runtime.hosts.preflight``),
    then its model; an exit status when any fails."""
    args = parse_argv(parser, argv)
    if isinstance(args, int):
        return args
    if check is not None and not passes_start_checks(check, stderr_log):
        return 2
    chosen = load_model(model, prog)
    if chosen is None:
        return 2
    return args, chosen


def describe(catalog: ToolCatalog, options: LoopOptions) -> str:
    """A short account of the tools and the memory wiring, for banners. The tool count is what
    the model is sent: the catalog plus the ``Skill`` tool a session with skills adds."""
    sent = len(catalog)
    if options.get("skills") and catalog.get(SKILL_TOOL_NAME) is None:
        sent += 1
    parts = [f"{sent} tool(s)"]
    memory = options.get("memory")
    if memory is not None:
        recall = "on" if memory.auto_recall and memory.recall is not None else "off"
        capture = "on" if memory.auto_capture and memory.on_capture is not None else "off"
        parts.append(f"memory (auto-recall {recall}, auto-capture {capture})")
    if options.get("continuity") is not None:
        parts.append("continuity on")
    if not memory and options.get("continuity") is None:
        parts.append("no memory")
    return " · ".join(parts)

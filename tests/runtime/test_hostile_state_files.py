"""A FIFO (or another non-regular file) where a state file belongs: a clear error, never a hang.

Opening a FIFO for reading blocks until a writer appears, so each case runs in a subprocess
with a timeout: a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 60  # generous: only a hang gets anywhere near it

PRELUDE = """
import sys
from pathlib import Path
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.paths import StoreLayout

root = Path(sys.argv[1]).resolve()
store = ContinuityStore(StoreLayout(root, "demo"), sessions_dir=root / "sessions")
"""

CASES: dict[str, tuple[str, str]] = {
    # name: (the file made a FIFO, below .specwire; what the subprocess does with it)
    "focus": ("state/demo/focus.md", "store.focus_view()"),
    "focus write": ("state/demo/focus.md", "store.write_focus('x')"),
    "handoff": ("state/demo/handoff.md", "store.read_handoff()"),
    "goals": ("state/demo/goals.yaml", "store.list_goals()"),
    "active plan": ("state/demo/plans/ACTIVE", "store.active_plan_id()"),
    "retention": (
        "retention.json",
        "from specwire.runtime.continuity.retention import read_pins\n"
        "read_pins(root / 'retention.json', root=root)",
    ),
    "session log": (
        "sessions/sess_0123456789abcdef.jsonl",
        "from specwire.runtime.sessions.log import SessionLog\n"
        "SessionLog(root / 'sessions', 'sess_0123456789abcdef')",
    ),
    "session log read": (
        "sessions/sess_0123456789abcdef.jsonl",
        "from specwire.runtime.sessions.log import read_events\n"
        "list(read_events(root / 'sessions' / 'sess_0123456789abcdef.jsonl'))",
    ),
    "facts": (
        "facts/demo.sqlite3",
        "from specwire.runtime.facts.store import FactStore\n"
        "FactStore.open(root / 'facts' / 'demo.sqlite3')",
    ),
}


def run_case(root: Path, action: str) -> subprocess.CompletedProcess[str]:
    script = PRELUDE + textwrap.dedent(
        f"""
        try:
            {textwrap.indent(action, "            ").strip()}
        except StoreError as exc:
            print("refused:", type(exc).__name__, exc)
        else:
            print("no error")
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script, str(root)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fifo_in_the_state_folder_is_refused_by_name(tmp_path: Path, case: str) -> None:
    relative, action = CASES[case]
    root = tmp_path / ".specwire"
    fifo = root / relative
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    done = run_case(root, action)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: UnsafeFileError "), done.stdout
    assert relative.split("/")[-1] in done.stdout
    assert "is a FIFO (named pipe), not a regular file" in done.stdout
    assert fifo.exists()  # left where it is


def test_a_fifo_plan_file_is_reported_as_unreadable(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    plans = root / "state" / "demo" / "plans"
    plans.mkdir(parents=True)
    os.mkfifo(plans / "plan-0001-fix.md")
    done = run_case(root, "print(store.scan_plans()[1][0].describe())\nstore.create_plan('next')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "plan-0001 is unreadable: it is a FIFO (named pipe), not a regular file; refusing to "
        "open it; fix state/demo/plans/plan-0001-fix.md or move it away",
        "no error",
    ]
    assert sorted(p.name for p in plans.iterdir()) == [
        "ACTIVE",
        "plan-0001-fix.md",
        "plan-0002-next.md",
    ]


def test_a_symlink_in_the_state_folder_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    scope = root / "state" / "demo"
    scope.mkdir(parents=True)
    (root / "elsewhere.md").write_text("<!-- specwire:focus -->\n", encoding="utf-8")
    (scope / "focus.md").symlink_to(root / "elsewhere.md")
    done = run_case(root, "store.write_focus('redirected?')")
    assert done.stdout.startswith("refused: UnsafeFileError state/demo/focus.md is a symbolic")
    assert (root / "elsewhere.md").read_text(encoding="utf-8") == "<!-- specwire:focus -->\n"


def test_a_fifo_among_the_command_files_is_skipped_with_a_warning(tmp_path: Path) -> None:
    commands = tmp_path / ".specwire" / "commands"
    commands.mkdir(parents=True)
    os.mkfifo(commands / "stuck.md")
    (commands / "fine.md").write_text("Say hi.\n", encoding="utf-8")
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from specwire.runtime.skills.loader import load_commands
        found = load_commands([], cwd=Path(sys.argv[1]), home_dir=None, warn=sys.stdout.write)
        print(sorted(found))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=True,
    )
    assert "stuck.md: UnsafeFileError:" in done.stdout
    assert "is a FIFO (named pipe), not a regular file" in done.stdout
    assert done.stdout.splitlines()[-1] == "['fine']"


def codegen_run(workdir: Path, spec: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["HOME"] = str(workdir)
    return subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", "run", str(ROOT / "examples" / spec)]
        + ["--message", "hello"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_a_bundle_with_a_fifo_at_focus_md_starts_and_says_why(tmp_path: Path) -> None:
    scope = tmp_path / ".specwire" / "state" / "support-bot"
    scope.mkdir(parents=True)
    os.mkfifo(scope / "focus.md")
    done = codegen_run(tmp_path, "support-bot.yaml")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "state/support-bot/focus.md is a FIFO (named pipe), not a regular file" in done.stderr


def test_a_bundle_with_a_fifo_at_the_facts_path_stops_in_one_line(tmp_path: Path) -> None:
    facts = tmp_path / ".specwire" / "facts"
    facts.mkdir(parents=True)
    os.mkfifo(facts / "support-bot.sqlite3")
    done = codegen_run(tmp_path, "support-bot.yaml")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith("support-bot: ")]
    assert "facts/support-bot.sqlite3 is a FIFO (named pipe), not a regular file" in line

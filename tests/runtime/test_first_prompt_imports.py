"""What a bundle's first answer loads: tools name their input models lazily and the runtime
reads the fragment without pydantic (``runtime.core.fragment_data``), so neither a memoryless
bundle nor a memory bundle imports pydantic for an answer that calls no tool (nor its plugin
loader, which imports importlib.metadata), and no bundle loads numpy for a turn that recalls
nothing; a memory bundle still checks its fragment (a bad one is refused in one line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specwire.emitters.registry import emit
from specwire.ir import load_spec

ROOT = Path(__file__).resolve().parents[2]

# Runs a bundle, then reports which of the watched modules it had loaded.
PROBE = """\
import atexit, runpy, sys
WATCHED = (
    "pydantic",
    "pydantic.plugin._loader",
    "importlib.metadata",
    "numpy",
    "specwire.runtime.core.fragment_model",
)
def report():
    print("@@loaded " + ",".join(n for n in WATCHED if n in sys.modules), file=sys.stderr)
atexit.register(report)
agent = sys.argv[1]
sys.argv = [agent, *sys.argv[2:]]
runpy.run_path(agent, run_name="__main__")
"""


def run_bundle(tmp_path: Path, stem: str, source: str | None = None) -> tuple[int, str, set[str]]:
    agent = tmp_path / "agent.py"
    text = source if source is not None else emit(load_spec(ROOT / "examples" / f"{stem}.yaml"))
    agent.write_text(text if isinstance(text, str) else text["agent.py"], encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(agent), "--message", "hi"],
        capture_output=True,
        text=True,
        cwd=work,
        env={**os.environ, "SPECWIRE_MODEL": "scripted"},
        timeout=120,
        check=False,
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("@@loaded"))
    loaded = {name for name in line.removeprefix("@@loaded").strip().split(",") if name}
    return done.returncode, done.stdout + done.stderr, loaded


def test_a_memoryless_bundle_answers_without_importing_pydantic(tmp_path: Path) -> None:
    code, output, loaded = run_bundle(tmp_path, "cli-plain")
    assert code == 0, output
    assert loaded == set(), output


def test_a_memory_bundle_answers_without_pydantic_or_numpy(tmp_path: Path) -> None:
    code, output, loaded = run_bundle(tmp_path, "support-bot")
    assert code == 0, output
    assert loaded == set(), output


@pytest.mark.parametrize("bad", ['"recall_k": 5', '"ttl_ms": 7776000000'])
def test_a_memory_bundle_still_validates_its_fragment(tmp_path: Path, bad: str) -> None:
    source = emit(load_spec(ROOT / "examples" / "support-bot.yaml"))["agent.py"]
    assert bad in source
    broken = source.replace(bad, bad.split(":")[0] + ": -1")
    code, output, _ = run_bundle(tmp_path, "support-bot", broken)
    assert code != 0
    assert "Traceback" not in output
    field = bad.split(":")[0].strip('"')
    assert f"invalid fragment: memory.{field}: must be" in output, output

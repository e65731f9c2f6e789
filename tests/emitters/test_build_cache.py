"""The incremental build cache: an unchanged spec whose bundle is on disk is not compiled again;
anything else is (an edited, deleted or stale bundle file, a corrupt entry), and --check / --diff
stay truthful."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from emitter_cases import EXAMPLES_DIR

import specwire.emitters.cache as cache
import specwire.emitters.registry as registry
from specwire.emitters.command import codegen

SUPPORT = EXAMPLES_DIR / "support-bot.yaml"
PLAIN = EXAMPLES_DIR / "cli-plain.yaml"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(codegen, [str(a) for a in args])


@pytest.fixture
def emits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the specs the emitters were run for."""
    seen: list[str] = []
    real = registry.emit

    def counting(spec: object) -> object:
        seen.append(spec.name)  # type: ignore[attr-defined]
        return real(spec)  # type: ignore[arg-type]

    monkeypatch.setattr(registry, "emit", counting)
    yield seen


def entries(root: Path) -> list[Path]:
    return sorted((root / "builds").rglob("*.json"))


def cache_root() -> Path:
    root = cache.default_cache_dir()
    assert root is not None
    return root


def test_an_unchanged_spec_is_not_compiled_again(tmp_path: Path, emits: list[str]) -> None:
    first = invoke("build", SUPPORT, PLAIN, "--out", tmp_path)
    assert first.exit_code == 0, first.output
    assert emits == ["support-bot", "cli-plain"]
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    again = invoke("build", SUPPORT, PLAIN, "--out", tmp_path)
    assert again.exit_code == 0, again.output
    assert emits == ["support-bot", "cli-plain"]  # not emitted again
    assert again.output.splitlines() == [
        f"{tmp_path / 'support-bot'}: 0 written, 2 unchanged",
        f"{tmp_path / 'cli-plain'}: 0 written, 2 unchanged",
    ]
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == before


def test_the_cache_lives_outside_the_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("build", SUPPORT, "--out", out).exit_code == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "support-bot",
        "support-bot/README.md",
        "support-bot/agent.py",
    ]
    assert len(entries(cache_root())) == 1


@pytest.mark.parametrize("damage", ["edit", "delete", "stale"])
def test_a_damaged_bundle_is_rebuilt(tmp_path: Path, emits: list[str], damage: str) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    bundle = tmp_path / "support-bot"
    expected = {p.name: p.read_bytes() for p in bundle.iterdir()}
    agent = bundle / "agent.py"
    if damage == "edit":
        agent.write_text(agent.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    elif damage == "delete":
        agent.unlink()
    else:  # a generated file the bundle no longer has
        (bundle / "old.py").write_bytes(agent.read_bytes())
    result = invoke("build", SUPPORT, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert emits == ["support-bot", "support-bot"]
    assert {p.name: p.read_bytes() for p in bundle.iterdir()} == expected


def test_check_and_diff_report_drift_with_a_warm_cache(tmp_path: Path) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    clean = invoke("build", SUPPORT, "--out", tmp_path, "--check")
    assert (clean.exit_code, clean.output) == (0, f"ok {tmp_path / 'support-bot'}\n")
    agent = tmp_path / "support-bot" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    drifted = invoke("build", SUPPORT, "--out", tmp_path, "--check")
    assert drifted.exit_code == 1
    assert drifted.output == f"drift {tmp_path / 'support-bot'}: agent.py (changed)\n"
    shown = invoke("build", SUPPORT, "--out", tmp_path, "--diff")
    assert shown.exit_code == 0
    assert "-# edited\n" in shown.output
    missing = invoke("build", SUPPORT, "--out", tmp_path / "elsewhere", "--check")
    assert missing.exit_code == 1
    assert "agent.py (missing)" in missing.output


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda text: "",
        lambda text: "{not json",
        lambda text: text[: len(text) // 2],
        # valid JSON, but the seal no longer matches what it seals
        lambda text: text.replace("support-bot", "support-box"),
        # resealed by someone, but naming another folder than the one built
        lambda text: _resealed(text, name="../support-bot"),
    ],
    ids=["empty", "garbage", "truncated", "edited", "resealed-escape"],
)
def test_a_corrupt_entry_is_ignored_and_replaced(
    tmp_path: Path, emits: list[str], corrupt: object
) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    [entry] = entries(cache_root())
    entry.write_text(corrupt(entry.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    result = invoke("build", SUPPORT, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert emits == ["support-bot", "support-bot"]
    assert cache.BuildCache(cache_root()).lookup(entry.stem) is not None  # rewritten


def _resealed(text: str, *, name: str) -> str:
    document = json.loads(text)
    document["entry"]["name"] = name
    document["seal"] = cache._seal(document["entry"])
    return json.dumps(document)


def test_no_cache_compiles_and_records_nothing(tmp_path: Path, emits: list[str]) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path, "--no-cache").exit_code == 0
    assert entries(cache_root()) == []
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    assert invoke("build", SUPPORT, "--out", tmp_path, "--no-cache").exit_code == 0
    assert emits == ["support-bot", "support-bot", "support-bot"]


def test_an_edited_spec_is_compiled_again(tmp_path: Path, emits: list[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SUPPORT.read_text(encoding="utf-8"), encoding="utf-8")
    assert invoke("build", spec, "--out", tmp_path / "out").exit_code == 0
    spec.write_text(spec.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert invoke("build", spec, "--out", tmp_path / "out").exit_code == 0
    assert emits == ["support-bot", "support-bot"]


def test_the_key_covers_the_spec_its_path_and_the_compiler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = cache.entry_key(b"name: a\n", "a.yaml")
    assert cache.entry_key(b"name: a\n", "a.yaml") == key
    assert cache.entry_key(b"name: b\n", "a.yaml") != key
    assert cache.entry_key(b"name: a\n", "b.yaml") != key
    monkeypatch.setattr(cache, "compiler_fingerprint", lambda: "another compiler")
    assert cache.entry_key(b"name: a\n", "a.yaml") != key


def test_the_compiler_fingerprint_hashes_the_code_and_templates() -> None:
    names = [rel for rel, _ in cache._code_files()]
    assert "emitters/pipeline.py" in names
    assert "ir/load.py" in names
    assert "templates/cli/agent.py.j2" in names
    assert "runtime/core/fragment.py" in names
    assert any("black-" in name for name in cache._installed_distributions())


def test_an_unusable_cache_never_fails_a_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker / "cache"))
    for _ in range(2):
        result = invoke("build", SUPPORT, "--out", tmp_path / "out")
        assert result.exit_code == 0, result.output

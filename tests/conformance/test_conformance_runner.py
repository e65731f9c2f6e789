"""The packaged suite's own runner: ``python -m specwire.runtime.facts.conformance``.

It runs without pytest, fails a provider that breaks a rule (naming the case and the line),
answers bad arguments in one line with status 2, runs against a live memory service with
``--url``, and every entry of Crewship's catalogue and Remem's themes has a case."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance_harness import TENANTS, LocalStoresForTest, ManualClock, ThreadedServer

from specwire.runtime.facts.conformance.__main__ import main
from specwire.runtime.facts.conformance.case import CATALOGUES
from specwire.runtime.facts.conformance.suite import all_cases, coverage
from specwire.runtime.hosts.http.memory_server import memory_app

LOCAL = "specwire.runtime.facts.conformance.target:local"
ROOT = Path(__file__).resolve().parents[2]


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def test_every_catalogue_entry_has_a_case_and_case_ids_are_unique() -> None:
    covered = coverage()
    assert set(covered) == {f"{c}:{e}" for c, entries in CATALOGUES.items() for e in entries}
    assert [entry for entry, cases in covered.items() if not cases] == []
    ids = [case_id for case_id, _ in all_cases()]
    assert len(ids) == len(set(ids))
    names = [case_id.split("/", 1)[1] for case_id in ids]
    assert len(names) == len(set(names)), "pytest test names are the case names"


def test_the_suite_runs_without_pytest(tmp_path: Path) -> None:
    """In a process where pytest cannot be imported, on the file backend."""
    code = (
        "import runpy, sys; sys.modules['pytest'] = None; "
        "sys.argv = ['conformance', '--provider', sys.argv[1], '-k', 'themes/ids_are_unique', "
        "'-k', 'provider/edge_empty_recall']; "
        "runpy.run_module('specwire.runtime.facts.conformance', run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, LOCAL],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / ".typing")},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"specwire conformance: 2 cases against {LOCAL}"
    assert lines[1:] == [
        "ok    provider/edge_empty_recall",
        "ok    themes/ids_are_unique_and_never_reused",
        "2 cases: 2 passed, 0 skipped, 0 failed, 0 errors",
    ]


def test_a_passing_part_exits_0_and_lists_its_skips(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = run_main(capsys, "--provider", LOCAL, "--part", "themes")
    assert status == 0 and err == ""
    assert lines[-1].startswith("16 cases: ") and lines[-1].endswith(" 0 failed, 0 errors")
    assert (
        "skip  themes/the_catalog_stays_within_its_limit: the local backend does not declare "
        "`catalog`" in lines
    )


@pytest.mark.parametrize(
    ("factory", "case_id"),
    [
        ("ignores_deadline", "themes/a_recall_past_its_deadline_or_cancelled_gives_up"),
        ("ignores_token_budget", "themes/a_recall_stays_within_its_token_budget"),
        ("sees_every_scope", "scopes/recall_returns_only_the_visible_scope_keys"),
        ("leaky_health", "themes/health_and_errors_carry_no_content_or_credentials"),
    ],
)
def test_a_provider_breaking_a_rule_fails_that_case(
    capsys: pytest.CaptureFixture[str], factory: str, case_id: str
) -> None:
    status, lines, _ = run_main(capsys, "--provider", f"broken_targets:{factory}", "-k", case_id)
    assert status == 1
    assert lines[1].startswith(f"FAIL  {case_id}: "), lines
    assert lines[-1] == "1 cases: 0 passed, 0 skipped, 1 failed, 0 errors"
    # The same case passes on the file backend itself.
    assert run_main(capsys, "--provider", LOCAL, "-k", case_id)[0] == 0


def test_verbose_prints_the_traceback_of_a_failure(capsys: pytest.CaptureFixture[str]) -> None:
    case_id = "themes/a_recall_stays_within_its_token_budget"
    status, lines, _ = run_main(
        capsys, "--provider", "broken_targets:ignores_token_budget", "-k", case_id, "-v"
    )
    assert status == 1
    assert "Traceback (most recent call last):" in lines


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "say what to test: --provider MODULE:FACTORY or --url URL"),
        (["--provider", "nocolon"], "--provider must be MODULE:FACTORY (got 'nocolon')"),
        (["--provider", "no_such_module_x:f"], "--provider: cannot import no_such_module_x"),
        (["--provider", "conformance_harness:TENANTS"], "is not a callable"),
        (["--url", "http://127.0.0.1:9"], "--url needs --token-env NAME"),
        (
            ["--url", "http://127.0.0.1:9", "--token-env", "SPECWIRE_CONFORMANCE_UNSET"],
            "the variable SPECWIRE_CONFORMANCE_UNSET is unset or empty",
        ),
        (["--provider", LOCAL, "-k", "no-such-case"], "no case matches"),
    ],
)
def test_usage_errors_are_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, lines, err = run_main(capsys, *argv)
    assert status == 2 and lines == []
    assert err.count("\n") == 1 and err.startswith("conformance: ") and message in err


def test_python_dash_o_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-O", "-m", "specwire.runtime.facts.conformance", "--provider", LOCAL],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / ".typing")},
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "conformance: the cases state their expectations with assert: run without -O\n"
    )


def test_list_and_coverage_are_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    first = run_main(capsys, "--list")
    assert first[0] == 0 and first[1] == run_main(capsys, "--list")[1]
    assert first[1][0] == "provider/retain_then_recall_returns_the_fact  remem:stable_provenance"
    status, lines, _ = run_main(capsys, "--coverage")
    assert status == 0 and not any("NOT COVERED" in line for line in lines)


@pytest.fixture
def memory_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The reference memory server on 127.0.0.1, its tenants' tokens in two variables."""
    stores = LocalStoresForTest(tmp_path, ManualClock(), like_the_server=True)
    tokens = {tenant: secrets.token_urlsafe(24) for tenant in TENANTS}
    server = ThreadedServer(memory_app(stores, {token: t for t, token in tokens.items()}))
    monkeypatch.setenv("CONFORMANCE_TOKEN_A", tokens[TENANTS[0]])
    monkeypatch.setenv("CONFORMANCE_TOKEN_B", tokens[TENANTS[1]])
    try:
        yield server.url
    finally:
        server.stop()
        stores.close()


ENDPOINT_CASES = (
    "provider/retain_then_recall_returns_the_fact",
    "provider/tenants_never_see_each_other",
    "provider/edge_degraded_health",
    "provider/edge_scope_violation_is_an_error_never_a_write_elsewhere",
    "themes/health_and_errors_carry_no_content_or_credentials",
)


def test_a_running_service_passes_with_url(
    capsys: pytest.CaptureFixture[str], memory_service: str
) -> None:
    selection = [arg for case_id in ENDPOINT_CASES for arg in ("-k", case_id)]
    argv = ["--url", memory_service, "--token-env", "CONFORMANCE_TOKEN_A", *selection]
    status, lines, _ = run_main(capsys, *argv, "--other-token-env", "CONFORMANCE_TOKEN_B")
    assert status == 0, lines
    assert lines[1:] == [
        "ok    provider/retain_then_recall_returns_the_fact",
        "ok    provider/tenants_never_see_each_other",
        "skip  provider/edge_degraded_health: a running service cannot be broken or stalled "
        "from the suite",
        "ok    provider/edge_scope_violation_is_an_error_never_a_write_elsewhere",
        "ok    themes/health_and_errors_carry_no_content_or_credentials",
        "5 cases: 4 passed, 1 skipped, 0 failed, 0 errors",
    ]
    # Without a second tenant's token, the isolation case says what it needs.
    status, lines, _ = run_main(capsys, *argv)
    assert status == 0
    assert (
        "skip  provider/tenants_never_see_each_other: a second tenant needs its token: "
        "--other-token-env NAME" in lines
    )

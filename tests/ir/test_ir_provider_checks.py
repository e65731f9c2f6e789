"""``memory.providers``: the located cross-field checks (one row each) and what a good list
lowers to."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.runtime.core.fragment import MAX_PROVIDERS

AGENT = "name: s\ntarget: cli\nagent: {model: claude-sonnet-4-5, instructions: i}\n"  # 1-3
CLI = AGENT + "memory:\n  providers:\n"  # 1-5
MAIN = "    - {name: main, backend: file}\n"  # line 6
NOTES = "    - {name: notes, backend: markdown, path: notes}\n"

BAD: list[tuple[str, str, list[str]]] = [
    (
        "beside-a-memory-level-backend",
        AGENT + "memory:\n  backend: file\n  providers:\n    - {name: main, backend: file}\n",
        [
            "5:3: memory.backend: `backend` sets the one memory backend, but `providers` lists "
            "them: move it to the first provider (the primary) or remove `providers`"
        ],
    ),
    (
        "markdown-primary",
        CLI + NOTES,
        [
            "6:30: memory.providers[0].backend: the first provider is the primary: it takes "
            "every write, and a markdown provider is read-only; list it after the primary"
        ],
    ),
    (
        "duplicate-names",
        CLI + MAIN + "    - {name: main, backend: markdown, path: notes}\n",
        ['7:14: memory.providers[1].name: duplicate provider "main"'],
    ),
    (
        "http-needs-url-and-token",
        CLI + MAIN + "    - {name: team, backend: http}\n",
        [
            "7:29: memory.providers[1].backend: the http provider needs `url: $MEMORY_URL`, "
            "`token: $MEMORY_TOKEN`"
        ],
    ),
    (
        "an-opencomputer-endpoint-is-never-routed",
        CLI
        + MAIN
        + "    - {name: oc, backend: http, url: $U, token: $T, protocol: opencomputer}\n",
        [
            "7:63: memory.providers[1].protocol: an OpenComputer endpoint is not routed beside "
            "other providers: use it as the only memory (`backend: http`, `protocol: "
            "opencomputer` without `providers`)"
        ],
    ),
    (
        "dream-with-an-http-primary",
        CLI + "    - {name: main, backend: http, url: $U, token: $T}\n  dream: {every: 1d}\n",
        [
            "7:3: memory.dream: the dream engine consolidates the embedded fact store or "
            "PostgreSQL, and the http backend keeps facts elsewhere: remove `dream` or use "
            "`backend: file` or `postgres`"
        ],
    ),
    (
        "postgres-needs-dsn",
        CLI + MAIN + "    - {name: pg, backend: postgres}\n",
        ["7:27: memory.providers[1].backend: the postgres provider needs `dsn: $DATABASE_URL`"],
    ),
    (
        "markdown-needs-path",
        CLI + MAIN + "    - {name: notes, backend: markdown}\n",
        ["7:30: memory.providers[1].backend: the markdown provider needs `path: notes`"],
    ),
    (
        "a-second-file-store-needs-its-file",
        CLI + MAIN + "    - {name: old, backend: file}\n",
        ["7:28: memory.providers[1].backend: the file provider needs `path: shared/facts.sqlite3`"],
    ),
    (
        "a-key-of-another-backend",
        CLI + MAIN + "    - {name: notes, backend: markdown, path: notes, dsn: $DB}\n",
        [
            "7:53: memory.providers[1].dsn: `dsn` is a setting of the postgres backend, but "
            'this provider\'s backend is "markdown"'
        ],
    ),
    (
        "path-outside-the-agent-folder",
        CLI + MAIN + "    - {name: notes, backend: markdown, path: ../shared}\n",
        [
            "7:46: memory.providers[1].path: must be a folder inside the agent's folder, "
            'relative to it (got "../shared")'
        ],
    ),
    (
        "absolute-path",
        CLI + MAIN + "    - {name: notes, backend: markdown, path: /srv/notes}\n",
        [
            "7:46: memory.providers[1].path: must be a folder inside the agent's folder, "
            'relative to it (got "/srv/notes")'
        ],
    ),
    (
        "primary-deadline",
        CLI + "    - {name: main, backend: file, deadline: 1s}\n",
        [
            "6:35: memory.providers[0].deadline: `deadline` is not a setting of the primary: "
            "its failure blocks the turn, it has no router deadline"
        ],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _, t, e in BAD], ids=[n for n, _, _ in BAD]
)
def test_bad_provider_lists_are_located(text: str, expected: list[str]) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert [str(issue) for issue in caught.value.issues] == [f"spec.yaml:{e}" for e in expected]


def test_too_many_providers() -> None:
    rows = "".join(
        f"    - {{name: p{i}, backend: markdown, path: n{i}}}\n" for i in range(MAX_PROVIDERS)
    )
    with pytest.raises(SpecError, match=f"at most {MAX_PROVIDERS} providers"):
        load_spec_text(CLI + MAIN + rows, "spec.yaml")


def test_a_good_list_lowers_the_primary_into_the_backend_and_the_rest_into_providers() -> None:
    from specwire.ir.lowering import lower

    text = CLI + "    - {name: main, backend: postgres, dsn: $DATABASE_URL}\n" + NOTES
    fragment = lower(load_spec_text(text, "spec.yaml"))
    memory = fragment.memory
    assert memory is not None
    assert (memory.backend, memory.dsn) == ("postgres", "$DATABASE_URL")
    [notes] = memory.providers or ()
    assert (notes.name, notes.backend, notes.path) == ("notes", "markdown", "notes")

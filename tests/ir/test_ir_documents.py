"""``memory.documents``: the cross-field checks (located, one line each) and what a good spec
lowers to."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text

HEAD = "name: s\ntarget: cli\nagent: {model: claude-sonnet-4-5, instructions: i}\n"  # lines 1-3


def issues(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    return [f"{i.line}:{i.col}: {i.key}: {i.message}" for i in caught.value.issues]


BAD: list[tuple[str, str, list[str]]] = [
    (
        "on-the-memory-service",
        "memory:\n  backend: http\n  url: $U\n  token: $T\n"
        "  documents:\n    notes: {scope: document, id: plan}\n",
        [
            "8:3: memory.documents: document memory lives on the file or postgres backend, and "
            'this spec\'s is "http": remove `documents` or change the backend'
        ],
    ),
    (
        "with-the-tiers",
        "memory:\n  tiers: true\n  documents:\n    notes: {scope: collection}\n",
        [
            "6:3: memory.documents: `documents` and the memory tiers cannot be combined: both "
            "give the model a `memory_read` tool; remove `documents`, or the tiers (`tiers`, "
            "and Crewship's memory tools in `tools`)"
        ],
    ),
    (
        "with-a-listed-tier-tool",
        "tools: [memory.read]\nmemory:\n  documents:\n    notes: {scope: collection}\n",
        [
            "6:3: memory.documents: `documents` and the memory tiers cannot be combined: both "
            "give the model a `memory_read` tool; remove `documents`, or the tiers (`tiers`, "
            "and Crewship's memory tools in `tools`)"
        ],
    ),
    (
        "a-document-without-id",
        "memory:\n  documents:\n    notes: {scope: document, access: read-write}\n",
        [
            "6:5: memory.documents.notes: a document binding names its document: add `id` (a "
            "collection binding, `scope: collection`, reads every document)"
        ],
    ),
    (
        "a-collection-with-id",
        "memory:\n  documents:\n    all: {scope: collection, id: plan}\n",
        [
            "6:30: memory.documents.all.id: a collection binding reads every document and "
            "takes no `id`: remove it, or use `scope: document`"
        ],
    ),
    (
        "a-writable-collection",
        "memory:\n  documents:\n    all: {scope: collection, access: read-write}\n",
        [
            "6:38: memory.documents.all.access: a collection is read-only (the model reads it "
            "with memory_read and memory_list): bind the document itself (`scope: document`, "
            "`id`) to let the model save it"
        ],
    ),
    (
        "nine-bindings",
        "memory:\n  documents:\n"
        + "".join(f"    d{n}: {{scope: document, id: doc-{n}}}\n" for n in range(9)),
        ["5:3: memory.documents: at most 8 document bindings, and there are 9"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [row[1:] for row in BAD], ids=[r[0] for r in BAD])
def test_a_bad_binding_is_a_located_error(text: str, expected: list[str]) -> None:
    assert issues(HEAD + text) == expected


def test_the_primary_of_memory_providers_decides_the_backend() -> None:
    text = (
        "memory:\n  providers:\n    - {name: main, backend: http, url: $U, token: $T}\n"
        "  documents:\n    notes: {scope: collection}\n"
    )
    found = issues(HEAD + text)
    assert any("document memory lives on the file or postgres backend" in line for line in found)


def test_good_bindings_lower_sorted_by_name_with_their_access() -> None:
    text = (
        "memory:\n  backend: postgres\n  dsn: $DATABASE_URL\n  documents:\n"
        "    plan: {scope: document, id: workshop, access: read-write}\n"
        "    all: {scope: collection}\n"
    )
    spec = load_spec_text(HEAD + text, "spec.yaml")
    assert spec.memory is not None and spec.memory.documents is not None
    assert [(b.name, b.scope, b.id, b.access) for b in spec.memory.documents] == [
        ("all", "collection", None, None),
        ("plan", "document", "workshop", "read-write"),
    ]

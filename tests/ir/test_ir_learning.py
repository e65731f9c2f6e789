"""``learning``: lowered as CrewHaus lowers it (the wiki's sources rule stamped, the study toggles
resolved, version 6), and a spec that does not learn keeps its fragment."""

from __future__ import annotations

from specwire.ir import load_spec_text, lower

HEAD = "name: s\ntarget: cli\nagent: {model: scripted, instructions: i}\n"
WIKI = "memory:\n  embedder: mock/deterministic\n  wiki: {recallK: 4}\n"


def test_learning_stamps_required_sources_and_resolves_the_study_toggles() -> None:
    spec = (
        HEAD
        + WIKI
        + "learning:\n  domain: Acme billing\n  curriculum: invoices first\n"
        + "  sources: [docs/a.md, 'https://docs.example/b']\n"
        + "  exam: {dataset: exam.jsonl, graders: [covers, contains]}\n"
        + "  study: {on_heartbeat: true}\n"
    )
    data = lower(load_spec_text(spec, "s.yaml")).to_data()
    assert data["version"] == 6
    assert data["memory"] == {
        "embedder": "mock/deterministic",
        "wiki": {"recall_k": 4, "require_sources": True},
    }
    assert data["learning"] == {
        "domain": "Acme billing",
        "curriculum": "invoices first",
        "sources": ["docs/a.md", "https://docs.example/b"],
        "exam": {"dataset": "exam.jsonl", "graders": ["covers", "contains"]},
        "study_on_dream": True,
    }


def test_on_dream_false_is_carried() -> None:
    spec = HEAD + WIKI + "learning: {domain: d, study: {on_dream: false}}\n"
    assert lower(load_spec_text(spec, "s.yaml")).to_data()["learning"] == {
        "domain": "d",
        "sources": [],
        "study_on_dream": False,
    }


def test_learning_switched_off_is_the_spec_without_it() -> None:
    without = lower(load_spec_text(HEAD + WIKI, "s.yaml")).to_json()
    off = HEAD + WIKI + "learning: {enabled: false, domain: d}\n"
    assert lower(load_spec_text(off, "s.yaml")).to_json() == without
    assert '"version":3' in without and "require_sources" not in without


def test_on_heartbeat_is_carried_where_a_host_ticks_and_dropped_elsewhere() -> None:
    learning = "learning: {domain: d, study: {on_heartbeat: true}}\n"
    for target, extra in (
        ("channel", "channels: {webhook: {token: $T}}\nrouting: {sessionKey: thread}\n"),
        ("managed", "tenants: [{id: acme}]\n"),
    ):
        head = HEAD.replace("target: cli", f"target: {target}") + extra
        data = lower(load_spec_text(head + WIKI + learning, "s.yaml")).to_data()
        assert data["learning"]["study_on_heartbeat"] is True
        assert data["version"] == 7  # a version-6 runtime has no heartbeat
    # cli (and research, crew): no host ticks; unset or false: no key, the spec's bytes.
    assert (
        "study_on_heartbeat"
        not in lower(load_spec_text(HEAD + WIKI + learning, "s.yaml")).to_json()
    )
    # (tenant-wide continuity: per-person continuity, managed's auto, is version 7 too)
    off = (
        HEAD.replace("target: cli", "target: managed")
        + "tenants: [{id: acme}]\ncontinuity: {scope: spec}\n"
        + WIKI
    )
    for study in ("", "  study: {on_heartbeat: false}\n"):
        text = off + "learning:\n  domain: d\n" + study
        fragment = lower(load_spec_text(text, "s.yaml"))
        assert "study_on_heartbeat" not in fragment.to_json() and fragment.version == 6

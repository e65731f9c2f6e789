"""Redaction hides the secrets of the environment and the registered references as they are
now, whatever they were at the last redaction (its pattern is reused only while both are
unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.runtime.safety.redaction import forget_registered_secrets, redact, register_secret

NAME = "SPECWIRE_TEST_API_KEY"
FIRST = "first-secret-value-1234"
SECOND = "second-secret-value-5678"


def test_a_variable_set_after_a_redaction_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NAME, raising=False)
    assert redact(f"key {FIRST}") == f"key {FIRST}"
    monkeypatch.setenv(NAME, FIRST)
    assert redact(f"key {FIRST}") == f"key ${NAME}"


def test_a_changed_value_is_hidden_and_the_old_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(NAME, FIRST)
    assert redact(f"{FIRST} {SECOND}") == f"${NAME} {SECOND}"
    monkeypatch.setenv(NAME, SECOND)
    assert redact(f"{FIRST} {SECOND}") == f"{FIRST} ${NAME}"


def test_a_removed_variable_is_no_longer_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, FIRST)
    assert redact(FIRST) == f"${NAME}"
    monkeypatch.delenv(NAME)
    assert redact(FIRST) == FIRST


def test_a_url_password_set_after_a_redaction_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://app:s3cret-pass@db.example/app"
    monkeypatch.setenv("SPECWIRE_TEST_DATABASE_URL", "postgresql://app@db.example/app")
    assert redact("pass s3cret-pass") == "pass s3cret-pass"
    monkeypatch.setenv("SPECWIRE_TEST_DATABASE_URL", url)
    assert redact("pass s3cret-pass") == "pass $SPECWIRE_TEST_DATABASE_URL"


def test_an_explicit_environment_is_read_as_it_is_now() -> None:
    environ = {NAME: FIRST}
    assert redact(FIRST, environ) == f"${NAME}"
    environ[NAME] = SECOND
    assert redact(f"{FIRST} {SECOND}", environ) == f"{FIRST} ${NAME}"
    assert redact(FIRST) == FIRST  # os.environ's secrets are not the explicit mapping's


def test_a_secret_registered_after_a_redaction_is_hidden_until_forgotten() -> None:
    value = "registered-secret-value-90"
    assert redact(f"uses {value}") == f"uses {value}"
    register_secret("TEST_REFERENCE", value)
    assert redact(f"uses {value}") == "uses $TEST_REFERENCE"
    forget_registered_secrets()
    assert redact(f"uses {value}") == f"uses {value}"


def test_a_fact_is_stored_with_its_text_and_tags_redacted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from specwire.runtime.facts.model import NewFactItem
    from specwire.runtime.facts.store import FactStore

    monkeypatch.setenv(NAME, FIRST)
    with FactStore.open(tmp_path / "facts.db") as store:
        one = store.remember(f"the key is {FIRST}", [f"k-{FIRST}", "plain"])
        many = store.retain_many([NewFactItem(f"again {FIRST}", [FIRST])])
        keyed = store.write_keyed("pref/key-note", f"note {FIRST}")
        monkeypatch.setenv(NAME, SECOND)
        later = store.remember(f"{FIRST} then {SECOND}", [SECOND])
        stored = [store.get(fact.id) for fact in (one, *many, keyed.fact, later)]
    assert [(s.fact.text, s.fact.tags) for s in stored if s is not None] == [
        (f"the key is ${NAME}", (f"k-${NAME}", "plain")),
        (f"again ${NAME}", (f"${NAME}",)),
        (f"note ${NAME}", ()),
        (f"{FIRST} then ${NAME}", (f"${NAME}",)),
    ]

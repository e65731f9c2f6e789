"""Literal credentials are refused; ordinary text that merely resembles one is not."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.credentials import env_name

CHANNEL = (
    "name: s\ntarget: channel\nagent: {model: scripted, instructions: i}\n"
    "routing: {sessionKey: thread}\n"
)


@pytest.mark.parametrize(
    "settings",
    [
        "tokenizer: cl100k",
        "maxTokens: 4096",
        "tokenBudget: 500",
        "passwordResetUrl: https://acme.example/reset",
        "keyboard: dvorak",
        "greeting: hi $USER",
        "botToken: $SLACK_BOT_TOKEN",
        "signingSecret: ''",
        "awsRegion: eu-west-1",
        "secretsManager: true",
    ],
)
def test_settings_that_hold_no_literal_secret_load(settings: str) -> None:
    load_spec_text(CHANNEL + f"channels:\n  slack: {{{settings}}}\n", "spec.yaml")


@pytest.mark.parametrize(
    "instructions",
    [
        "Prefer sk-learn-compatible-estimators-everywhere.",
        "Slack bot tokens start with xoxb- and must never be pasted here.",
        "Keys look like AKIA followed by 16 characters.",
        "Never print -----BEGIN CERTIFICATE----- blocks.",
        "Tickets are named ghp_something.",
        "Call the task-runner-for-nightly-builds-and-reports tool.",
    ],
)
def test_instructions_that_only_talk_about_credentials_load(instructions: str) -> None:
    text = f"name: s\ntarget: cli\nagent: {{model: scripted, instructions: '{instructions}'}}\n"
    load_spec_text(text, "spec.yaml")


def test_a_credential_is_never_repeated_in_any_message() -> None:
    token = "xox" + "b-2048-1048576-" + "fakeFAKEfake0123"
    text = (
        "name: s\ntarget: managed\nagent: {model: scripted, instructions: i}\n"
        f"tenants: [{{id: {token}}}, {{id: {token}}}]\n"
    )
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert len(caught.value.issues) == 2
    assert token[:20] not in str(caught.value)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (("slack", "botToken"), "SLACK_BOT_TOKEN"),
        (("s3", "keyId"), "S3_KEY_ID"),
        (("teams", "client-api.key"), "TEAMS_CLIENT_API_KEY"),
        (("1st", "token"), "SECRET_1ST_TOKEN"),
    ],
)
def test_env_name_suggestions_are_upper_snake(parts: tuple[str, ...], expected: str) -> None:
    assert env_name(*parts) == expected

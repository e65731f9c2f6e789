"""A Slack answer shown while it is written (runtime.hosts.http.slack_stream), against a fake
Slack Web API on 127.0.0.1 through the real ``slack_sdk`` client: posted at its first words,
updated no faster than the interval, ending with exactly the reply; 429 Retry-After honoured."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator

import pytest
from inprocess_serving import ROOT

from specwire.runtime.hosts.http.slack_replies import MAX_TEXT, SlackPoster
from specwire.runtime.hosts.http.slack_stream import SlackReplyStream
from specwire.runtime.models.streaming import TextDelta, ToolDone, ToolRunning, TurnDone

sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from serving_support import FakeSlack, fake_slack  # noqa: E402


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with fake_slack() as fake:
        yield fake


@pytest.fixture
def poster(slack: FakeSlack, monkeypatch: pytest.MonkeyPatch) -> SlackPoster:
    monkeypatch.setenv("SPECWIRE_SLACK_API_URL", slack.url)
    return SlackPoster("xoxb-test-bot-token-000000000000")


def wait_until(check: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def new_posts(slack: FakeSlack, before: int) -> list[dict[str, object]]:
    return slack.posts[before:]


def test_the_first_words_are_posted_then_updated_and_the_reply_ends_it(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    before, calls_before = len(slack.posts), len(slack.calls)
    log: list[str] = []
    reply = SlackReplyStream(poster, "C1", "10.1", log=log.append, interval_s=0.2)
    reply.sink(TextDelta("Looking"))
    wait_until(lambda: len(slack.posts) > before)  # posted before the turn goes on
    reply.sink(ToolRunning("t1", "Recall"))
    reply.sink(ToolDone("t1", "Recall", is_error=False))
    reply.sink(TextDelta(" it up: the code is 4417."))
    reply.sink(TurnDone("Looking it up: the code is 4417."))
    reply.finish("Looking it up: the code is 4417.")
    [post] = new_posts(slack, before)
    assert post["channel"] == "C1" and post["thread_ts"] == "10.1"
    shown = [str(text) for text in post["shown"]]  # type: ignore[attr-defined]
    assert shown[0] == "Looking\n_writing…_"
    assert shown[-1] == post["text"] == "Looking it up: the code is 4417."
    assert all(text.endswith("…_") for text in shown[:-1])
    assert len(shown) >= 2 and log == []
    # Never two calls for one message closer together than the interval.
    times = [at for method, at, _ in slack.calls[calls_before:]]
    assert all(later - earlier >= 0.2 for earlier, later in zip(times, times[1:], strict=False))


def test_a_reply_that_shows_nothing_before_it_ends_is_one_post(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    before, calls_before = len(slack.posts), len(slack.calls)
    reply = SlackReplyStream(poster, "C1", "11.1", log=print, interval_s=0.2)
    reply.finish("Sorry, something went wrong.")
    [post] = new_posts(slack, before)
    assert post["shown"] == ["Sorry, something went wrong."]
    assert [method for method, _, _ in slack.calls[calls_before:]] == ["chat.postMessage"]


def test_a_rate_limited_update_waits_for_retry_after(slack: FakeSlack, poster: SlackPoster) -> None:
    before, calls_before = len(slack.posts), len(slack.calls)
    slack.rate_limit("chat.update", 1)
    reply = SlackReplyStream(poster, "C1", "12.1", log=print, interval_s=0.05)
    reply.sink(TextDelta("one"))
    wait_until(lambda: len(slack.posts) > before)
    reply.finish("one two")  # the final update is limited once, then goes through
    [post] = new_posts(slack, before)
    assert post["text"] == "one two"
    calls = slack.calls[calls_before:]
    assert [(method, status) for method, _, status in calls] == [
        ("chat.postMessage", 200),
        ("chat.update", 429),
        ("chat.update", 200),
    ]
    assert calls[2][1] - calls[1][1] >= 1.0  # the Retry-After Slack asked for


def test_a_long_reply_ends_as_its_first_part_and_the_rest_posted(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    before = len(slack.posts)
    long = "x" * (MAX_TEXT + 10)
    reply = SlackReplyStream(poster, "C1", "13.1", log=print, interval_s=0.05)
    reply.sink(TextDelta(long))
    wait_until(lambda: len(slack.posts) > before)
    reply.finish(long)
    posts = new_posts(slack, before)
    assert [post["text"] for post in posts] == [long[:MAX_TEXT], long[MAX_TEXT:]]
    interim = str(posts[0]["shown"][0])  # type: ignore[index]
    assert len(interim) <= MAX_TEXT and interim.endswith("…\n_writing…_")


def test_a_models_text_cannot_ping_the_channel_or_disguise_a_link(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    # Review finding H7-3: the model's text (which a prompt injection may write) went to Slack
    # as mrkdwn control sequences: `<!channel>` pinged everyone, even where the workspace allows
    # only admins to, and `<url|label>` showed a link under a label of the model's choice. Slack
    # asks for &, < and > to be escaped in text; a tool's name in the status line is text too.
    before = len(slack.posts)
    hostile = "<!channel> see <https://evil.example/login|the payroll portal> & a<b>c"
    reply = SlackReplyStream(poster, "C1", "14.1", log=print, interval_s=0.05)
    reply.sink(TextDelta(hostile))
    wait_until(lambda: len(slack.posts) > before)
    reply.sink(ToolRunning("t1", "<!here>"))
    reply.finish(hostile)
    [post] = new_posts(slack, before)
    escaped = (
        "&lt;!channel&gt; see &lt;https://evil.example/login|the payroll portal&gt; "
        "&amp; a&lt;b&gt;c"
    )
    assert post["text"] == escaped
    shown = [str(text) for text in post["shown"]]  # type: ignore[attr-defined]
    assert all("<" not in text and ">" not in text for text in shown)


def test_escaping_never_splits_an_entity_between_two_parts() -> None:
    from specwire.runtime.hosts.http.slack_replies import slack_text

    text = "a" * (MAX_TEXT - 2) + "<" + "b" * 10
    parts = slack_text(text)
    assert "".join(parts) == "a" * (MAX_TEXT - 2) + "&lt;" + "b" * 10
    assert all(len(part) <= MAX_TEXT for part in parts) and parts[1].startswith("&lt;")


def test_a_reply_that_ends_empty_leaves_no_status_line_behind(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    # Review finding H7-8: a model may end its turn with no text after its tools; the message
    # posted for the tool's progress then kept "_running Recall…_" forever. The reply ends as
    # the text shown before the tools, or, with none, the message is deleted (an unstreamed
    # empty reply posts nothing).
    before = len(slack.posts)
    reply = SlackReplyStream(poster, "C1", "15.1", log=print, interval_s=0.05)
    reply.sink(ToolRunning("t1", "Recall"))
    wait_until(lambda: len(slack.posts) > before)
    reply.sink(ToolDone("t1", "Recall", is_error=False))
    reply.finish("")
    [post] = new_posts(slack, before)
    assert post.get("deleted") is True

    before = len(slack.posts)
    reply = SlackReplyStream(poster, "C1", "15.2", log=print, interval_s=0.05)
    reply.sink(TextDelta("Let me check."))
    reply.sink(ToolRunning("t2", "Recall"))
    wait_until(lambda: len(slack.posts) > before)
    reply.finish("")
    [post] = new_posts(slack, before)
    assert post["text"] == "Let me check." and not post.get("deleted")


def test_a_post_whose_answer_is_lost_is_not_posted_twice(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    # Noted at the last review: the client retried chat.postMessage on a connection error, so a
    # post Slack had stored before the connection dropped appeared twice in the thread.
    before, calls_before = len(slack.posts), len(slack.calls)
    slack.drop("chat.postMessage", stored=True)
    ts = poster.post("C7", "70.1", "the answer, once")
    [post] = new_posts(slack, before)
    assert post["text"] == "the answer, once" and ts == post["ts"]
    methods = [method for method, _, _ in slack.calls[calls_before:]]
    assert methods.count("chat.postMessage") == 1 and "conversations.replies" in methods


def test_a_post_lost_before_slack_stored_it_is_sent_again(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    before, calls_before = len(slack.posts), len(slack.calls)
    slack.drop("chat.postMessage", stored=False)
    ts = poster.post("C8", "80.1", "sent again")
    [post] = new_posts(slack, before)
    assert post["text"] == "sent again" and ts == post["ts"]
    methods = [method for method, _, _ in slack.calls[calls_before:]]
    assert methods.count("chat.postMessage") == 2


def test_the_same_text_posted_again_on_purpose_is_not_taken_for_a_lost_post(
    slack: FakeSlack, poster: SlackPoster
) -> None:
    # Review R2: a second turn answering with the same words as the first (an "OK.", a
    # refusal) whose post was lost before Slack stored it found the first turn's message in
    # the thread, took it for its own and never posted: the reply was dropped.
    before, calls_before = len(slack.posts), len(slack.calls)
    first = poster.post("C9", "90.1", "Done.")
    slack.drop("chat.postMessage", stored=False)
    second = poster.post("C9", "90.1", "Done.")
    posts = new_posts(slack, before)
    assert [post["text"] for post in posts] == ["Done.", "Done."]
    assert [first, second] == [post["ts"] for post in posts]
    methods = [method for method, _, _ in slack.calls[calls_before:]]
    assert methods.count("chat.postMessage") == 3 and "conversations.replies" in methods

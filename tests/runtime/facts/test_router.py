"""The router over several providers: fan-out, fusion, dedup, scope re-checks, diagnostics,
deadlines, and the primary that still blocks. Real providers (the embedded store, a Markdown
vault, the HTTP client against a port nobody listens on); the providers of one's own below
are what a third party could plug in (slow, leaking, malformed)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.providers.errors import ProviderUnavailable
from specwire.runtime.facts.providers.http.client import HttpFactProvider
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    ForgetRequest,
    ForgetResult,
    Health,
    LocalFactProvider,
    ProviderHit,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.facts.routing.diagnostics import Diagnostics, describe_failure
from specwire.runtime.facts.routing.rerank import fuse
from specwire.runtime.facts.routing.router import FactRouter, RoutedProvider
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.text import fingerprint
from specwire.runtime.facts.vault.provider import MarkdownVaultProvider

DEPLOY_NOTE = "---\ntitle: Deploy runbook\n---\nWe deploy with Argo CD to the cluster.\n"
TOKEN = "tok-" + "s3cr3t" * 4


class _OwnProvider:
    """A provider of one's own: answers ``hits`` (after ``wait`` for its cancel, if set)."""

    def __init__(self, hits: tuple[object, ...] = (), *, wait: bool = False) -> None:
        self.hits = hits
        self.wait = wait
        self.cancelled = threading.Event()
        self.calls = 0

    def retain(self, request: RetainRequest) -> RetainResult:
        raise AssertionError("the router never writes to a provider beside the primary")

    def recall(self, request: RecallRequest) -> RecallResponse:
        self.calls += 1
        if self.wait:
            assert request.cancel is not None
            if request.cancel.wait(30):
                self.cancelled.set()
        return RecallResponse(self.hits)  # type: ignore[arg-type]

    def forget(self, request: ForgetRequest) -> ForgetResult:
        raise AssertionError("the router never forgets in a provider beside the primary")

    def health(self) -> Health:
        return Health(True, None, utc_now())

    def capabilities(self) -> Capabilities:
        return Capabilities(lexical=True)


def hit(id: str, text: str, **kw: object) -> ProviderHit:
    return ProviderHit(id, text, (), 0.5, False, **kw)  # type: ignore[arg-type]


@pytest.fixture
def primary(store: FactStore) -> RoutedProvider:
    store.remember("The staging cluster runs in eu-west-1.")
    store.remember("We deploy with Argo CD to the cluster.")
    return RoutedProvider("primary", "file", LocalFactProvider(store), 0.0)


@pytest.fixture
def vault(tmp_path: Path) -> RoutedProvider:
    notes = tmp_path / "agent" / "notes"
    notes.mkdir(parents=True)
    (notes / "deploy.md").write_text(DEPLOY_NOTE, encoding="utf-8")
    (notes / "oncall.md").write_text("The cluster on-call is Ana this week.\n", encoding="utf-8")
    provider = MarkdownVaultProvider(tmp_path / "agent", "notes", name="notes")
    return RoutedProvider("notes", "markdown", provider, 2.0)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unreachable() -> RoutedProvider:
    client = HttpFactProvider(
        f"http://127.0.0.1:{closed_port()}", TOKEN, "spec", timeout_s=1.0, max_retries=0
    )
    return RoutedProvider("team", "http", client, 2.0, client.close)


def recall(router: FactRouter, query: str, **kw: object) -> list[ProviderHit]:
    return list(router.recall(RecallRequest(query, **kw)).hits)  # type: ignore[arg-type]


def test_recall_reads_every_provider_and_says_where_each_hit_came_from(
    primary: RoutedProvider, vault: RoutedProvider
) -> None:
    router = FactRouter(primary, [vault])
    hits = recall(router, "cluster", limit=10)
    assert {(h.provider, h.text) for h in hits} >= {
        ("primary", "The staging cluster runs in eu-west-1."),
        ("notes", "The cluster on-call is Ana this week."),
    }
    assert all(h.fingerprint == fingerprint(h.text) for h in hits)
    assert all(0 <= h.score < 1 for h in hits)
    assert router.diagnostics.drain() == ()


def test_the_same_content_from_two_providers_is_one_result(store: FactStore) -> None:
    store.remember("Ana is on call this week.")
    twin = _OwnProvider((hit("x-1", "ana is ON CALL   this week."),))
    router = FactRouter(
        RoutedProvider("primary", "file", LocalFactProvider(store), 0.0),
        [RoutedProvider("twin", "http", twin, 2.0)],  # type: ignore[arg-type]
    )
    [only] = recall(router, "on call")
    assert only.provider == "primary" and "also in twin" in only.reasons


def test_a_failing_provider_is_one_sanitized_diagnostic_and_recall_goes_on(
    primary: RoutedProvider, vault: RoutedProvider, unreachable: RoutedProvider
) -> None:
    router = FactRouter(primary, [vault, unreachable])
    for _ in range(2):  # auto-recall, then a Recall tool call in the same turn
        providers = {h.provider for h in recall(router, "cluster deploy", limit=10)}
        assert providers == {"primary", "notes"}
    [diagnostic] = router.diagnostics.drain()
    assert diagnostic.payload() == {
        "provider": "team",
        "backend": "http",
        "problem": "it is unreachable or failing",
    }
    line = diagnostic.line()
    assert line.count("\n") == 1 and TOKEN not in line and "127.0.0.1" not in line
    assert router.diagnostics.drain() == ()  # drained: the next turn starts clean
    unreachable.release()


def test_a_late_provider_is_cancelled_and_left_behind(primary: RoutedProvider) -> None:
    slow = _OwnProvider((hit("late-1", "The staging cluster is also in us-east-1."),), wait=True)
    router = FactRouter(primary, [RoutedProvider("slow", "http", slow, 0.05)])  # type: ignore[arg-type]
    hits = recall(router, "staging cluster")
    assert [h.provider for h in hits] == ["primary", "primary"]
    assert slow.cancelled.wait(10)  # told to stop
    [diagnostic] = router.diagnostics.drain()
    assert diagnostic.problem == "did not answer within 50 ms"


def test_hits_outside_the_callers_scope_or_malformed_are_dropped(
    primary: RoutedProvider,
) -> None:
    leaky = _OwnProvider(
        (
            hit("u-1", "Bo's cluster password hint is blue.", scope=ScopeKey("user", "BO")),
            hit("t-1", "cluster pins", tier="pins", key="pins.md"),
            hit("", "cluster with no id"),
            hit("x" * 1025, "cluster with a huge id"),
            hit("blank", "   "),
            {"id": "d-1", "text": "a cluster dict, not a hit"},
            hit("ok-1", "The cluster upgrade is on Friday."),
        )
    )
    router = FactRouter(primary, [RoutedProvider("leaky", "http", leaky, 2.0)])  # type: ignore[arg-type]
    texts = [h.text for h in recall(router, "cluster", limit=10)]
    assert "The cluster upgrade is on Friday." in texts
    assert not any("Bo's" in t or "pins" in t or "dict" in t or " id" in t for t in texts)
    visible = (AGENT, ScopeKey("user", "BO"))
    assert any("Bo's" in h.text for h in recall(router, "cluster", limit=10, visible=visible))


def test_the_primary_failing_still_blocks(
    vault: RoutedProvider, unreachable: RoutedProvider
) -> None:
    router = FactRouter(RoutedProvider("primary", "http", unreachable.provider, 0.0), [vault])
    with pytest.raises(ProviderUnavailable):
        router.recall(RecallRequest("cluster"))
    unreachable.release()


def test_writes_and_tier_notes_go_to_the_primary_only(
    primary: RoutedProvider, vault: RoutedProvider, store: FactStore
) -> None:
    own = _OwnProvider((hit("o-1", "cluster"),))
    router = FactRouter(primary, [vault, RoutedProvider("own", "http", own, 2.0)])  # type: ignore[arg-type]
    written = router.retain(RetainRequest("The prod cluster runs in us-east-2."))
    assert store.read(fact_id=written.id, visible=(AGENT,))
    assert router.forget(ForgetRequest(id=written.id)).removed == 1
    assert router.recall(RecallRequest("cluster", tiers=("pins",))).hits == ()
    assert own.calls == 0  # tier recall never fanned out


def test_limit_and_token_budget_apply_after_fusion(
    primary: RoutedProvider, vault: RoutedProvider
) -> None:
    router = FactRouter(primary, [vault])
    assert len(recall(router, "cluster deploy", limit=2)) == 2
    hits = recall(router, "cluster deploy", limit=10, max_tokens=12)
    assert sum(len(h.text.encode()) for h in hits) <= 48


def test_names_must_be_unique(primary: RoutedProvider, vault: RoutedProvider) -> None:
    with pytest.raises(ValueError, match="unique"):
        FactRouter(primary, [RoutedProvider("primary", "markdown", vault.provider, 1.0)])


# -- fusion and diagnostics ---------------------------------------------------------------------


def test_rrf_interleaves_by_rank_and_adds_agreeing_votes() -> None:
    a = [hit("a1", "alpha", provider="p"), hit("a2", "shared", provider="p")]
    b = [hit("b1", "beta", provider="q"), hit("b2", "SHARED", provider="q")]
    fused = fuse([a, b])
    assert [h.text for h in fused] == ["shared", "alpha", "beta"]  # two votes beat one
    assert fused[0].reasons == ("also in q",)
    assert fuse([[hit("a1", "x", provider="p"), hit("a1", "x", provider="p")]])[0].id == "a1"


def test_diagnostics_never_carry_the_failures_message() -> None:
    leak = RuntimeError(f"postgresql://app:{TOKEN}@db/facts said: Ana's salary is 90k")
    assert describe_failure(leak) == "it failed (RuntimeError)"
    assert describe_failure(TimeoutError(), 250) == "did not answer within 250 ms"
    assert describe_failure(ConnectionRefusedError("secret")) == "it is unreachable"
    diagnostics = Diagnostics()
    assert diagnostics.drain() == ()

"""A managed bundle with ``memory.wiki``: each tenant's wiki lives under its own root, and
tenant B's ``wiki_search`` never returns tenant A's articles (served, openai client, scripted
model)."""

from __future__ import annotations

import json
from pathlib import Path

import openai
from serving_support import ROOT, build_bundle, clean_env, served

A_KEY = "sk-acme-0123456789abcdef0123"
B_KEY = "sk-globex-0123456789abcdef01"
SPEC = (
    (ROOT / "examples" / "managed-concierge.yaml")
    .read_text(encoding="utf-8")
    .replace("memory:\n", "memory:\n  wiki: {requireSources: false}\n")
)
ARTICLE = {
    "slug": "vault-code",
    "title": "Vault code",
    "body": "The acme vault code is 7531.",
    "justification": "the staff asked us to keep it",
}


def say(url: str, key: str, text: str) -> str:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)
    completion = client.chat.completions.create(
        model="managed-concierge", messages=[{"role": "user", "content": text}]
    )
    return completion.choices[0].message.content or ""


def test_tenant_b_never_finds_tenant_a_articles(tmp_path: Path) -> None:
    spec = tmp_path / "managed-concierge.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    env = clean_env(SPECWIRE_TENANT_KEY_TENANT_ACME=A_KEY, SPECWIRE_TENANT_KEY_TENANT_GLOBEX=B_KEY)
    with served(agent, tmp_path / "work", env) as server:
        wrote = say(server.url, A_KEY, f"call wiki_write {json.dumps(ARTICLE)}")
        assert wrote.startswith("Done: created vault-code v1"), wrote
        found = say(server.url, A_KEY, 'call wiki_search {"query": "vault code"}')
        assert found.startswith('Done: 1 article(s) for "vault code"'), found
        other = say(server.url, B_KEY, 'call wiki_search {"query": "vault code"}')
        assert other == 'Done: no wiki articles matched "vault code" (wiki size: 0)', other
        missing = say(server.url, B_KEY, 'call wiki_get {"slug": "vault-code"}')
        assert "7531" not in missing and missing.startswith("That failed: no article vault-code")
    assert "Traceback" not in server.stderr
    tenants = server.workdir / ".specwire" / "tenants"
    [article] = list(tenants.rglob("vault-code.md"))
    assert article.is_relative_to(tenants / "tenant-acme" / "wiki")

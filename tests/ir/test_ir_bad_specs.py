"""Every error path of the loader: exact message text and line:col, one table row each."""

from __future__ import annotations

from textwrap import dedent

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.limits import MAX_ENTRIES, MAX_NAME_LENGTH, MAX_SPEC_BYTES

AGENT = "agent: {model: scripted, instructions: i}\n"
CLI = "name: s\ntarget: cli\n" + AGENT  # lines 1-3; rows append from line 4
TARGET_NAMES = "cli, channel, managed, research, crew"
FIVE = f"expected one of {TARGET_NAMES}"
TOOLS = "expected one of bash, grep, ls, read, write"
# Fake credentials, assembled from parts so that no secret scanner flags this file.
SLACK_BOT = "xox" + "b-2048-1048576-" + "fakeFAKEfake0123"
SLACK_APP = "xap" + "p-1-A0FAKE-1234-" + "abcdef0123"
SLACK_HOOK = "https://hooks.slack.com/" + "services/T000FAKE/B000FAKE/" + "xxxxFAKExxxx"
ANTHROPIC = "sk-" + "ant-api03-" + "FAKEfake0123456789abcd"
OPENAI = "sk-" + "proj-" + "FAKEfake0123456789abcd"
GITHUB = "gh" + "p_" + "FAKEfake0123456789" * 2
GITHUB_PAT = "github" + "_pat_" + "11FAKE0123456789_abcdefghij"
AWS_KEY_ID = "AKIA" + "FAKE0123456789AB"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYFAKEKEY012"
PRIVATE_KEY = "-----BEGIN " + "PRIVATE KEY-----"
CHANNEL_HEAD = "name: s\ntarget: channel\n" + AGENT + "channels:\n"  # lines 1-4
ROUTING = "routing: {sessionKey: thread}\n"
ORIGIN = (
    "must be an origin: http:// or https://, a host and an optional port, nothing else "
    "(like https://example.org or http://127.0.0.1:8080)"
)
RESEARCH = (
    "name: s\ntarget: research\n" + AGENT + "goal: g\nbranchingFactor: 2\nmaxDurationMs: 1000\n"
)


CREW_ROLES = "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n"  # lines 1-5

# (id, spec text, expected issues as "line:col: key: message")
BAD_SPECS: list[tuple[str, str, list[str]]] = [
    # -- unknown keys, with and without a suggestion -------------------------------------
    (
        "unknown-top-level-key",
        CLI + "tols: [read]\n",
        ['4:1: tols: unknown key "tols" (did you mean "tools"?)'],
    ),
    (
        "unknown-key-no-suggestion",
        CLI + "zzzzqqq: 1\n",
        ['4:1: zzzzqqq: unknown key "zzzzqqq"'],
    ),
    (
        "unknown-memory-key",
        CLI + "memory:\n  recalK: 3\n",
        ['5:3: memory.recalK: unknown key "recalK" (did you mean "recallK"?)'],
    ),
    (
        "unknown-continuity-key",
        CLI + "continuity:\n  proff: ladder\n",
        ['5:3: continuity.proff: unknown key "proff" (did you mean "proof"?)'],
    ),
    (
        "unknown-wiki-key",
        CLI + "memory:\n  wiki:\n    enabled: false\n    requireSource: true\n",
        [
            '7:5: memory.wiki.requireSource: unknown key "requireSource" '
            '(did you mean "requireSources"?)'
        ],
    ),
    (
        "unknown-agent-key",
        "name: s\ntarget: cli\nagent:\n  model: scripted\n  instructions: i\n  modle: x\n",
        ['6:3: agent.modle: unknown key "modle" (did you mean "model"?)'],
    ),
    (
        "unknown-routing-key",
        "name: s\ntarget: channel\n" + AGENT + "channels: {slack: {a: b}}\n"
        "routing: {sessionKey: thread, sesionKey: user}\n",
        ['5:31: routing.sesionKey: unknown key "sesionKey" (did you mean "sessionKey"?)'],
    ),
    (
        "unknown-tenant-budget-key",
        "name: s\ntarget: managed\n" + AGENT + "tenants:\n  - id: acme\n    budget:\n"
        "      maxInputToken: 10\n",
        [
            '7:7: tenants[0].budget.maxInputToken: unknown key "maxInputToken" '
            '(did you mean "maxInputTokens"?)'
        ],
    ),
    (
        "unknown-role-key",
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n  a: {instruction: x}\n",
        [
            '6:7: roles.a.instruction: unknown key "instruction" (did you mean "instructions"?)',
        ],
    ),
    (
        "target-specific-key-on-other-target",
        CLI + "goal: find things\n",
        ['4:1: goal: unknown key "goal"'],
    ),
    (
        "agent-on-crew",
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles: {a: {instructions: x}}\n" + AGENT,
        [
            '6:1: agent: unknown key "agent": crew specs have no "agent": '
            'use top-level "model", "entry" and "roles"'
        ],
    ),
    (
        "misspelt-required-key-reports-once",
        "name: s\ntarget: cli\nagnet: {model: scripted, instructions: i}\n",
        ['3:1: agnet: unknown key "agnet" (did you mean "agent"?)'],
    ),
    # -- wrong types (strict: nothing is coerced) ----------------------------------------
    (
        "string-for-integer",
        CLI + "memory: {recallK: five}\n",
        ['4:19: memory.recallK: expected an integer (got "five")'],
    ),
    (
        "yes-is-not-a-bool",
        CLI + "memory:\n  autoCapture: yes\n",
        ['5:16: memory.autoCapture: expected true or false (got "yes")'],
    ),
    (
        "quoted-true-is-not-a-bool",
        CLI + "memory:\n  enabled: 'true'\n",
        ['5:12: memory.enabled: expected true or false (got "true")'],
    ),
    (
        "float-for-integer",
        CLI + "memory:\n  autoCaptureThreshold: 1.5\n",
        ["5:25: memory.autoCaptureThreshold: expected an integer (got 1.5)"],
    ),
    (
        "integer-for-string",
        "name: 42\ntarget: cli\n" + AGENT,
        ["1:7: name: expected a string (got 42)"],
    ),
    (
        "scalar-for-block",
        "name: s\ntarget: cli\nagent: gpt\n",
        ['3:8: agent: expected a mapping (got "gpt")'],
    ),
    (
        "key-without-value",
        CLI + "memory:\n  recallK:\n",
        ["5:3: memory.recallK: expected an integer (got null)"],
    ),
    (
        "required-block-without-value",
        "name: s\ntarget: cli\nagent:\n",
        ["3:1: agent: expected a mapping (got null)"],
    ),
    (
        "memory-false",
        CLI + "memory: false\n",
        [
            "4:9: memory: expected a mapping (got false): to switch memory off, "
            'set "enabled: false" in it'
        ],
    ),
    (
        "wiki-true",
        CLI + "memory:\n  wiki: true\n",
        [
            "5:9: memory.wiki: expected a mapping (got true): to switch wiki on with defaults, "
            'write "wiki: {}"'
        ],
    ),
    (
        "tools-not-a-list",
        CLI + "tools: read\n",
        ['4:8: tools: expected a list (got "read")'],
    ),
    (
        "continuity-wrong-type",
        CLI + "continuity: 5\n",
        ["4:13: continuity: expected true, false or a mapping (got 5)"],
    ),
    (
        "literal-value",
        CLI + "continuity:\n  proof: maybe\n",
        ['5:10: continuity.proof: expected one of ladder, require, off (got "maybe")'],
    ),
    (
        "non-string-key",
        CLI + "memory:\n  1: x\n",
        ["5:3: memory: keys must be strings (got 1)"],
    ),
    # -- ranges ---------------------------------------------------------------------------
    (
        "recallK-0",
        CLI + "memory:\n  recallK: 0\n",
        ["5:12: memory.recallK: must be between 1 and 50 (got 0)"],
    ),
    (
        "recallK-51",
        CLI + "memory:\n  recallK: 51\n",
        ["5:12: memory.recallK: must be between 1 and 50 (got 51)"],
    ),
    (
        "recallK-80-snake-case",
        CLI + "memory:\n  recall_k: 80\n",
        ["5:13: memory.recall_k: must be between 1 and 50 (got 80)"],
    ),
    (
        "wiki-recallK-0",
        CLI + "memory:\n  wiki: {recallK: 0}\n",
        ["5:19: memory.wiki.recallK: must be between 1 and 50 (got 0)"],
    ),
    (
        "wiki-recallK-51",
        CLI + "memory:\n  wiki:\n    recallK: 51\n",
        ["6:14: memory.wiki.recallK: must be between 1 and 50 (got 51)"],
    ),
    (
        "wiki-requireSources-string",
        CLI + "memory:\n  wiki:\n    requireSources: yes please\n",
        ['6:21: memory.wiki.requireSources: expected true or false (got "yes please")'],
    ),
    (
        "autoCaptureThreshold-0",
        CLI + "memory: {autoCaptureThreshold: 0}\n",
        ["4:32: memory.autoCaptureThreshold: must be greater than 0 (got 0)"],
    ),
    (
        "focusMaxChars-negative",
        CLI + "continuity: {focusMaxChars: -5}\n",
        ["4:29: continuity.focusMaxChars: must be greater than 0 (got -5)"],
    ),
    (
        "branchingFactor-17",
        "name: s\ntarget: research\n" + AGENT + "goal: g\nbranchingFactor: 17\n"
        "maxDurationMs: 1000\n",
        ["5:18: branchingFactor: must be between 1 and 16 (got 17)"],
    ),
    (
        "maxDurationMs-0",
        "name: s\ntarget: research\n" + AGENT + "goal: g\nbranchingFactor: 2\nmaxDurationMs: 0\n",
        ["6:16: maxDurationMs: must be between 1 and 604800000 (got 0)"],
    ),
    (
        "retrieve-origin-with-path",
        RESEARCH + "retrieve:\n  allowedOrigins: [https://example.org/docs]\n",
        ["8:20: retrieve.allowedOrigins[0]: " + ORIGIN + ' (got "https://example.org/docs")'],
    ),
    (
        "retrieve-origin-not-http",
        RESEARCH + "retrieve:\n  allowedOrigins: [ftp://example.org]\n",
        ["8:20: retrieve.allowedOrigins[0]: " + ORIGIN + ' (got "ftp://example.org")'],
    ),
    (
        "retrieve-origins-not-a-list",
        RESEARCH + "retrieve:\n  allowedOrigins: https://example.org\n",
        ['8:19: retrieve.allowedOrigins: expected a list (got "https://example.org")'],
    ),
    (
        "retrieve-origin-credentials",
        RESEARCH + "retrieve:\n  allowedOrigins: ['https://u:p@example.org']\n",
        ["8:20: retrieve.allowedOrigins[0]: " + ORIGIN + ' (got "https://u:p@example.org")'],
    ),
    (
        "maxDurationMs-huge",
        "name: s\ntarget: research\n" + AGENT + "goal: g\nbranchingFactor: 2\n"
        "maxDurationMs: " + "9" * 400 + "\n",
        ["6:16: maxDurationMs: must be between 1 and 604800000 (got " + "9" * 400 + ")"],
    ),
    (
        "version-negative",
        "name: s\nversion: -1\ntarget: cli\n" + AGENT,
        ["2:10: version: must be 0 or more (got -1)"],
    ),
    (
        "version-true",
        "name: s\nversion: true\ntarget: cli\n" + AGENT,
        ["2:10: version: expected an integer (got true)"],
    ),
    # -- durations ------------------------------------------------------------------------
    (
        "ttl-below-floor",
        CLI + "memory:\n  ttl: 30m\n",
        [
            '5:8: memory.ttl: "30m" is below the 1h floor — a sub-hour fact TTL expires '
            'memories mid-session. Use "1h" or longer (e.g. "90d"), or omit ttl to keep '
            "facts forever."
        ],
    ),
    (
        "ttl-above-ceiling",
        CLI + "memory:\n  ttl: 4000000d\n",
        [
            '5:8: memory.ttl: "4000000d" is above the 3650d ceiling (10 years, the longest a '
            'remembered fact may be kept). Use "3650d" or less, or omit ttl to keep facts forever.'
        ],
    ),
    (
        "ttl-overflowing-sqlite",
        CLI + "memory:\n  ttl: 99999999999999999999d\n",
        [
            '5:8: memory.ttl: "99999999999999999999d" is above the 3650d ceiling (10 years, the '
            'longest a remembered fact may be kept). Use "3650d" or less, or omit ttl to keep '
            "facts forever."
        ],
    ),
    (
        "ttl-just-above-ceiling-in-hours",
        CLI + "memory:\n  ttl: 87601h\n",
        [
            '5:8: memory.ttl: "87601h" is above the 3650d ceiling (10 years, the longest a '
            'remembered fact may be kept). Use "3650d" or less, or omit ttl to keep facts forever.'
        ],
    ),
    (
        "ttl-more-digits-than-int-parses",
        CLI + "memory:\n  ttl: " + "1" * 5000 + "d\n",
        [
            '5:8: memory.ttl: "111111111111111111111111111111111111111…" is above the 3650d '
            'ceiling (10 years, the longest a remembered fact may be kept). Use "3650d" or '
            "less, or omit ttl to keep facts forever."
        ],
    ),
    (
        "ttl-malformed",
        CLI + "memory:\n  ttl: 5 days\n",
        ['5:8: memory.ttl: expected a duration such as "90d" or "12h" (got "5 days")'],
    ),
    (
        "ttl-number",
        CLI + "memory:\n  ttl: 3600\n",
        ['5:8: memory.ttl: expected a duration such as "90d" or "12h" (got 3600)'],
    ),
    # -- learning (CrewHaus) and the mock embedder -----------------------------------------
    (
        "learning-without-wiki",
        CLI + "learning: {domain: billing}\n",
        [
            "4:1: learning: needs a wiki to learn into — study passes write sourced articles "
            "there and the exam reads them: add `memory: {wiki: {}}` or `thredz: true`, or set "
            "`enabled: false` here"
        ],
    ),
    (
        "learning-with-disabled-wiki",
        CLI + "memory: {wiki: {enabled: false}}\nlearning: {domain: billing}\n",
        [
            "5:1: learning: needs a wiki to learn into — study passes write sourced articles "
            "there and the exam reads them: add `memory: {wiki: {}}` or `thredz: true`, or set "
            "`enabled: false` here"
        ],
    ),
    (
        "learning-contradicts-requireSources-false",
        CLI + "memory:\n  wiki: {requireSources: false}\nlearning: {domain: billing}\n",
        [
            "5:26: memory.wiki.requireSources: contradicts `learning`: a learning wiki takes "
            "only cited knowledge (every article has a ## Sources section); remove "
            "`requireSources: false`"
        ],
    ),
    (
        "learning-true",
        CLI + "memory: {wiki: {}}\nlearning: true\n",
        [
            "5:11: learning: expected a mapping (got true): learning needs at least its domain, "
            'such as "learning: {domain: billing}"'
        ],
    ),
    (
        "learning-without-domain",
        CLI + "memory: {wiki: {}}\nlearning: {}\n",
        ['5:1: learning: missing required key "domain"'],
    ),
    (
        "learning-source-escapes-workspace",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  sources: [../notes.md]\n",
        [
            '7:13: learning.sources[0]: "../notes.md" must stay beneath the workspace: no '
            "empty, '.' or '..' part"
        ],
    ),
    (
        "learning-source-absolute",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  sources: [/etc/passwd]\n",
        [
            '7:13: learning.sources[0]: "/etc/passwd" must be relative to the workspace (the '
            "agent's folder), with / between folders"
        ],
    ),
    (
        "learning-source-in-state-folder",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  sources: [.specwire/keys]\n",
        [
            '7:13: learning.sources[0]: ".specwire/keys" must not be in .specwire/ (the '
            "agent's own state)"
        ],
    ),
    (
        "learning-source-other-scheme",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  sources: ['ftp://h/x']\n",
        [
            '7:13: learning.sources[0]: "ftp://h/x": a source is a path beneath the workspace '
            "or an http(s) URL"
        ],
    ),
    (
        "learning-source-url-with-credentials",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  sources: ['https://u:p@h/x']\n",
        [
            '7:13: learning.sources[0]: "https://u:p@h/x" is not an http:// or https:// URL '
            "without a user or password (one line)"
        ],
    ),
    (
        "learning-source-twice",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  sources: [a.md, a.md]\n",
        ['7:12: learning.sources: source "a.md" is listed twice'],
    ),
    (
        "learning-exam-unknown-grader",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n"
        "  exam: {dataset: exam.jsonl, graders: [exact]}\n",
        ['7:41: learning.exam.graders[0]: expected one of contains, covers (got "exact")'],
    ),
    (
        "learning-exam-no-grader",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n"
        "  exam: {dataset: exam.jsonl, graders: []}\n",
        ["7:40: learning.exam.graders: must list at least one grader: contains, covers"],
    ),
    (
        "learning-exam-without-graders",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  exam: {dataset: exam.jsonl}\n",
        ['7:3: learning.exam: missing required key "graders"'],
    ),
    (
        "learning-exam-dataset-escapes",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n"
        "  exam: {dataset: ../exam.jsonl, graders: [covers]}\n",
        [
            '7:19: learning.exam.dataset: "../exam.jsonl" must stay beneath the workspace: no '
            "empty, '.' or '..' part"
        ],
    ),
    (
        "learning-study-not-bool",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  study: {on_dream: maybe}\n",
        ['7:21: learning.study.on_dream: expected true or false (got "maybe")'],
    ),
    (
        "learning-unknown-key",
        CLI + "memory: {wiki: {}}\nlearning:\n  domain: b\n  stuyd: {}\n",
        ['7:3: learning.stuyd: unknown key "stuyd" (did you mean "study"?)'],
    ),
    (
        "embedder-mock-unknown",
        CLI + "memory: {embedder: mock/random}\n",
        [
            '4:20: memory.embedder: unknown mock embedder "random": the one mock embedder is '
            "mock/deterministic (an alias of hash/256)"
        ],
    ),
    # -- CrewHaus 0.4 recall and dream keys ----------------------------------------------
    (
        "autoRecall-unknown-mode",
        CLI + "memory:\n  autoRecall: sometimes\n",
        [
            '5:15: memory.autoRecall: expected true, false, "session-start" or "per-turn" '
            '(got "sometimes")'
        ],
    ),
    (
        "autoRecall-number",
        CLI + "memory:\n  autoRecall: 1\n",
        ['5:15: memory.autoRecall: expected true, false, "session-start" or "per-turn" (got 1)'],
    ),
    (
        "refreshEvery-with-recall-off",
        CLI + "memory:\n  autoRecall: false\n  refreshEvery: 2\n",
        [
            "6:3: memory.refreshEvery: `refreshEvery` sets how often per-turn recall refreshes, "
            'but autoRecall is false: remove it, or set `autoRecall: "per-turn"`'
        ],
    ),
    (
        "refresh_every-alias-with-recall-off",
        CLI + "memory:\n  auto_recall: false\n  refresh_every: 3\n",
        [
            "6:3: memory.refresh_every: `refresh_every` sets how often per-turn recall "
            'refreshes, but autoRecall is false: remove it, or set `autoRecall: "per-turn"`'
        ],
    ),
    (
        "refreshEvery-0",
        CLI + "memory:\n  autoRecall: per-turn\n  refreshEvery: 0\n",
        ["6:17: memory.refreshEvery: must be greater than 0 (got 0)"],
    ),
    (
        "sessionRecall-number",
        CLI + "memory:\n  sessionRecall: 3\n",
        ["5:18: memory.sessionRecall: expected true or false (got 3)"],
    ),
    (
        "dream-without-every",
        CLI + "memory:\n  dream: {mode: full}\n",
        ['5:3: memory.dream: missing required key "every"'],
    ),
    (
        "dream-every-below-floor",
        CLI + "memory:\n  dream: {every: 1m}\n",
        [
            '5:18: memory.dream.every: "1m" is below the 5m floor — a dream consolidates the '
            "whole memory and must not run more often than every five minutes. "
            'Use "5m" or longer (e.g. "1d").'
        ],
    ),
    (
        "dream-every-malformed",
        CLI + "memory:\n  dream:\n    every: daily\n",
        ['6:12: memory.dream.every: expected a duration such as "6h" or "1d" (got "daily")'],
    ),
    (
        "dream-mode-unknown",
        CLI + "memory:\n  dream: {every: 1h, mode: lazy}\n",
        ['5:28: memory.dream.mode: expected one of deterministic, full (got "lazy")'],
    ),
    (
        "dream-budget-negative",
        CLI + "memory:\n  dream: {every: 1h, budget_usd: -1}\n",
        ["5:34: memory.dream.budget_usd: must be a finite number of 0 or more (got -1)"],
    ),
    (
        "dream-budget-boolean",
        CLI + "memory:\n  dream: {every: 1h, budgetUsd: true}\n",
        ["5:33: memory.dream.budgetUsd: expected a number of US dollars such as 0.5 (got true)"],
    ),
    (
        "dream-budget-both-spellings",
        CLI + "memory:\n  dream: {every: 1h, budget_usd: 1, budgetUsd: 2}\n",
        ['5:37: memory.dream.budgetUsd: both "budget_usd" and "budgetUsd" are given; keep one'],
    ),
    (
        "dream-empty-instructions",
        CLI + "memory:\n  dream: {every: 1h, instructions: ''}\n",
        ['5:36: memory.dream.instructions: must not be empty (got "")'],
    ),
    (
        "dream-unknown-key",
        CLI + "memory:\n  dream: {every: 1h, evry: 2h}\n",
        ['5:22: memory.dream.evry: unknown key "evry" (did you mean "every"?)'],
    ),
    (
        "dream-on-a-remote-backend",
        CLI + "memory:\n  backend: http\n  url: $U\n  token: $T\n  dream: {every: 1h}\n",
        [
            "8:3: memory.dream: the dream engine consolidates the embedded fact store or "
            "PostgreSQL, and the http backend keeps facts elsewhere: remove `dream` or use "
            "`backend: file` or `postgres`"
        ],
    ),
    (
        "state-in-postgres-without-postgres",
        CLI + "memory:\n  state: postgres\n",
        [
            "5:10: memory.state: `state: postgres` keeps every tier in the facts' PostgreSQL "
            'database, and this spec\'s backend is "file": set `backend: postgres` (with its '
            "`dsn`) or remove `state`"
        ],
    ),
    (
        "state-unknown-word",
        CLI + "memory:\n  state: redis\n",
        ['5:10: memory.state: expected one of files, postgres (got "redis")'],
    ),
    # -- continuity scope -----------------------------------------------------------------
    *[
        (
            f"session-scope-on-{target}",
            header + "continuity:\n  scope: session\n",
            [
                f'{line}:10: continuity.scope: "session" needs a target with per-conversation '
                f"session routing (channel, managed) — the {target} target has no session "
                "router, so a "
                "session-scoped store would never resolve a session id. "
                'Use scope "spec" or "auto".'
            ],
        )
        for target, header, line in [
            ("cli", CLI, 5),
            (
                "research",
                "name: s\ntarget: research\n" + AGENT + "goal: g\nbranchingFactor: 1\n"
                "maxDurationMs: 9\n",
                8,
            ),
            (
                "crew",
                "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles: {a: {instructions: x}}\n",
                7,
            ),
        ]
    ],
    # -- target ---------------------------------------------------------------------------
    (
        "unknown-target",
        "name: s\ntarget: workflow\n",
        [
            '2:9: target: unknown target "workflow": '
            "expected one of cli, channel, managed, research, crew"
        ],
    ),
    (
        "target-not-a-string",
        "name: s\ntarget: [cli]\n",
        [f"2:9: target: unknown target a list: {FIVE}"],
    ),
    (
        "missing-target",
        "name: s\n" + AGENT,
        [f'1:1: (root): missing required key "target" (one of {TARGET_NAMES})'],
    ),
    (
        "unknown-target-still-checks-keys",
        "name: s\ntarget: bot\nmemroy: {}\n",
        [
            f'2:9: target: unknown target "bot": {FIVE}',
            '3:1: memroy: unknown key "memroy" (did you mean "memory"?)',
        ],
    ),
    # -- spellings ------------------------------------------------------------------------
    (
        "both-spellings",
        CLI + "memory:\n  recallK: 3\n  recall_k: 4\n",
        ['6:3: memory.recall_k: both "recallK" and "recall_k" are given; keep one'],
    ),
    (
        "both-spellings-snake-first",
        CLI + "memory:\n  auto_recall: true\n  autoRecall: false\n",
        ['6:3: memory.autoRecall: both "autoRecall" and "auto_recall" are given; keep one'],
    ),
    # -- YAML problems --------------------------------------------------------------------
    (
        "duplicate-key",
        CLI + "memory: {}\nmemory: {}\n",
        ['5:1: (root): duplicate key "memory"'],
    ),
    (
        "root-is-a-list",
        "- name: s\n- target: cli\n",
        ["1:1: (root): expected a mapping at the top level (got a list)"],
    ),
    (
        "root-is-a-scalar",
        "just words\n",
        ['1:1: (root): expected a mapping at the top level (got "just words")'],
    ),
    (
        "empty-file",
        "",
        ['1:1: (root): the spec is empty: expected a mapping with at least "name" and "target"'],
    ),
    (
        "only-comments",
        "# nothing here\n",
        ['1:1: (root): the spec is empty: expected a mapping with at least "name" and "target"'],
    ),
    (
        "invalid-yaml",
        "name: s\ntarget: [cli\nagent: {}\n",
        ["3:6: (root): invalid YAML: expected ',' or ']', but got ':'"],
    ),
    (
        "tab-indentation",
        "name: s\ntarget: cli\nagent:\n\tmodel: scripted\n",
        ["4:1: (root): tab characters are not allowed here; indent YAML with spaces"],
    ),
    (
        "undefined-alias",
        CLI + "tools: *nowhere\n",
        ['4:8: (root): undefined alias "*nowhere" (no anchor "&nowhere" before it)'],
    ),
    (
        "two-documents",
        CLI + "---\nname: t\n",
        ["4:1: (root): expected a single YAML document (found another one)"],
    ),
    # -- names ----------------------------------------------------------------------------
    (
        "bad-name",
        "name: a/b\ntarget: cli\n" + AGENT,
        ['1:7: name: must contain only letters, digits, spaces, "_", ".", ":" and "-" (got "a/b")'],
    ),
    (
        "empty-model",
        "name: s\ntarget: cli\nagent: {model: '', instructions: i}\n",
        ['3:16: agent.model: must not be empty (got "")'],
    ),
    # -- missing required keys, per target ------------------------------------------------
    (
        "name-only-dots",
        'name: ".."\ntarget: cli\n' + AGENT,
        [
            "1:7: name: must not be only dots and spaces: it names the bundle's directory "
            '(got "..")'
        ],
    ),
    (
        "name-only-a-space",
        'name: " "\ntarget: cli\n' + AGENT,
        ['1:7: name: must not be only dots and spaces: it names the bundle\'s directory (got " ")'],
    ),
    (
        "name-leading-space",
        'name: " bot"\ntarget: cli\n' + AGENT,
        [
            "1:7: name: must not start or end with a space: it names the bundle's directory "
            '(got " bot")'
        ],
    ),
    (
        "name-trailing-space",
        "name: 'bot '\ntarget: cli\n" + AGENT,
        [
            "1:7: name: must not start or end with a space: it names the bundle's directory "
            '(got "bot ")'
        ],
    ),
    (
        "missing-name",
        "target: cli\n" + AGENT,
        ['1:1: (root): missing required key "name"'],
    ),
    (
        "cli-missing-agent",
        "name: s\ntarget: cli\n",
        ['1:1: (root): missing required key "agent"'],
    ),
    (
        "agent-missing-model",
        "name: s\ntarget: cli\nagent:\n  instructions: i\n",
        ['3:1: agent: missing required key "model"'],
    ),
    (
        "channel-missing-channels-and-routing",
        "name: s\ntarget: channel\n" + AGENT,
        [
            '1:1: (root): missing required key "channels"',
            '1:1: (root): missing required key "routing"',
        ],
    ),
    (
        "channel-empty-channels",
        "name: s\ntarget: channel\n" + AGENT + "channels: {}\nrouting: {sessionKey: thread}\n",
        ["4:11: channels: must list at least one channel"],
    ),
    (
        "routing-missing-sessionKey",
        "name: s\ntarget: channel\n" + AGENT + "channels: {slack: {}}\nrouting: {}\n",
        ['5:1: routing: missing required key "sessionKey"'],
    ),
    (
        "bad-sessionKey",
        "name: s\ntarget: channel\n" + AGENT + "channels: {slack: {}}\n"
        "routing: {sessionKey: forum}\n",
        ['5:23: routing.sessionKey: expected one of thread, channel, user (got "forum")'],
    ),
    (
        "managed-missing-tenants",
        "name: s\ntarget: managed\n" + AGENT,
        ['1:1: (root): missing required key "tenants"'],
    ),
    (
        "managed-empty-tenants",
        "name: s\ntarget: managed\n" + AGENT + "tenants: []\n",
        ["4:10: tenants: must list at least one tenant"],
    ),
    (
        "tenant-missing-id",
        "name: s\ntarget: managed\n" + AGENT + "tenants:\n  - budget: {maxInputTokens: 5}\n",
        ['5:5: tenants[0]: missing required key "id"'],
    ),
    (
        "research-missing-goal",
        "name: s\ntarget: research\n" + AGENT + "branchingFactor: 2\nmaxDurationMs: 10\n",
        ['1:1: (root): missing required key "goal"'],
    ),
    (
        "research-blank-goal",
        "name: s\ntarget: research\n" + AGENT + "goal: '  '\nbranchingFactor: 2\n"
        "maxDurationMs: 10\n",
        ['4:7: goal: must not be empty (got "  ")'],
    ),
    (
        "crew-missing-roles-and-entry",
        "name: s\ntarget: crew\nmodel: scripted\n",
        [
            '1:1: (root): missing required key "entry"',
            '1:1: (root): missing required key "roles"',
        ],
    ),
    (
        "crew-empty-roles",
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles: {}\n",
        ["5:8: roles: must list at least one role"],
    ),
    (
        "crew-role-without-body",
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n  a:\n",
        ["6:3: roles.a: expected a mapping (got null)"],
    ),
    # -- cross-field rules ----------------------------------------------------------------
    (
        "entry-names-no-role",
        "name: s\ntarget: crew\nmodel: scripted\nentry: editor\nroles:\n"
        "  researcher: {instructions: x}\n"
        "  writer: {instructions: y}\n",
        ['4:8: entry: no role named "editor" (roles: researcher, writer)'],
    ),
    (
        "entry-misspelt-role",
        "name: s\ntarget: crew\nmodel: scripted\nentry: writr\nroles:\n"
        "  writer: {instructions: y}\n",
        ['4:8: entry: no role named "writr" (did you mean "writer"?)'],
    ),
    (
        "duplicate-tenant-id",
        "name: s\ntarget: managed\n" + AGENT + "tenants:\n  - id: acme\n  - id: acme\n",
        ['6:9: tenants[1].id: duplicate tenant id "acme" (already used by tenants[0])'],
    ),
    (
        "tenant-ids-differing-in-case",
        "name: s\ntarget: managed\n" + AGENT + "tenants:\n  - id: acme\n  - id: ACME\n",
        [
            '6:9: tenants[1].id: tenant id "ACME" clashes with tenants[0] "acme": '
            "tenant ids are compared case-insensitively"
        ],
    ),
    (
        "tenant-ids-sharing-a-key-variable",
        "name: s\ntarget: managed\n"
        + AGENT
        + "tenants:\n  - id: tenant-acme\n  - id: tenant_acme\n",
        [
            '6:9: tenants[1].id: tenant id "tenant_acme" clashes with tenants[0] "tenant-acme": '
            "both would read their key from SPECWIRE_TENANT_KEY_TENANT_ACME"
        ],
    ),
    (
        "bad-tenant-id",
        "name: s\ntarget: managed\n" + AGENT + "tenants:\n  - id: ../etc\n",
        [
            "5:9: tenants[0].id: must start with a letter or digit and contain only letters, "
            'digits, "_" and "-", at most 64 characters (got "../etc")'
        ],
    ),
    (
        "budget-zero",
        "name: s\ntarget: managed\n"
        + AGENT
        + "tenants:\n  - id: a\n    budget: {maxOutputTokens: 0}\n",
        ["6:31: tenants[0].budget.maxOutputTokens: must be greater than 0 (got 0)"],
    ),
    (
        "duplicate-tool",
        CLI + "tools: [read, ls, read]\n",
        ['4:19: tools[2]: duplicate tool "read"'],
    ),
    (
        "unknown-tool-with-suggestion",
        CLI + "tools: [raed]\n",
        ['4:9: tools[0]: unknown builtin tool "raed" (did you mean "read"?)'],
    ),
    (
        "unknown-tool-no-suggestion",
        CLI + "tools: [browser]\n",
        [
            '4:9: tools[0]: unknown builtin tool "browser": '
            "expected one of bash, grep, ls, read, write"
        ],
    ),
    (
        "managed-bash",
        "name: s\ntarget: managed\n" + AGENT + "tenants: [{id: a}]\ntools: [read, bash]\n",
        [
            '5:15: tools[1]: "bash" cannot be fenced to a tenant (it can reach every tenant\'s '
            "files), so the managed target does not offer it"
        ],
    ),
    (
        "managed-unknown-tool-lists-managed-tools",
        "name: s\ntarget: managed\n" + AGENT + "tenants: [{id: a}]\ntools: [browser]\n",
        ['5:9: tools[0]: unknown builtin tool "browser": expected one of grep, ls, read, write'],
    ),
    # -- secrets, backends, embedders -----------------------------------------------------
    (
        "malformed-secret-lowercase",
        "name: s\ntarget: channel\n" + AGENT + "channels:\n  slack:\n    botToken: $lower\n"
        "routing: {sessionKey: thread}\n",
        ['6:15: channels.slack.botToken: malformed secret reference "$lower": use $UPPER_SNAKE'],
    ),
    (
        "malformed-secret-bare-dollar",
        "name: s\ntarget: channel\n" + AGENT + "channels:\n  slack:\n    botToken: $\n"
        "routing: {sessionKey: thread}\n",
        ['6:15: channels.slack.botToken: malformed secret reference "$": use $UPPER_SNAKE'],
    ),
    (
        "malformed-secret-agent-model",
        "name: s\ntarget: cli\nagent: {model: $lower, instructions: i}\n",
        ['3:16: agent.model: malformed secret reference "$lower": use $UPPER_SNAKE'],
    ),
    (
        "malformed-secret-crew-model",
        "name: s\ntarget: crew\nmodel: $Model\nentry: a\nroles: {a: {instructions: x}}\n",
        ['3:8: model: malformed secret reference "$Model": use $UPPER_SNAKE'],
    ),
    (
        "malformed-secret-role-model",
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n"
        "  a: {instructions: x, model: $}\n",
        ['6:31: roles.a.model: malformed secret reference "$": use $UPPER_SNAKE'],
    ),
    # -- crew roles: modelPool / modelFallbacks ------------------------------------------
    (
        "role-model-and-model-pool",
        CREW_ROLES + "  a: {instructions: x, model: scripted/m1, modelPool: [scripted/p1, o3]}\n",
        [
            "6:44: roles.a.modelPool: use one of model / modelPool: a role runs one model, or "
            "takes the pool's models in turn"
        ],
    ),
    (
        "role-model-and-model-pool-snake-case",
        CREW_ROLES + "  a:\n    model_pool: [o1]\n    instructions: x\n    model: o3\n",
        [
            "7:5: roles.a.model_pool: use one of model / model_pool: a role runs one model, or "
            "takes the pool's models in turn"
        ],
    ),
    (
        "model-pool-not-a-list",
        CREW_ROLES + "  a: {instructions: x, modelPool: p1}\n",
        ['6:35: roles.a.modelPool: expected a list (got "p1")'],
    ),
    (
        "model-pool-empty",
        CREW_ROLES + "  a: {instructions: x, modelPool: []}\n",
        ["6:35: roles.a.modelPool: must list at least one model id"],
    ),
    (
        "model-pool-non-string-item",
        CREW_ROLES + "  a: {instructions: x, modelPool: [o1, 5, [p2]]}\n",
        [
            "6:40: roles.a.modelPool[1]: expected a string (got 5)",
            "6:43: roles.a.modelPool[2]: expected a string (got a list)",
        ],
    ),
    (
        "model-pool-duplicate",
        CREW_ROLES + "  a:\n    instructions: x\n    modelPool:\n      - o1\n      - $POOL\n"
        "      - o1\n",
        ['11:9: roles.a.modelPool[2]: duplicate model id "o1" (see roles.a.modelPool[0])'],
    ),
    (
        "model-pool-too-many",
        CREW_ROLES + "  a: {instructions: x, modelPool: "
        "[o1, o3, o4-mini, gpt-4, gpt-4o, gpt-5, gpt-4.1, o1-mini, o3-mini]}\n",
        ["6:35: roles.a.modelPool: must list at most 8 model ids (got 9)"],
    ),
    (
        "model-pool-bad-ids",
        CREW_ROLES + "  a: {instructions: x, modelPool: [o1, $pool, '', \"a\\nb\"]}\n",
        [
            '6:40: roles.a.modelPool[1]: malformed secret reference "$pool": use $UPPER_SNAKE',
            '6:47: roles.a.modelPool[2]: must not be empty (got "")',
            "6:51: roles.a.modelPool[3]: must be one line of printable text (this one has "
            'U+000A) (got "a\\nb")',
        ],
    ),
    (
        "model-fallbacks-not-a-list",
        CREW_ROLES + "  a: {instructions: x, modelFallbacks: {f: 1}}\n",
        ["6:40: roles.a.modelFallbacks: expected a list (got a mapping)"],
    ),
    (
        "model-fallbacks-empty-snake-case",
        CREW_ROLES + "  a: {instructions: x, model_fallbacks: []}\n",
        ["6:41: roles.a.model_fallbacks: must list at least one model id"],
    ),
    (
        "model-fallbacks-duplicate",
        CREW_ROLES + "  a: {instructions: x, modelFallbacks: [o1, o3, o1]}\n",
        [
            '6:49: roles.a.modelFallbacks[2]: duplicate model id "o1" '
            "(see roles.a.modelFallbacks[0])"
        ],
    ),
    (
        "model-fallbacks-too-many",
        CREW_ROLES
        + "  a:\n    instructions: x\n    modelFallbacks: ["
        + ", ".join(f"scripted/f{n}" for n in range(9))
        + "]\n",
        ["8:21: roles.a.modelFallbacks: must list at most 8 model ids (got 9)"],
    ),
    (
        "model-fallbacks-bad-id",
        CREW_ROLES + "  a: {instructions: x, modelFallbacks: [$Fallback]}\n",
        [
            '6:41: roles.a.modelFallbacks[0]: malformed secret reference "$Fallback": '
            "use $UPPER_SNAKE"
        ],
    ),
    (
        "model-fallback-repeats-the-role-model",
        CREW_ROLES + "  a: {instructions: x, model: o1, modelFallbacks: [o3, o1]}\n",
        [
            '6:56: roles.a.modelFallbacks[1]: "o1" is already the role\'s model: a fallback must '
            "differ from the models it backs up"
        ],
    ),
    (
        "model-fallback-repeats-the-crew-model",
        CREW_ROLES + "  a: {instructions: x, modelFallbacks: [scripted]}\n",
        [
            "6:41: roles.a.modelFallbacks[0]: \"scripted\" is already the role's model (the crew's "
            "model): a fallback must differ from the models it backs up"
        ],
    ),
    (
        "model-fallback-repeats-a-pool-id",
        CREW_ROLES + "  a: {instructions: x, modelPool: [o1, $P2], modelFallbacks: [$P2]}\n",
        [
            '6:63: roles.a.modelFallbacks[0]: "$P2" is already in the role\'s pool '
            "(roles.a.modelPool[1]): a fallback must differ from the models it backs up"
        ],
    ),
    (
        "token-in-a-model-pool",
        CREW_ROLES + f"  a: {{instructions: x, modelPool: [o1, {GITHUB}]}}\n",
        [
            "6:40: roles.a.modelPool[1]: looks like a literal credential (a GitHub token), not a "
            "model id; keep it in an environment variable such as GITHUB_TOKEN and write a model "
            'id (or a "$MODEL_ID" reference) here'
        ],
    ),
    (
        "channel-setting-not-a-scalar",
        "name: s\ntarget: channel\n" + AGENT + "channels:\n  slack:\n    scopes: [a, b]\n"
        "routing: {sessionKey: thread}\n",
        ["6:13: channels.slack.scopes: expected a string, number or boolean (got a list)"],
    ),
    (
        "unknown-backend",
        CLI + "memory:\n  backend: redis\n",
        [
            '5:12: memory.backend: unknown backend "redis": known backends: file, http, '
            "postgres, thredz"
        ],
    ),
    (
        "postgres-without-dsn",
        CLI + "memory:\n  backend: postgres\n",
        ["5:12: memory.backend: the postgres backend needs `dsn: $DATABASE_URL`"],
    ),
    (
        "literal-dsn",
        CLI + "memory:\n  backend: postgres\n  dsn: postgresql://app:hunter22@db/facts\n",
        [
            "6:8: memory.dsn: must be a secret reference ($UPPER_SNAKE, read from the "
            "environment at run time): a literal connection setting would be baked into the bundle"
        ],
    ),
    (
        "http-without-token",
        CLI + "memory:\n  backend: http\n  url: https://memory.internal:8443\n",
        ["5:12: memory.backend: the http backend needs `token: $MEMORY_TOKEN`"],
    ),
    (
        "http-url-with-credentials",
        CLI + "memory:\n  backend: http\n  url: https://u:p@memory.internal\n"
        "  token: $MEMORY_TOKEN\n",
        [
            "6:8: memory.url: must be an http:// or https:// URL (a host, an optional port up to "
            "65535, no user or password: the token goes in `token`), or a secret reference such "
            "as $MEMORY_URL"
        ],
    ),
    (
        "http-url-with-a-bad-port",
        CLI + "memory:\n  backend: http\n  url: https://memory.internal:abc/\n"
        "  token: $MEMORY_TOKEN\n",
        [
            "6:8: memory.url: must be an http:// or https:// URL (a host, an optional port up to "
            "65535, no user or password: the token goes in `token`), or a secret reference such "
            "as $MEMORY_URL"
        ],
    ),
    (
        "literal-token",
        CLI + "memory:\n  backend: http\n  url: $MEMORY_URL\n  token: s3cr3t-t0ken\n",
        [
            "7:10: memory.token: must be a secret reference ($UPPER_SNAKE, read from the "
            "environment at run time): a literal connection setting would be baked into the bundle"
        ],
    ),
    (
        "dsn-on-the-file-backend",
        CLI + "memory:\n  dsn: $DATABASE_URL\n",
        [
            "5:3: memory.dsn: `dsn` is a setting of the postgres backend, but the backend is "
            '"file": remove `dsn` or set `backend: postgres`'
        ],
    ),
    (
        "bad-embedder",
        CLI + "memory:\n  embedder: openai\n",
        [
            '5:13: memory.embedder: expected "provider/model" such as "hash/256" or '
            '"openai/text-embedding-3-small" (got "openai")'
        ],
    ),
    (
        "bad-wiki-embedder",
        CLI + "memory:\n  wiki:\n    embedder: /256\n",
        [
            '6:15: memory.wiki.embedder: expected "provider/model" such as "hash/256" or '
            '"openai/text-embedding-3-small" (got "/256")'
        ],
    ),
    # -- hostile input: sizes (caps are checked before validation) -----------------------
    (
        "file-over-the-size-cap",
        CLI + "# " + "x" * MAX_SPEC_BYTES + "\n",
        [
            f"1:1: (root): the file is too large ({len(CLI) + MAX_SPEC_BYTES + 3:,} bytes): "
            "a spec may be at most 512 KiB"
        ],
    ),
    (
        "too-many-yaml-nodes",
        CLI + "roles:\n" + "".join(f"  r{n}: [" + ", ".join(["x"] * 99) + "]\n" for n in range(60)),
        # 13 nodes come before roles.r0; each role takes 101 (key, list, 99 items): the 5,001st
        # node is the 37th item of roles.r49, on line 54.
        ["54:117: (root): the document is too large (more than 5000 keys and values)"],
    ),
    (
        "nested-too-deeply",
        CLI + "memory: " + "[" * 40 + "]" * 40 + "\n",
        ["4:40: (root): the document is nested too deeply (more than 32 levels)"],
    ),
    (
        "too-many-tenants",
        "name: s\ntarget: managed\n"
        + AGENT
        + "tenants:\n"
        + "".join(f"  - id: t{n}\n" for n in range(MAX_ENTRIES + 1)),
        ["505:5: tenants: has more than 500 items (at most 500 are allowed)"],
    ),
    (
        "too-many-tools-in-a-flow-list",
        CLI + "tools: [" + ", ".join(["read"] * (MAX_ENTRIES + 1)) + "]\n",
        [f"4:{9 + 6 * MAX_ENTRIES}: tools: has more than 500 items (at most 500 are allowed)"],
    ),
    (
        "too-many-keys-in-a-channel",
        CHANNEL_HEAD
        + "  slack: {"
        + ", ".join(f"k{n}: v" for n in range(MAX_ENTRIES + 1))
        + "}\n"
        + ROUTING,
        [
            f"5:{11 + 7 * 10 + 8 * 90 + 9 * 400}: channels.slack: has more than 500 keys "
            "(at most 500 are allowed)"
        ],
    ),
    (
        "too-many-top-level-keys",
        CLI + "".join(f"unknown{n}: {n}\n" for n in range(MAX_ENTRIES)),
        # name, target and agent are three of the 500 keys.
        ["501:1: (root): has more than 500 keys (at most 500 are allowed)"],
    ),
    # -- hostile input: text that is not text, or not one line ----------------------------
    (
        "lone-surrogate-in-name",
        'name: "bot\\ud800"\ntarget: cli\n' + AGENT,
        ["1:7: name: is not valid text: it contains a lone surrogate (U+D800)"],
    ),
    (
        "lone-surrogate-in-model",
        'name: s\ntarget: cli\nagent: {model: "m\\udc00", instructions: i}\n',
        ["3:16: agent.model: is not valid text: it contains a lone surrogate (U+DC00)"],
    ),
    (
        "lone-surrogate-in-instructions",
        'name: s\ntarget: cli\nagent:\n  model: scripted\n  instructions: "be kind \\ud83d"\n',
        ["5:17: agent.instructions: is not valid text: it contains a lone surrogate (U+D83D)"],
    ),
    (
        "lone-surrogate-inside-a-wrong-type",
        'name: s\ntarget: cli\nagent: {model: [a, "\\udfff"], instructions: i}\n',
        ["3:20: agent.model: is not valid text: it contains a lone surrogate (U+DFFF)"],
    ),
    (
        "lone-surrogate-in-unknown-key",
        CLI + '"k\\ud800": 1\n',
        ['4:1: "k\\ud800": unknown key "k\\ud800"'],
    ),
    (
        "lone-surrogate-in-tenant-id",
        "name: s\ntarget: managed\n" + AGENT + 'tenants: [{id: "a\\ud800"}]\n',
        ["4:16: tenants[0].id: is not valid text: it contains a lone surrogate (U+D800)"],
    ),
    (
        "line-separator-in-a-key",
        CLI + 'memory: {"a\\u2028b": 1}\n',
        ['4:10: memory."a\\u2028b": unknown key "a\\u2028b"'],
    ),
    (
        "duplicate-key-with-a-line-separator",
        CLI + 'memory: {"a\\u2029": 1, "a\\u2029": 2}\n',
        ['4:24: (root): duplicate key "a\\u2029"'],
    ),
    (
        "next-line-in-a-setting-name",
        CHANNEL_HEAD + '  slack: {"bot\\NToken": $SLACK_BOT_TOKEN}\n' + ROUTING,
        [
            '5:11: channels.slack."bot\\u0085Token": keys must be one line of printable text '
            "(this one has U+0085)"
        ],
    ),
    (
        "escape-character-in-a-setting-value",
        CHANNEL_HEAD + '  slack: {team: "acme\\e[31m"}\n' + ROUTING,
        [
            "5:17: channels.slack.team: must be one line of printable text (this one has "
            'U+001B) (got "acme\\u001b[31m")'
        ],
    ),
    (
        "line-separator-in-a-model-id",
        'name: s\ntarget: cli\nagent: {model: "claude\\Lx", instructions: i}\n',
        [
            "3:16: agent.model: must be one line of printable text (this one has U+2028 "
            '(LINE SEPARATOR)) (got "claude\\u2028x")'
        ],
    ),
    (
        "newline-in-an-origin",
        "name: s\ntarget: research\n"
        + AGENT
        + "goal: g\nbranchingFactor: 1\nmaxDurationMs: 9\n"
        + 'retrieve: {allowedOrigins: ["https://a.example\\nX-Evil: 1"]}\n',
        [
            "7:29: retrieve.allowedOrigins[0]: must be one line of printable text (this one has "
            'U+000A) (got "https://a.example\\nX-Evil: 1")'
        ],
    ),
    # -- hostile input: numbers that are not numbers --------------------------------------
    (
        "nan-setting",
        CHANNEL_HEAD + "  slack: {rate: .nan}\n" + ROUTING,
        ["5:17: channels.slack.rate: must be a finite number (got .nan)"],
    ),
    (
        "infinite-setting",
        CHANNEL_HEAD + "  slack: {rate: -.inf}\n" + ROUTING,
        ["5:17: channels.slack.rate: must be a finite number (got -.inf)"],
    ),
    (
        "nan-for-an-integer",
        CLI + "memory: {recallK: .NaN}\n",
        ["4:19: memory.recallK: expected an integer (got .nan)"],
    ),
    (
        "integer-of-5000-digits",
        CLI + "memory: {recallK: " + "1" * 5000 + "}\n",
        ["4:19: memory.recallK: a number may be at most 1000 characters long (this one has 5000)"],
    ),
    (
        "hex-integer-too-long-to-print",
        CLI + "memory:\n  recallK: 0x" + "f" * 4000 + "\n",
        ["5:12: memory.recallK: a number may be at most 1000 characters long (this one has 4002)"],
    ),
    (
        "long-digit-string-in-quotes-is-a-string",
        CLI + "memory: {recallK: '" + "1" * 5000 + "'}\n",
        ['4:19: memory.recallK: expected an integer (got "' + "1" * 39 + '…")'],
    ),
    (
        "yaml-set-for-a-list",
        CLI + "tools: !!set {read: null}\n",
        ["4:8: tools: expected a list (got a set)"],
    ),
    # -- names that cannot name a directory -----------------------------------------------
    (
        "name-too-long",
        "name: " + "a" * 256 + "\ntarget: cli\n" + AGENT,
        [
            "1:7: name: is 256 characters long: at most 128, because it names the bundle's "
            'directory and its store files (got "' + "a" * 39 + '…")'
        ],
    ),
    (
        "name-one-past-the-cap",
        "name: " + "b" * (MAX_NAME_LENGTH + 1) + "\ntarget: cli\n" + AGENT,
        [
            "1:7: name: is 129 characters long: at most 128, because it names the bundle's "
            'directory and its store files (got "' + "b" * 39 + '…")'
        ],
    ),
    *[
        (
            f"name-windows-device-{name}",
            f"name: {name}\ntarget: cli\n" + AGENT,
            [
                f'1:7: name: "{name}" is a device name on Windows and cannot name the bundle\'s '
                "directory there; choose another name"
            ],
        )
        for name in ("con", "NUL", "com1", "lpt9.bot", "aux .x")
    ],
    # -- literal credentials (the fakes are assembled so no scanner mistakes this file) -----
    (
        "slack-bot-token-in-a-setting",
        CHANNEL_HEAD + f"  slack:\n    botToken: {SLACK_BOT}\n" + ROUTING,
        [
            "6:15: channels.slack.botToken: looks like a literal credential (a Slack bot token); "
            'put it in an environment variable and write "$SLACK_BOT_TOKEN" here'
        ],
    ),
    (
        "slack-app-token-under-another-name",
        CHANNEL_HEAD + f"  support:\n    socket: {SLACK_APP}\n" + ROUTING,
        [
            "6:13: channels.support.socket: looks like a literal credential (a Slack app token); "
            'put it in an environment variable and write "$SUPPORT_SOCKET" here'
        ],
    ),
    (
        "secret-named-setting-written-literally",
        CHANNEL_HEAD + "  slack:\n    signingSecret: 8f3b2c\n" + ROUTING,
        [
            "6:20: channels.slack.signingSecret: looks like a literal credential; put it in an "
            'environment variable and write "$SLACK_SIGNING_SECRET" here'
        ],
    ),
    (
        "api-key-named-setting-written-literally",
        CHANNEL_HEAD + "  teams:\n    client_api_key: hunter2\n" + ROUTING,
        [
            "6:21: channels.teams.client_api_key: looks like a literal credential; put it in an "
            'environment variable and write "$TEAMS_CLIENT_API_KEY" here'
        ],
    ),
    (
        "aws-secret-in-an-aws-named-setting",
        CHANNEL_HEAD + f"  s3:\n    awsSecretAccess: {AWS_SECRET}\n" + ROUTING,
        [
            "6:22: channels.s3.awsSecretAccess: looks like a literal credential (an AWS secret "
            'access key); put it in an environment variable and write "$S3_AWS_SECRET_ACCESS" here'
        ],
    ),
    (
        "aws-access-key-id-in-a-setting",
        CHANNEL_HEAD + f"  s3:\n    keyId: {AWS_KEY_ID}\n" + ROUTING,
        [
            "6:12: channels.s3.keyId: looks like a literal credential (an AWS access key id); "
            'put it in an environment variable and write "$S3_KEY_ID" here'
        ],
    ),
    (
        "slack-webhook-url-in-a-setting",
        CHANNEL_HEAD + f"  slack:\n    webhook: {SLACK_HOOK}\n" + ROUTING,
        [
            "6:14: channels.slack.webhook: looks like a literal credential (a Slack webhook URL); "
            'put it in an environment variable and write "$SLACK_WEBHOOK" here'
        ],
    ),
    (
        "anthropic-key-as-the-model",
        f"name: s\ntarget: cli\nagent: {{model: {ANTHROPIC}, instructions: i}}\n",
        [
            "3:16: agent.model: looks like a literal credential (an Anthropic API key), not a "
            "model id; keep it in an environment variable such as ANTHROPIC_API_KEY and write a "
            'model id (or a "$MODEL_ID" reference) here'
        ],
    ),
    (
        "github-token-as-a-role-model",
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n"
        f"  a: {{instructions: x, model: {GITHUB}}}\n",
        [
            "6:31: roles.a.model: looks like a literal credential (a GitHub token), not a model "
            "id; keep it in an environment variable such as GITHUB_TOKEN and write a model id "
            '(or a "$MODEL_ID" reference) here'
        ],
    ),
    (
        "private-key-pasted-into-instructions",
        "name: s\ntarget: cli\nagent:\n  model: scripted\n  instructions: |\n"
        "    Deploy with this key:\n"
        f"    {PRIVATE_KEY}\n    MIIEvQIBADANBg\n    -----END PRIVATE KEY-----\n",
        [
            "7:5: agent.instructions: contains what looks like a literal credential (a private "
            "key), which would be baked into the bundle; remove it and keep the secret in an "
            "environment variable such as PRIVATE_KEY"
        ],
    ),
    (
        "openai-key-in-the-middle-of-instructions",
        "name: s\ntarget: cli\nagent:\n  model: scripted\n  instructions: >\n    Be brief.\n"
        f"    Call the API with {OPENAI} when asked.\n",
        [
            "7:23: agent.instructions: contains what looks like a literal credential (an OpenAI "
            "API key), which would be baked into the bundle; remove it and keep the secret in an "
            "environment variable such as OPENAI_API_KEY"
        ],
    ),
    (
        "github-token-in-a-research-goal",
        "name: s\ntarget: research\n"
        + AGENT
        + f'goal: "triage issues using {GITHUB_PAT}"\nbranchingFactor: 1\nmaxDurationMs: 9\n',
        [
            "4:28: goal: contains what looks like a literal credential (a GitHub token), which "
            "would be baked into the bundle; remove it and keep the secret in an environment "
            "variable such as GITHUB_TOKEN"
        ],
    ),
    (
        "credential-is-not-echoed-by-later-checks",
        f"name: s\ntarget: crew\nmodel: scripted\nentry: {SLACK_BOT}\n"
        "roles: {a: {instructions: x}}\n",
        [
            "4:8: entry: contains what looks like a literal credential (a Slack bot token), "
            "which would be baked into the bundle; remove it and keep the secret in an "
            "environment variable such as SLACK_BOT_TOKEN",
        ],
    ),
    # -- several problems at once, reported in order --------------------------------------
    (
        "several-issues-sorted",
        "name: s\ntarget: cli\nmemory:\n  recallK: 0\n  ttl: 1m\n" + AGENT + "tools: [nope]\n",
        [
            "4:12: memory.recallK: must be between 1 and 50 (got 0)",
            '5:8: memory.ttl: "1m" is below the 1h floor — a sub-hour fact TTL expires memories '
            'mid-session. Use "1h" or longer (e.g. "90d"), or omit ttl to keep facts forever.',
            f'7:9: tools[0]: unknown builtin tool "nope": {TOOLS}',
        ],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=name) for name, text, expected in BAD_SPECS],
)
def test_bad_spec_reports_located_messages(text: str, expected: list[str]) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert [str(issue) for issue in caught.value.issues] == [f"spec.yaml:{e}" for e in expected]
    assert str(caught.value) == "\n".join(f"spec.yaml:{e}" for e in expected)


def test_the_table_is_large_and_ids_are_unique() -> None:
    names = [name for name, _, _ in BAD_SPECS]
    assert len(names) == len(set(names))
    assert len(names) >= 30


def test_issue_fields_are_exposed() -> None:
    text = dedent(
        """\
        name: support
        target: cli
        agent: {model: scripted, instructions: i}
        memory:
          recallK: 80
        """
    )
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "support.yaml")
    (issue,) = caught.value.issues
    assert (issue.path, issue.line, issue.col) == ("support.yaml", 5, 12)
    assert issue.key == "memory.recallK"
    assert issue.message == "must be between 1 and 50 (got 80)"
    assert str(issue) == "support.yaml:5:12: memory.recallK: must be between 1 and 50 (got 80)"

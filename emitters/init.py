"""``codegen init``: a commented starter spec for each target.

A starter is a valid spec (``codegen check`` accepts it as written), with memory and continuity
switched on and every knob a new user is likely to reach for shown, commented. Its first line
points editors at the spec's JSON Schema (``# yaml-language-server: $schema=…``).
"""

from __future__ import annotations

import json
import re

SCHEMA_FILE = "specwire.schema.json"
DEFAULT_NAME = "my-agent"
_NAME_CHARS = re.compile(r"[^\w.-]+")

_MEMORY = """\
# Episodic facts: the Remember / Recall / MemoryForget tools, recalled at session start.
# Remove the block for an agent without facts; `enabled: false` keeps it written but off.
memory:
  ttl: 90d              # facts expire (1h .. 3650d)
  recallK: 5            # facts recalled per query (1..50)
  # autoRecall: true    # recall at the first message (the default)
  # autoCapture: false  # capture facts without the Remember tool
  # embedder: hash/256  # hybrid recall: BM25 + cosine over these embeddings
  # wiki:               # versioned knowledge articles, ten wiki_* tools
  #   enabled: true
"""

_CONTINUITY = """\
# Working memory, on by default: focus, requirements ledger, plans, goals, handoff note.
# `continuity: false` turns it off.
continuity:
  proof: ladder         # ladder | require | off: how a plan step is proven
{scope}"""

_AGENT = """\
agent:
  model: scripted       # offline and deterministic; e.g. anthropic/claude-sonnet-4-5,
                        # openai/gpt-4o, or $MODEL_ID (read from the environment at run time)
  instructions: |
    {instructions}
"""

_TOOLS = """\
# Builtin tools: read, ls, grep, write, bash (bash runs sandboxed).
tools: [read, ls]
"""

_BODIES: dict[str, str] = {
    "cli": (
        "# A terminal agent: `python <out>/<name>/agent.py` (or --message for one-shot runs).\n"
        "target: cli\n"
        + _AGENT.format(instructions="You are a helpful assistant for the files in this folder.")
        + _TOOLS
        + _MEMORY
        + _CONTINUITY.format(scope="")
    ),
    "channel": (
        "# A chat-channel bot: one session per thread, memory wired every turn.\n"
        "target: channel\n"
        + _AGENT.format(instructions="You help the team in their Slack threads.")
        + "channels:\n"
        "  slack:\n"
        "    # Secrets are $UPPER_SNAKE references, read from the environment at run time.\n"
        "    botToken: $SLACK_BOT_TOKEN\n"
        "    signingSecret: $SLACK_SIGNING_SECRET\n"
        "routing:\n"
        "  sessionKey: thread   # one conversation per thread\n"
        + _MEMORY
        + _CONTINUITY.format(scope="  scope: auto           # auto is session here: per thread\n")
    ),
    "managed": (
        "# A multi-tenant service: every turn is fenced inside its tenant's own stores.\n"
        "target: managed\n"
        + _AGENT.format(instructions="You are a concierge for each tenant's staff.")
        + "tools: [read, ls, write]  # bash is not offered to managed agents\n"
        "tenants:\n"
        "  - id: tenant-acme\n"
        "    budget:               # optional token budgets, enforced per tenant\n"
        "      maxInputTokens: 100000\n"
        "      maxOutputTokens: 20000\n" + _MEMORY + _CONTINUITY.format(scope="")
    ),
    "research": (
        "# A batch research run: branches share one set of stores and end in report.md.\n"
        "target: research\n"
        + _AGENT.format(instructions="You research the goal and cite your sources.")
        + "goal: |\n"
        "  Describe what the research should find out.\n"
        "branchingFactor: 2        # branches run concurrently\n"
        "maxDurationMs: 60000      # the deadline for the whole run\n"
        "# retrieve:\n"
        "#   allowedOrigins: [https://example.org]\n" + _MEMORY + _CONTINUITY.format(scope="")
    ),
    "crew": (
        "# Several roles sharing one set of stores; they delegate with the Delegate tool.\n"
        "target: crew\n"
        "model: scripted           # one model for every role\n"
        "entry: researcher         # the role that answers first\n"
        "roles:\n"
        "  researcher:\n"
        "    instructions: You gather facts and record them as plan steps with evidence.\n"
        "  writer:\n"
        "    instructions: You write the story from the researcher's proven steps.\n"
        + _MEMORY
        + _CONTINUITY.format(scope="")
    ),
}
TARGETS = tuple(_BODIES)


def name_for(stem: str) -> str:
    """A spec name from a file name: characters a name cannot hold become ``-``."""
    name = _NAME_CHARS.sub("-", stem).strip(" .-")
    return name[:128] or DEFAULT_NAME


_PLAIN_NAME = re.compile(r"[A-Za-z][\w-]*")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n"}


def _yaml_name(name: str) -> str:
    plain = _PLAIN_NAME.fullmatch(name) and name.lower() not in _YAML_WORDS
    return name if plain else json.dumps(name, ensure_ascii=False)


def starter(target: str, name: str, schema_ref: str) -> str:
    """The starter spec for ``target``, named ``name``, pointing editors at ``schema_ref``."""
    comment, body = _BODIES[target].split("\n", 1)
    return (
        f"# yaml-language-server: $schema={schema_ref}\n{comment}\nname: {_yaml_name(name)}\n{body}"
    )

"""Crewship's seven memory tiers as keyed notes beside the facts.

A tier note (``AGENT.md``, ``CREW.md``, ``PERSONA.md``, ``pins.md``, ``lessons.md``,
``daily/<YYYY-MM-DD>.md``, ``peers/<slug>.md``) is a keyed fact with a ``tier``: its key is the
tier-relative label, its scope key the caller's (``runtime.core.scopes``). Everything goes through
the provider protocol (keyed retains, point reads, recall filtered by tier), so the tiers work on
every backend the facts do: the embedded SQLite store, PostgreSQL and the HTTP memory service.

- ``layout``: the tiers, their caps and keys, and the labels;
- ``notes``: read, write, append and search notes for one audience (``TierNotes``);
- ``usage``: cap usage, soft-cap warnings and the metadata results carry;
- ``snippets``: the line a search hit points at, capped at 500 characters;
- ``tools``: the four model-facing tools (``memory_read``, ``memory_write``, ``memory_search``,
  ``memory_append_daily``);
- ``prompt``: the ``[AGENT MEMORY]`` and ``[CREW SHARED MEMORY]`` blocks within their budget;
- ``wiring``: ``wire_tier_notes``, what ``wire_memory`` calls when ``memory.tiers`` is on.
"""

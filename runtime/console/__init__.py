"""The owner's memory console: ``codegen memory console``, a local web app over the owner's
admin protocols (facts, quarantine, erasure, continuity, session logs, wiki, evals, dream).

Server-rendered with the standard library (every stored value through ``html.escape``), on
Starlette; no script runs in the page. See docs/console.md.
"""

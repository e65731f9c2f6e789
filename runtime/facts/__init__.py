"""Episodic facts: a SQLite (WAL + FTS5) store with TTL, tombstones and provenance.

Modules: ``store`` (FactStore), ``schema`` (DDL and migrations), ``model`` (value types),
``text`` (tokens, stop words), ``ranking`` (BM25 score and evidence boost), ``provider`` (the
provider protocol and the local provider), ``capture`` (auto-capture from session logs),
``tools`` (Remember / Recall / MemoryForget) and ``wiring`` (``wire_facts``). Nothing is
imported here, so importing one module stays cheap.
"""

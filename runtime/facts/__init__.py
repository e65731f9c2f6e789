"""Episodic facts: a SQLite (WAL + FTS5) store with TTL, tombstones and provenance.

Modules: ``store`` (FactStore, composing the next four), ``lifecycle`` (the SQLite file: lazy
creation, WAL, the shared connection, transactions), ``validation`` (the rules every input obeys),
``queries`` (SQL statements and row mapping), ``schema`` (DDL and migrations), ``ownership`` (is
the file ours?), ``model`` (value types and limits), ``text`` (tokens, stop words), ``ranking``
(BM25 score and evidence boost), ``provider`` (the provider protocol and the local provider),
``capture`` (auto-capture from session logs), ``tools`` (Remember / Recall / MemoryForget) and
``wiring`` (``wire_facts``). Nothing is imported here, so importing one module stays cheap.
"""

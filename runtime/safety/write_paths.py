"""Every function of the runtime that writes to disk or to a database, and why what it writes
is safe to keep.

``tests/runtime/trust/test_write_paths.py`` walks the source for the write primitives (the
atomic writers, ``write_text``/``write_bytes``, ``os.write``, ``rewrite_log``, SQL ``INSERT``/
``UPDATE``/``REPLACE``) and fails when a function that calls one is missing here, or when an
entry here no longer writes: a new write path cannot land without saying how its text is
screened. Each entry is one of

- ``screened: …`` — model- or user-supplied text, screened by the injection scanner and
  redacted (``runtime.safety.screening``) before it reaches this function (the entry says
  where);
- ``host: …`` — what is written is the runtime's own data (keys, counts, ids, indexes,
  receipts), or text another entry already screened, copied or edited (the entry says which).
"""

from __future__ import annotations

from typing import Final

WRITE_PATHS: Final[dict[str, str]] = {
    # -- primitives: they write what their callers (listed below) give them ---------------------
    "runtime.atomic:replace_atomically": "host: the atomic writer; its callers are listed",
    "runtime.continuity.atomic:write_atomic": "host: the atomic writer; its callers are listed",
    "runtime.keyfile:key_in": "host: a random key (evidence key, erasure receipt key)",
    # -- facts ----------------------------------------------------------------------------------
    "runtime.facts.queries:insert_many": "screened: NewFact redacts (facts.validation) and the "
    "store scans before inserting (FactStore._screened: flagged writes are held)",
    "runtime.facts.queries:insert_with_id": "screened: as insert_many",
    "runtime.facts.queries:mark_superseded": "host: ids only",
    "runtime.facts.queries:sweep_expired": "host: tombstones of expired ids",
    "runtime.facts.queries:tombstone": "screened: the reason is redacted (validation.reason); "
    "a reason is never read into a prompt",
    "runtime.facts.quarantine_queries:hold": "screened: a write the scanner flagged, held apart "
    "and never read into a prompt; redacted by NewFact",
    "runtime.facts.quarantine_queries:hold_stored": "screened: a stored fact flagged on read, "
    "moved to quarantine",
    "runtime.facts.quarantine_queries:mark_released": "host: the owner's release of an id",
    "runtime.facts.schema:_retokenize": "host: search terms derived from stored facts",
    "runtime.facts.store:FactStore.compact": "host: index maintenance",
    "runtime.facts.vector_queries:insert_vector": "host: embeddings of screened facts",
    "runtime.facts.vector_queries:insert_vectors": "host: embeddings of screened facts",
    "runtime.facts.session_index:SessionIndex.write": "screened: session summaries drop what the "
    "scanner flags (session_index: scan) from text the loop already redacted",
    "runtime.providers.postgres:PostgresFactProvider._insert": "screened: NewFact redacts and "
    "PostgresFactProvider._screened scans before inserting",
    "runtime.providers.postgres:PostgresFactProvider._retain": "screened: as _insert",
    "runtime.providers.postgres:PostgresFactProvider._tombstone": "screened: reason redacted "
    "(validation.reason)",
    "runtime.providers.postgres:PostgresFactProvider._hold_on_read": "screened: a stored fact "
    "flagged on read, moved to quarantine",
    "runtime.providers.postgres:_insert_held": "screened: a flagged write, held apart",
    "runtime.providers.postgres:migrate": "host: schema version",
    "runtime.owner.fact_verbs:export": "host: the owner's export of stored (screened) facts to "
    "the file the owner names",
    # -- continuity -----------------------------------------------------------------------------
    "runtime.continuity.state_folder:StateFolder.write": "screened: ContinuityStore screens and "
    "redacts every focus, plan and goal text (log_knowledge_gap's goals included) before its "
    "books write; the handoff is rendered from those; the ledger holds the user's messages, "
    "redacted by the loop",
    "runtime.continuity.retention:pin_sessions": "host: session ids pinned as evidence",
    "runtime.owner.continuity_verbs:_migrate": "screened: each CrewHaus file is scanned and "
    "redacted (_screened_copy) before it is copied",
    # -- wiki -----------------------------------------------------------------------------------
    "runtime.wiki.folder:WikiFolder.write_article": "screened: WikiStore._write redacts the "
    "draft and scans the article (wiki_write and log_knowledge_gap's drafts) before writing",
    "runtime.wiki.folder:WikiFolder.keep_version": "host: the previous version of an article "
    "that was screened when written",
    # -- sessions, dream, research ----------------------------------------------------------------
    "runtime.events:SessionLog.append": "host: the session log records what happened (payloads "
    "redacted and made valid Unicode); it is evidence, framed when replayed, never instructions",
    "runtime.events:rewrite_log": "host: erasure's redaction of a log, sealed again",
    "runtime.dream.state:write_state": "host: the dream schedule's own record (times, counts)",
    "runtime.hosts.research:_write_report": "host: a report for the owner, never read into a "
    "prompt; the text in it is the sessions' logged (redacted) replies",
    # -- erasure --------------------------------------------------------------------------------
    "runtime.erasure.erase:_write_receipt": "host: counts and a keyed hash, never the subject",
    "runtime.erasure.fact_tier:_erase_rows": "host: deletions and redactions of the subject",
    "runtime.erasure.file_tier:_redact_file": "host: the subject redacted from a file",
    "runtime.erasure.file_tier:redact_files": "host: the subject redacted from session logs",
    "runtime.providers.postgres_erasure:erase_in_database": "host: deletions of the subject",
    "runtime.providers.postgres_erasure:_redact_reasons": "host: the subject redacted",
    # -- tools and the rest ---------------------------------------------------------------------
    "runtime.builtin_tools:_write": "host: the agent's own work files in its workspace (the "
    "write tool refuses .specwire/); never read into a prompt but through a tool result",
    "runtime.serve.usage_ledger:UsageLedger.add": "host: token counts per tenant",
    "runtime.shell.launch:_write_proc": "host: the sandbox's own process settings",
    "runtime.tool_schemas:main": "host: generated tool schemas (a build step)",
}

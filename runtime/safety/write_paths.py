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

# Keys: ``module:function`` (or ``module:Class.method``), modules named within
# ``specwire.runtime``.
WRITE_PATHS: Final[dict[str, str]] = {
    # -- primitives: they write what their callers (listed below) give them ---------------------
    "fs.atomic:replace_atomically": "host: the atomic writer; its callers are listed",
    "fs.fenced:write_atomic": "host: the atomic writer; its callers are listed",
    "fs.keyfile:key_in": "host: a random key (evidence key, erasure receipt key)",
    "pg.migrations:migrate": "host: a component's schema and its version",
    # -- facts ----------------------------------------------------------------------------------
    "facts.sql.queries:insert": "screened: as insert_many",
    "facts.sql.queries:insert_many": "screened: NewFact redacts (facts.validation) and the "
    "store scans before inserting (FactStore._screened: flagged writes are held)",
    "facts.sql.queries:insert_with_id": "screened: as insert_many",
    "facts.sql.queries:mark_superseded": "host: ids only",
    "facts.sql.queries:edit_live": "screened: FactStore.update screens the new text (a "
    "flagged one is held, nothing edited) and NewFact redacts it; the old version is a copy "
    "of a stored fact",
    "facts.sql.queries:sweep_expired": "host: tombstones of expired ids",
    "facts.sql.queries:tombstone": "screened: the reason is redacted (validation.reason); "
    "a reason is never read into a prompt",
    "facts.sql.quarantine:hold": "screened: a write the scanner flagged, held apart "
    "and never read into a prompt; redacted by NewFact",
    "facts.sql.quarantine:hold_stored": "screened: a stored fact flagged on read, "
    "moved to quarantine",
    "facts.sql.quarantine:mark_released": "host: the owner's release of an id",
    "facts.sql.restore:restore_facts": "host: a migration's copy of facts another store "
    "screened when they were written, through NewFact (redacted) again; recall screens them "
    "again on read (also the memory server's /v1/restore: the tenant's owner token only)",
    "facts.sql.restore:restore_held": "host: a migration's copy of writes another store's "
    "scanner held, kept apart as there",
    "facts.providers.postgres.restore:restore_facts": "host: as facts.sql.restore:restore_facts",
    "facts.providers.postgres.restore:restore_held": "host: as facts.sql.restore:restore_held",
    "facts.sql.schema:_retokenize": "host: search terms derived from stored facts",
    "facts.store:FactStore.compact": "host: index maintenance",
    "facts.sql.vectors:insert_vector": "host: embeddings of screened facts",
    "facts.sql.vectors:insert_vectors": "host: embeddings of screened facts",
    "facts.session_index:SessionIndex.write": "screened: session summaries drop what the "
    "scanner flags (session_index: scan) from text the loop already redacted",
    "facts.providers.postgres.writing:insert": "screened: NewFact redacts and the write paths "
    "scan (Binding.screened) before inserting",
    "facts.providers.postgres.writing:retain": "screened: as writing:insert",
    "facts.providers.postgres.updating:update": "screened: the new "
    "text is screened (held when flagged) and redacted by NewFact before the write; a vector "
    "of it",
    "facts.providers.postgres.updating:edit_live": "screened: as updating:update; "
    "the old version is a copy of a stored fact",
    "facts.providers.postgres.forgetting:tombstone": "screened: reason "
    "redacted (validation.reason)",
    "facts.providers.postgres.quarantine:hold_on_read": "screened: a "
    "stored fact flagged on read, moved to quarantine",
    "facts.providers.postgres.quarantine:insert_held": "screened: a flagged write, held apart",
    "facts.providers.postgres.schema:migrate": "host: schema version",
    "facts.providers.postgres.admin:mark_released": "host: an id, a rule name and a time",
    "facts.providers.postgres.sweeping:claim": "host: when a binding was last swept (a time)",
    "facts.providers.postgres.admin:PostgresImportSink.insert": "screened: an import's fact "
    "under its exported id, after the importer scanned it (facts.importing: flagged writes "
    "are held); NewFact redacts",
    "facts.providers.postgres.admin:PostgresImportSink.tombstone": "screened: an imported "
    "fact's tombstone; its reason checked by validation.reason (facts.importing)",
    "facts.providers.postgres.admin:link_superseded": "host: ids, and a reason redacted by "
    "validation.reason (consolidate) or the importer's own (facts.importing)",
    "owner.fact_verbs:export": "host: the owner's export of stored (screened) facts to "
    "the file the owner names",
    # -- continuity -----------------------------------------------------------------------------
    "continuity.retention:pin_sessions": "host: session ids pinned as evidence",
    # -- state documents (continuity, wiki, dream state) on either volume --------------------
    "fs.volume:FileVolume.write": "screened: through StateFolder.write, ContinuityStore "
    "screens and redacts every focus, plan and goal text (log_knowledge_gap's goals included) "
    "before its books write; the handoff is rendered from those; the ledger holds the user's "
    "messages, redacted by the loop. Through VolumeWikiFolder, as WikiFolder.write_article; "
    "through dream.state and retention, the host's own records",
    "pg.volume:PostgresVolume.write": "screened: the same callers as FileVolume.write hand it "
    "the same screened texts",
    "pg.volume:PostgresVolume.move": "host: paths of stored documents renamed (the trash)",
    "pg.volume:PostgresVolume.write_many": "host: a migration's copy of documents another "
    "volume holds (screened when they were written)",
    "owner.state_migration:FileSide.add": "host: a migration's copy of state documents the "
    "database holds (screened when they were written)",
    "owner.tier_migration:FileUsage.adopt": "host: a migration's copy of the database's token "
    "counts into a ledger file that counts nothing",
    "owner.state_verb:export_documents": "host: the database's state documents (screened "
    "when written) exported where the owner asks",
    "erasure.state_tier:_redact": "host: the subject redacted from state documents",
    "owner.continuity_verbs:_migrate": "screened: each CrewHaus file is scanned and "
    "redacted (_screened_copy) before it is copied",
    # -- wiki -----------------------------------------------------------------------------------
    # -- documents -------------------------------------------------------------------------------
    "documents.files:FileDocumentStore._write_data": "screened: an agent's memory_save is "
    "scanned first (documents.binding: a flagged save is held, nothing stored); every title, "
    "summary and text is redacted by documents.model; an owner's create/edit is the owner's "
    "own text",
    "documents.postgres:PostgresDocumentStore._update": "screened: as "
    "FileDocumentStore._write_data",
    "documents.postgres:PostgresDocumentStore.create": "screened: as FileDocumentStore._write_data",
    "documents.postgres:PostgresDocumentStore.remove": "host: a removal mark for an id",
    "documents.postgres:migrate_documents": "host: the documents table's schema",
    "owner.document_verbs:_export": "host: documents a store already holds (screened when "
    "written), exported where the owner asks",
    "wiki.folder:WikiFolder.write_article": "screened: WikiStore._write redacts the "
    "draft and scans the article (wiki_write and log_knowledge_gap's drafts, and the learning "
    "loop's study passes, runtime.learning.study, which write through WikiStore.write) before "
    "writing",
    "wiki.folder:WikiFolder.keep_version": "host: the previous version of an article "
    "that was screened when written",
    # -- sessions, dream, research ----------------------------------------------------------------
    "sessions.log:SessionLog.append": "host: the session log records what happened (payloads "
    "redacted and made valid Unicode); it is evidence, framed when replayed, never instructions",
    "sessions.log:rewrite_log": "host: erasure's redaction of a log, sealed again",
    "sessions.postgres:PostgresSessionLogs._append": "host: as sessions.log:SessionLog.append, "
    "one sealed row per event in session_log_events",
    "sessions.postgres:PostgresSessionLogs.key": "host: a random key sealing a tenant's logs",
    "sessions.transfer:write_file_log": "host: a migration's copy of a log the database holds "
    "(events as sealed by sessions.postgres:PostgresSessionLogs._append, verified whole), "
    "sealed again with the folder's key",
    "sessions.transfer:insert_database_log": "host: a migration's copy of a log file (events "
    "as sealed by sessions.log:SessionLog.append, verified whole), sealed again with the "
    "tenant's key",
    "dream.state:write_state": "host: the dream schedule's own record (times, counts)",
    "hosts.research:_write_report": "host: a report for the owner, never read into a "
    "prompt; the text in it is the sessions' logged (redacted) replies",
    # -- erasure --------------------------------------------------------------------------------
    "erasure.erase:_write_receipt": "host: counts and a keyed hash, never the subject",
    "erasure.fact_tier:_erase_rows": "host: deletions and redactions of the subject",
    "erasure.file_tier:_redact_file": "host: the subject redacted from a file",
    "erasure.file_tier:redact_files": "host: the subject redacted from session logs",
    "erasure.postgres_tier:erase_in_database": "host: deletions of the subject",
    "erasure.postgres_tier:_redact_reasons": "host: the subject redacted",
    "erasure.postgres_logs_tier:redact_session_logs": "host: the subject redacted from session "
    "log rows, sealed again",
    "erasure.postgres_tier:_redact_documents": "host: stored document text with the subject "
    "redacted",
    # -- evals ----------------------------------------------------------------------------------
    "evals.history:append_history": "host: one JSON line per codegen eval run, appended to "
    "the owner's --history file (or <--html stem>.history.jsonl): the graders' counts and "
    "values, the scenario names and paths of the owner's scenario files and recall timings; "
    "no model or user text",
    "evals.report_file:write_report": "host: the owner's --html report, written atomically: "
    "the run's and the history's counts and timings and fact creation times; every text in it "
    "(scenario names, paths) is escaped (evals.charts.text), and the page has no script and a "
    "CSP of default-src 'none'",
    # -- tools and the rest ---------------------------------------------------------------------
    "tools.builtin:_write": "host: the agent's own work files in its workspace (the "
    "write tool refuses .specwire/); never read into a prompt but through a tool result",
    "hosts.http.usage_ledger:UsageLedger._change": "host: token counts per tenant (turns, and "
    "the dream's model phases: calls, tokens, cost)",
    "hosts.http.usage_postgres:PostgresUsageLedger.add": "host: token counts per tenant",
    "usage.database:adopt_row": "host: a migration's copy of a ledger file's token counts "
    "into a row that counts nothing",
    "hosts.http.usage_postgres:PostgresUsageLedger.add_dream": "host: the dream's calls, "
    "token counts and cost per tenant",
    "hosts.http.slack_dedup_postgres:PostgresSeenEvents.first_time": "host: Slack event ids "
    "and channel timestamps, for retry de-duplication",
    "hosts.http.usage_postgres:PostgresUsageLedger._admit": "host: a turn's reservation "
    "(token counts, a random ticket, the worker's key)",
    "hosts.http.usage_postgres:_own": "host: this worker's reservations written again under "
    "its new key (token counts, tickets)",
    "tools.shell.launch:_write_proc": "host: the sandbox's own process settings",
    "tools.schemas:main": "host: generated tool schemas (a build step)",
}

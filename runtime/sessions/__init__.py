"""Session logs: sealed JSONL events, one file per session."""

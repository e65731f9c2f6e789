"""Facts in PostgreSQL (full text + optional pgvector)."""

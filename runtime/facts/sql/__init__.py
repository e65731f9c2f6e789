"""The fact store's SQLite schema and statements."""

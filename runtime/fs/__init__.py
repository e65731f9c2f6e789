"""File safety: atomic replacement, race-free resolution beneath a root, safe opens, locks."""

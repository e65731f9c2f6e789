"""PostgreSQL plumbing every tier kept in the database shares: connection pools
(``pool.py``) and versioned forward migrations per component (``migrations.py``).

psycopg (3) and psycopg_pool are imported when a pool is opened, never at import. Nothing here
resolves a secret: callers pass a resolved connection string (the hosts and ``wire_memory``
resolve ``memory.dsn``) and tiers are handed the pool they use.
"""

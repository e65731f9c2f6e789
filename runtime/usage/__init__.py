"""A tenant's usage ledger as data: the turns' totals and the dream's (``totals``), the file a
ledger is kept in and how it reads (``files``), and its row in PostgreSQL (``database``). The
hosts write ledgers (``runtime.hosts.http.usage_ledger``, ``usage_postgres``); the owner's
``codegen memory usage`` reads them through this package."""

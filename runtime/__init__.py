"""specwire runtime: what generated bundles run.

Bundles import from ``specwire.runtime.bundle`` only (the pinned bundle interface). The map of
the packages below and what may import what is docs/architecture.md. Importing this package
loads nothing: no compiler dependency and no store is ever on its import path.
"""

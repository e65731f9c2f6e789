"""MCP tool servers (``mcp_servers`` in a spec): their tools offered to the model.

``config.py`` reads a bundle's ``MCP_SERVERS`` literal (secrets are ``SecretRef``s resolved at
start), ``connection.py`` holds the servers' sessions open on one background event loop (the
official ``mcp`` SDK's client), ``tools.py`` turns each listed tool into a ``Tool`` named
``mcp__<server>__<tool>``, and ``wiring.py`` connects them all at start under a deadline.
"""

"""The HTTP hosts of the per-turn targets: ``agent.py serve`` for channel and managed bundles.

Starlette apps served by uvicorn (the ``specwire[serve]`` extra). Each request's turn runs in a
worker thread through the same ``run_turn`` the console adapters use, so memory wiring, the
conversation lock and the session logs are the console's, unchanged.
"""

# How long a stopping server lets requests in flight and background turns finish.
DRAIN_S = 120.0

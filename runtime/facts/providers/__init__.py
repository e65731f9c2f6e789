"""Fact providers beyond the embedded store: the HTTP memory contract, its client and server.

``http_contract``  the versioned JSON contract (``/v1/...``): bodies, limits, the error envelope.
``http_client``    ``HttpFactProvider``: a ``FactProvider`` speaking that contract (httpx).
``http_server``    ``memory_app``: any ``FactProvider`` served over that contract (Starlette), and
                   the ``specwire-memory-server`` command serving local stores per tenant.
``errors``         what a remote provider raises (auth, scope, unavailable, uncertain...).
"""

"""The router over several fact providers (``memory.providers``: the primary first).

``router``       ``FactRouter``: fan-out recall with per-provider deadlines, re-checks, fusion;
                 writes, reads and tier notes to the primary.
``rerank``       reciprocal-rank fusion across providers, duplicates merged by fingerprint.
``diagnostics``  one sanitized line per failing provider, drained by the loop once per turn.
``connect``      the providers a fragment names, connected for one wiring.
"""

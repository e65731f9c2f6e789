"""The fact-provider conformance suite, shipped with the package so any provider can run it.

``python -m specwire.runtime.facts.conformance --provider yourpackage.module:factory`` runs every
case against targets your factory makes (``target.py`` says what a target is);
``--url URL --token-env NAME`` runs them against a running memory service. pytest is not
needed; ``tests/conformance`` runs the same cases under pytest on the built-in backends. The
cases live in ``provider_cases``, ``theme_cases`` (Remem's themes), ``scope_cases``,
``tier_cases`` and ``admin_cases``; ``suite.coverage()`` maps Crewship's edge-case catalogue and
Remem's themes to them. docs/memory.md#conformance is the guide for provider authors.
"""

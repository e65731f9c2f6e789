"""Continuity evals: scripted multi-session scenarios run against a built bundle, graded
deterministically (``codegen eval``).

One job per module: ``tokens`` (what "covered" means), ``scenario`` (reading scenario files),
``transcript`` (a sample's session logs, read back), ``proofs`` (the plan steps marked proven,
checked again), ``graders`` (the five measures), ``agent`` (running a bundle's ``agent.py`` in an
isolated folder), ``runner`` (samples and memory modes), ``report`` (table and JSON) and
``command`` (the command line ``codegen eval`` hands its arguments to). For ``--html``:
``charts`` (SVG charts), ``report_html`` (the eval and dream sections and the page, also used by
the memory console), ``history`` (the append-only results history) and ``report_file`` (what
``--html`` writes).
"""

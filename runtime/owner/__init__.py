"""The owner's view of an agent's memory: ``codegen memory …`` (also ``python -m runtime.owner``).

Reads and changes the stores of a state directory the way the runtime does (the same store
classes, locks and fences), for the person who owns the agent rather than for the agent.
"""

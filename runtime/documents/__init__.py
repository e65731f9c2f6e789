"""Document memory (OpenComputer's ``documentMemory``): whole documents an owner creates and an
agent reads, and may replace, through the spec's ``memory.documents`` bindings.

- ``model``: a document, its limits and the errors every store raises;
- ``store``: the ``DocumentStore`` protocol; ``files`` (the file backend, under the agent's
  ``.specwire/documents/<spec>/``) and ``postgres`` implement it with the same semantics;
- ``binding``: one session's bindings, the revisions its render saw, and the outcomes of
  ``memory_save``, ``memory_read`` and ``memory_list``; ``prompt``: what the render shows;
- ``tools``: the three tools; ``wiring``: ``wire_documents``, called by ``wire_memory``.
"""

"""A read-only Markdown vault as a fact provider (``memory.providers`` backend ``markdown``).

``frontmatter``  the closed YAML subset notes' front matter is read with.
``notes``        a note (title, aliases, tags, summary, type, scope, body, wikilinks) and
                 the backlinks between notes.
``scan``         walking the folder without leaving it or following a symlink.
``provider``     ``MarkdownVaultProvider``: BM25 (and the spec's embedder) over the notes,
                 refreshed from their modification times at every recall.
"""

"""Erasure (the right to be forgotten): remove a subject from every tier the runtime keeps.

``erase_subject`` is the entry point (``codegen memory erase``); ``subject`` matches and redacts,
``fact_tier`` erases fact stores, ``file_tier`` redacts and renames files and session logs,
``verification`` searches every byte afterwards.
"""

"""Builtin tools: file tools, grep, the sandboxed shell, fetch, and the tool schemas."""

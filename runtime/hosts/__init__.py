"""Hosts: what a generated bundle starts. One module per target."""

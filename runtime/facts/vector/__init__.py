"""Cosine recall: the vector matrix, sign sketches, cuts and snapshot."""

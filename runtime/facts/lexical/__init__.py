"""BM25 recall: the in-memory index, its pruning, snapshot and vocabulary."""

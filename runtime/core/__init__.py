"""The contract and the primitives every layer shares: fragment, errors, ids, paths, secrets,
tenancy, seams, tool types."""

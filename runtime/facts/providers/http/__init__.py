"""The HTTP memory contract and its client."""

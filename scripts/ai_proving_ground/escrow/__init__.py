"""Escrow: the baseline and judging-tree hashes held outside the bed, checked by a stdlib-only verifier."""

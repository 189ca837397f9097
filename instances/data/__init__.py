"""Bundled inputs: the refund example and the default suite."""

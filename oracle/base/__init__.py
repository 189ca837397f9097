"""Exact times and the one tolerance: how the judge compares numbers, the oracle's bottom room.

Imports nothing else of the oracle; every other room compares times through it.
"""

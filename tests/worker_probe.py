"""Run on a worker (imported there by name): it imports nothing of peakopt itself."""

from __future__ import annotations

import sys


def modules() -> list[str]:
    """The modules the worker process has imported."""
    return sorted(sys.modules)

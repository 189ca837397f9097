"""Shared test settings: hypothesis profiles."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI machines are noisy: no per-example deadline, and a fixed budget.
settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

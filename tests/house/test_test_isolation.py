"""The tests leave the user's own files alone."""

from __future__ import annotations

import tempfile
from pathlib import Path

from peakopt.evals.references import cache_dir


def test_the_references_cache_of_a_test_run_is_not_the_users() -> None:
    # a test once wrote into the real ~/.cache/peakopt (the Inspect task's reference cache)
    where = cache_dir().resolve()
    assert not where.is_relative_to(Path.home() / ".cache")
    assert where.is_relative_to(Path(tempfile.gettempdir()).resolve())

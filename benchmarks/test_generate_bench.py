"""Generation speed: the default suite (target < 10 s) and 10,000-task large workflows (target < 5 s).

Run with ``python -m pytest benchmarks/test_generate_bench.py``; each timed call is
checked afterwards (the default suite byte for byte, the large shapes).
"""

from __future__ import annotations

from typing import Any

import pytest

from peakopt.instances import LargeSpec, bundled, generate_suite, large_suite, prompt_records
from peakopt.instances.compact import compact_json
from peakopt.models import Suite


def test_default_suite(benchmark: Any) -> None:
    suite = benchmark.pedantic(lambda: compact_json(generate_suite()), rounds=3, iterations=1)
    assert suite == bundled("default").read_text(encoding="utf-8")
    assert benchmark.stats.stats.max < 10


@pytest.mark.parametrize("kind", ["layered", "rcpsp"])
def test_large_10000_tasks(benchmark: Any, kind: str) -> None:
    suite: Suite = benchmark.pedantic(
        lambda: large_suite(LargeSpec(kind=kind, tasks=10_000)), rounds=3, iterations=1
    )
    (workflow,) = suite.workflows
    assert len(workflow.tasks) == 10_000
    assert len(workflow.edges) >= 9_000
    assert benchmark.stats.stats.max < 5


def test_prompts_for_the_default_suite(benchmark: Any) -> None:
    suite = generate_suite()
    records = benchmark.pedantic(lambda: list(prompt_records(suite)), rounds=3, iterations=1)
    assert len(records) == 900

"""Reading a 1 MB adversarial LLM answer (issue 12 item 17: linear time, uncapped by position).

Run with ``python -m pytest benchmarks/test_extract_speed.py``. Each answer is
1 MB of one kind of bracket soup with the real answer at its very end; the
benchmark checks after the timed call that the schedule read is the answer.
Extraction is one pass over the text, so the time grows linearly with it:
``test_the_time_grows_linearly`` compares 0.25 MB and 1 MB of the worst soup.

Measured (best of 3, 2 cores, other suites running): 0.13 s (quotes) to
0.64 s (brackets of every kind) per megabyte; see the README, "Raw LLM responses".
"""

from __future__ import annotations

import json
import time

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.oracle.answers.parse import Parsed, parse_response

STEPS = ("lookup_order", "fraud_score", "history_scan", "policy_search", "decide")
SAFE = {"lookup_order": 0.0, "fraud_score": 0.0, "history_scan": 4.8, "policy_search": 0.0, "decide": 8.0}
ANSWER = "\n\nFinal answer:\n```json\n" + json.dumps(SAFE) + "\n```"
SIZE = 1_000_000

#: What fills the megabyte before the answer.
SOUPS = {
    "citations and links": "[12] see [3](https://example.org/a[1]) and [the note] ",
    "brackets of every kind": "[x] {y} [[1], [2]] [1-3] {note} ",
    "unclosed braces": "{ note ",
    "unclosed brackets": "[1, ",
    "deep nesting": "[{",
    "mismatched brackets": "{[}]",
    "broken objects": "{step: 1,} ",
    "quotes and apostrophes": "it's \"quoted [a] 'x' ",
}


def soup(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size] + ANSWER


@pytest.mark.parametrize("name", SOUPS)
def test_a_megabyte_of_bracket_soup_before_the_answer(benchmark: BenchmarkFixture, name: str) -> None:
    text = soup(SOUPS[name])
    found = benchmark.pedantic(parse_response, args=(text, STEPS), rounds=3, iterations=1)
    assert isinstance(found, Parsed) and found.values == SAFE and not found.problems


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        parse_response(text, STEPS)
        best = min(best, time.perf_counter() - began)
    return best


def test_the_time_grows_linearly() -> None:
    unit = SOUPS["mismatched brackets"]
    quarter, whole = _seconds(soup(unit, SIZE // 4)), _seconds(soup(unit))
    assert whole < 8 * quarter  # linear: about 4x; a quadratic scan would take about 16x

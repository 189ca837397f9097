"""Which part of a response is the answer: reasoning blocks, several schedules, citations, truncation."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from peakopt.instances import load
from peakopt.oracle.answers.answer import Ambiguous, Reading, choose_reading, split_reasoning
from peakopt.oracle.answers.extract import Decoded
from peakopt.oracle.answers.parse import Parsed, parse_response
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.score_rows import score_prediction, score_record

SUITE = load("bundled:refund")
STEPS = tuple(SUITE.workflows[0].index)

#: Prose that holds no bracket, quote, tag or colon (so it can neither hold JSON nor label one as final).
PROSE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ,.!?\n-0123456789", max_size=40)
TIMES = st.decimals(min_value=0, max_value=100, places=2).map(float)
SCHEDULES = st.fixed_dictionaries(dict.fromkeys(STEPS, TIMES))
TAGS = st.sampled_from(("think", "thinking", "reasoning", "THINK", "Thinking"))


def read(text: str) -> Parsed | Violation:
    return parse_response(text, STEPS)


def values(text: str) -> dict[str, float]:
    parsed = read(text)
    assert isinstance(parsed, Parsed), parsed
    return parsed.values


@given(SCHEDULES, SCHEDULES, TAGS, st.lists(PROSE, min_size=5, max_size=5), st.integers(0, 2))
def test_a_schedule_in_the_reasoning_never_wins_over_the_answer(
    draft: dict[str, float], final: dict[str, float], tag: str, prose: list[str], shape: int
) -> None:
    p = prose
    d, f = json.dumps(draft), json.dumps(final)
    text = [
        f"{p[0]}<{tag}>{p[1]}{d}{p[2]}</{tag}>{p[3]}{f}{p[4]}",  # a closed block
        f"{p[0]}{d}{p[1]}</{tag}>{p[2]}{f}{p[3]}",  # the API dropped the opening tag
        f"{p[0]}{f}{p[1]}<{tag}>{p[2]}{d}{p[3]}",  # reasoning cut off after the answer
    ][shape]
    assert values(text) == final


@given(SCHEDULES, TAGS, PROSE, st.booleans())
def test_a_schedule_in_the_reasoning_counts_when_the_answer_has_none(
    schedule: dict[str, float], tag: str, prose: str, closed: bool
) -> None:
    text = f"<{tag}>{prose} {json.dumps(schedule)} {prose}" + (f"</{tag}>{prose}" if closed else "")
    parsed = read(text)
    assert isinstance(parsed, Parsed) and parsed.values == schedule and parsed.reasoning


@st.composite
def cited(draw: st.DrawFn, answer: str) -> str:
    """Prose with many citations, links and bracketed asides at random places, and the answer among them."""
    aside = st.sampled_from(
        ("[{n}]", "[{n}](https://example.com/{n})", "[see note {n}]", "({n})", "[{n}, {n}]")
    )
    words = draw(st.lists(PROSE, min_size=1, max_size=30))
    for n in range(draw(st.integers(0, 150))):
        words.insert(draw(st.integers(0, len(words))), draw(aside).format(n=n + 1))
    words.insert(draw(st.integers(0, len(words))), answer)
    return " ".join(words)


@pytest.mark.slow
@given(st.data(), SCHEDULES)
def test_citations_and_links_anywhere_never_hide_the_answer(
    data: st.DataObject, schedule: dict[str, float]
) -> None:
    assert values(data.draw(cited(json.dumps(schedule)))) == schedule


@given(SCHEDULES, SCHEDULES, st.lists(PROSE, min_size=3, max_size=3), st.booleans())
def test_different_schedules_are_ambiguous_unless_one_is_marked_final(
    a: dict[str, float], b: dict[str, float], prose: list[str], mark_first: bool
) -> None:
    assume(a != b)
    plain = f"{prose[0]}{json.dumps(a)}{prose[1]}{json.dumps(b)}{prose[2]}"
    found = read(plain)
    assert isinstance(found, Violation) and found.kind == "ambiguous"
    label = "\nFinal answer: "
    marked = (
        f"{prose[0]}{label}{json.dumps(a)}{prose[1]}{json.dumps(b)}{prose[2]}"
        if mark_first
        else f"{prose[0]}{json.dumps(a)}{prose[1]}{label}{json.dumps(b)}{prose[2]}"
    )
    assert values(marked) == (a if mark_first else b)


@given(SCHEDULES, st.lists(PROSE, min_size=2, max_size=6))
def test_identical_repeats_are_not_ambiguous(schedule: dict[str, float], prose: list[str]) -> None:
    assert values(json.dumps(schedule).join(prose)) == schedule


@given(SCHEDULES, PROSE, st.data())
def test_an_answer_cut_anywhere_inside_its_json_is_never_scored(
    schedule: dict[str, float], prose: str, data: st.DataObject
) -> None:
    answer = json.dumps({"schedule": [{"id": k, "start": v} for k, v in schedule.items()]})
    cut = data.draw(st.integers(1, len(answer) - 1))
    row = score_record({"workflow": "refund", "response": prose + answer[:cut]}, SUITE)
    assert not row.valid
    assert set(row.reason_kinds) <= {"truncated", "parse"}, row.reasons  # never a broken dependency


def test_split_reasoning_shapes() -> None:
    assert split_reasoning("a<think>b</think>c") == split_reasoning("a<THINK >b</ think>c")
    parts = split_reasoning("a<think>b<think>c</think>d</think>e")  # nested: one block
    assert (parts.answer, parts.reasoning) == ("a\ne", "b<think>c</think>d")
    parts = split_reasoning("r1</reasoning>a<thinking>r2")
    assert (parts.answer, parts.reasoning) == ("a", "r1\nr2")
    assert split_reasoning("no tags").answer == "no tags"


def test_choose_passes_the_mark_of_a_quotation_to_what_it_quotes() -> None:
    def reading(value: frozenset[int], start: int) -> Reading[frozenset[int]]:
        return Reading(value, Decoded({}, start, start + 1))

    text = "x" * 10 + "\nFinal answer: " + "y"
    readings = [
        reading(frozenset({1, 2}), 0),
        reading(frozenset({3}), 5),
        reading(frozenset({1}), len(text) - 1),
    ]
    chosen = choose_reading(readings, text, key=lambda v: v, parts=lambda v: frozenset(v))
    assert isinstance(chosen, Reading) and chosen.value == {1, 2}  # {1} (marked) quotes {1, 2}
    assert isinstance(choose_reading(readings[:2], text, key=lambda v: v), Ambiguous)


def test_plan_score_follows_the_same_rule() -> None:
    truth = {"decide": ["lookup_order", "fraud_score", "history_scan", "policy_search"]}
    wrong = {"decide": ["lookup_order"]}

    def plan(text: str) -> list[str]:
        return score_prediction({"workflow": "refund", "response": text}, SUITE).reason_kinds

    assert plan(f"<think>{json.dumps(wrong)}</think>{json.dumps(truth)}") == []
    assert plan(f"{json.dumps(wrong)} then {json.dumps(truth)}") == ["ambiguous"]
    assert plan(f"{json.dumps(wrong)} then\n## Final\n{json.dumps(truth)}") == []
    assert plan('{"dependency_structure": {"decide": ["lookup_order"') == ["truncated"]

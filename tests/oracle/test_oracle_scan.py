"""The one-pass scan for JSON-looking spans, and decoding them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.oracle.answers.extract import find_json
from peakopt.oracle.answers.scan import MAX_SPAN_DEPTH, Span, scan


def spans(text: str) -> list[str]:
    return [text[s.start : s.end] for s in scan(text)]


@pytest.mark.parametrize(
    "prose",
    [
        "[1] [2, 3] [12](https://example.com/a[1]) [the note] [1-3] [see: below] {note} {{ var }}",
        "it's [Bob's] 'quoted' \"a [b\" {stray",
        "] } ]] unmatched closers",
    ],
)
def test_prose_in_brackets_is_no_span(prose: str) -> None:
    assert spans(prose) == []
    assert spans(prose + ' {"a": 1}') == ['{"a": 1}']


def test_json_shapes_are_spans() -> None:
    text = 'a {"a": 1} b [[1, 2]] c [{"id": 1}] d {a: 1} e [["x", 0]] f {"k": {"j": [1]}}'
    assert spans(text) == ['{"a": 1}', "[[1, 2]]", '[{"id": 1}]', "{a: 1}", '[["x", 0]]', '{"k": {"j": [1]}}']
    assert spans('["a", "b"] [1] {}') == []  # no mapping and no pair can be in them


def test_strings_and_comments_hide_brackets_inside_json_only() -> None:
    text = '{"a": "] }", // a ] comment\n "b": /* } */ 2, # ]\n "c": \'}\'}'
    assert spans(text) == [text]
    assert spans('[see \'here] {"a": 1}') == ['{"a": 1}']  # an apostrophe in prose opens no string


def test_a_mismatched_closer_closes_what_it_matches() -> None:
    assert spans('{"a": [1, 2}, "b": 1}') == ['{"a": [1, 2}']
    assert spans('[{"a": 1]') == ['[{"a": 1]']  # the object inside is abandoned


def test_spans_nested_too_deeply_are_skipped_not_their_insides() -> None:
    deep = "[" * MAX_SPAN_DEPTH + '{"a": 1}' + "]" * MAX_SPAN_DEPTH
    found = scan(deep)
    assert [deep[s.start : s.end] for s in found] == [deep[1:-1]]  # the outermost is one too deep


def test_duplicate_keys_are_found_in_leaves_and_nested_objects() -> None:
    assert scan('{"a": 1, "b": 2, "a": 3}')[0].duplicates == {"a"}
    assert scan('{"x": {"a": 1, "a": 2}, "y": [1]}')[0].duplicates == {"a"}
    assert scan("{'a': 1, 'a': [2]}")[0].duplicates == {"a"}
    assert scan('{"a": 1, "b": "a": 2}')[0].duplicates == frozenset()


def test_a_truncated_span_knows_what_closes_it() -> None:
    (span,) = scan('answer: {"s": [{"id": "a", "start": 1}, {"id": "b", "st')
    assert span.closers == "}]}" and span.cut_string is not None and len(span.inner) == 1
    found = find_json('answer: {"s": [{"id": "a", "start": 1}, {"id": "b", "st')
    assert found[0].value == {"s": [{"id": "a", "start": 1}, {"id": "b"}]} and found[0].truncated
    assert found[1].value == {"id": "a", "start": 1} and found[1].truncated  # a piece of a cut value


@pytest.mark.parametrize(
    ("cut", "value"),
    [
        ('{"a": 0, "b": 4.', {"a": 0}),
        ('{"a": 0, "b": ', {"a": 0}),
        ('{"a": 0, "b"', {"a": 0}),
        ('{"a": 0, "b": "x', {"a": 0}),
        ("[[1, 0], [2, 2.", [[1, 0], [2]]),
        ('{"a": 0, "b": 4.5', {"a": 0, "b": 4.5}),  # "4.5" may be cut from "4.55": flagged truncated
    ],
)
def test_a_cut_value_is_dropped_not_read(cut: str, value: object) -> None:
    (found,) = find_json(cut)
    assert found.value == value and found.truncated and not found.repaired


def test_a_bracket_of_prose_never_closed_does_not_swallow_the_answer() -> None:
    text = 'Steps [1, 2 are cheap.\nFinal answer: {"a": 1, "b": 2}'
    found = find_json(text)
    assert [d.value for d in found if not d.truncated] == [{"a": 1, "b": 2}]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=15,
)
PROSE = st.text(alphabet="abc xyz.,!?\n0123456789-()", max_size=30)


@given(st.dictionaries(st.text(max_size=5), JSON, min_size=1, max_size=5), PROSE, PROSE, st.booleans())
def test_any_json_object_in_prose_is_found_whole(
    value: dict[str, object], before: str, after: str, indent: bool
) -> None:
    text = before + " " + json.dumps(value, indent=2 if indent else None) + " " + after
    found = find_json(text)
    assert found and found[0].value == value and not found[0].truncated and not found[0].repaired


def test_spans_are_outermost_in_text_order_with_their_insides() -> None:
    (outer,) = scan('{"a": {"b": 1}, "c": [[1, 2]]}')
    assert isinstance(outer, Span) and [(s.start, s.end) for s in outer.inner] == [(6, 14), (21, 29)]

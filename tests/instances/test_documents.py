"""JSON text as documents: several in one file, each named by its line; nesting refused past a depth."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.instances import InputError, load, parse_catalog, read_text
from peakopt.instances.documents import MAX_DEPTH, TOO_DEEP, decode_all, decode_one, documents, too_deep
from peakopt.instances.machine_files import load_machines
from peakopt.instances.records import read_records, read_references


def nested(depth: int, kind: str = "[") -> str:
    """A JSON value nesting arrays (or objects) ``depth`` levels deep."""
    if kind == "[":
        return "[" * depth + "]" * depth
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


def test_pretty_printed_documents_are_read_in_turn_with_their_lines() -> None:
    first, second = {"id": "a", "n": [1, 2]}, {"id": "b"}
    text = json.dumps(first, indent=2) + "\n" + json.dumps(second, indent=2) + json.dumps(second)
    found = list(documents(text))
    assert [d.data for d in found] == [first, second, second]
    assert [d.line for d in found] == [1, 8, 10]  # the third starts on the line where the second ends
    assert all(d.error is None for d in found)


def test_a_torn_line_does_not_hide_the_lines_after_it() -> None:
    found = list(documents('{"a": 1\n{"b": 2}\n\nnope\n[3]\n'))
    assert [(d.line, d.data) for d in found] == [(1, None), (2, {"b": 2}), (4, None), (5, [3])]
    assert found[0].error == "not valid JSON: Expecting ',' delimiter at line 2 column 1"
    assert found[2].error == "not valid JSON: Expecting value at column 1"


def test_lines_count_only_newlines() -> None:
    # U+2028 inside a string is a line break for str.splitlines but not for JSON Lines
    text = '{"a": "x\u2028y"}\n{"b": 1}\n'
    assert [d.line for d in documents(text)] == [1, 2]


@given(st.integers(min_value=1, max_value=3 * MAX_DEPTH), st.sampled_from("[{"))
def test_nesting_past_the_limit_is_refused_at_any_depth(depth: int, kind: str) -> None:
    (document,) = documents(nested(depth, kind))
    if depth <= MAX_DEPTH:
        assert document.error is None and not too_deep(document.data)
    else:
        assert document.error == TOO_DEEP


def test_nesting_past_the_recursion_limit_is_refused_not_raised() -> None:
    text = '{"ok": 1}\n' + nested(100_000) + '\n{"ok": 2}\n'
    found = list(documents(text))
    assert [(d.line, d.data, d.error) for d in found] == [
        (1, {"ok": 1}, None),
        (2, None, TOO_DEEP),
        (3, {"ok": 2}, None),
    ]


def test_decode_all_names_the_line_once() -> None:
    with pytest.raises(InputError) as caught:
        decode_all('{"a": 1}\n' + nested(5000) + "\n", "x.jsonl", by_line=True)
    assert str(caught.value) == f"x.jsonl: line 2: {TOO_DEEP}"
    with pytest.raises(InputError) as caught:
        decode_all('{"a": 1}\n\n{"b": }\n', "x.json")
    assert str(caught.value) == "x.json: line 3: not valid JSON: Expecting value at column 7"
    assert str(caught.value).count("line") == 1


def test_a_lone_document_is_named_by_the_file() -> None:
    with pytest.raises(InputError) as caught:
        decode_all('{\n  "a": ,\n}', "x.json")
    assert str(caught.value) == "x.json: not valid JSON: Expecting value at line 2 column 8"
    with pytest.raises(InputError, match="holds no JSON document"):
        decode_all("  \n", "x.json")


def test_decode_one_refuses_a_second_document() -> None:
    assert decode_one(' {"a": 1} ', "c.json") == {"a": 1}
    with pytest.raises(InputError, match=r"c.json: line 2: a second JSON document"):
        decode_one('{"a": 1}\n{"a": 2}', "c.json")


READERS = {
    "workflow": lambda p: load(p),
    "JSON Lines": lambda p: load(p, format="jsonl"),
    "PeakBench context": lambda p: load(p, format="rasc"),
    "machine file": load_machines,
    "catalog": lambda p: parse_catalog(read_text(p), p),
    "references": read_references,
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_every_reader_says_nested_too_deeply(
    tmp_path: Path, reader: Callable[[Path], object], depth: int
) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"steps": ' + nested(depth) + "}\n")
    with pytest.raises(InputError, match=re.escape(TOO_DEEP)):
        reader(path)


def test_records_say_nested_too_deeply_and_go_on(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"workflow": "w"}\n' + nested(MAX_DEPTH + 1, "{") + '\n{"workflow": "v"}\n')
    assert [(r.line, r.error) for r in read_records(path)] == [(1, None), (2, TOO_DEEP), (3, None)]

"""--by any field: a row's own fields and the records' labels (a temperature, a prompt variant)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st
from score_helpers import SAFE

from peakopt.cli.main import cli
from peakopt.instances.records import write_jsonl
from peakopt.oracle.tables.aggregate import aggregate, aggregate_plans
from peakopt.oracle.tables.score_rows import LABEL_LENGTH, READ_KEYS, STRUCTURE_FIELDS, labels


def _answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    records = [
        {"workflow": "refund", "source": "m", "starts": SAFE, "temperature": 0.0, "variant": "a"},
        {"workflow": "refund", "source": "m", "starts": SAFE, "temperature": 0.7, "variant": "a"},
        {"workflow": "refund", "source": "m", "response": "no idea", "temperature": 0.7, "variant": "b"},
    ]
    write_jsonl(path, records)
    return path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_score_groups_by_a_records_own_field_and_report_reads_it_back(tmp_path: Path) -> None:
    scores = tmp_path / "scores.jsonl"
    code, _, err = _run(
        "score", "bundled:refund", "-s", str(_answers(tmp_path)), "--by", "temperature", "-o", str(scores)
    )
    assert code == 0, err
    assert "0.7" in err  # the table's group
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [r["labels"] for r in rows] == [
        {"temperature": "0.0", "variant": "a"},
        {"temperature": "0.7", "variant": "a"},
        {"temperature": "0.7", "variant": "b"},
    ]
    code, out, err = _run("report", str(scores), "--by", "temperature,variant", "--json")
    assert code == 0, err
    groups = [(s["group"], s["records"], s["invalid"]) for s in json.loads(out.splitlines()[0])]
    assert groups == [
        ({"source": "m", "temperature": "0.0", "variant": "a"}, 1, 0),
        ({"source": "m", "temperature": "0.7", "variant": "a"}, 1, 0),
        ({"source": "m", "temperature": "0.7", "variant": "b"}, 1, 1),
    ]
    # a row's own one-valued fields group too: valid, reference_status, id...
    code, out, _ = _run("report", str(scores), "--by", "valid", "--json")
    by_valid = [(s["group"]["valid"], s["records"]) for s in json.loads(out.splitlines()[0])]
    assert by_valid == [("true", 2), ("false", 1)]


def test_a_field_no_row_has_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    scores = tmp_path / "scores.jsonl"
    code, _, err = _run(
        "score", "bundled:refund", "-s", str(_answers(tmp_path)), "--by", "temprature", "-o", str(scores)
    )
    assert code == 2
    assert "unknown field temprature" in err and "temperature" in err  # the labels are offered
    assert not scores.exists()
    code, _, err = _run(
        "stress", "bundled:refund", "-m", "serial", "--db", str(tmp_path / "r.db"), "--by", "x"
    )
    assert code == 2 and "unknown field x" in err and not (tmp_path / "r.db").exists()


def test_plan_rows_group_by_labels_too(tmp_path: Path) -> None:
    path = tmp_path / "plans.jsonl"
    deps = {"dependencies": {"decide": ["history_scan"]}}
    write_jsonl(path, [{"workflow": "refund", "source": "m", "run": "1", **deps}])
    code, out, err = _run("plan-score", "-t", "bundled:refund", "-p", str(path), "--by", "run", "--json")
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["labels"] == {"run": "1"}


@example({"setting": "context"})  # hypothesis found it: a key the oracle reads
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=150)),
        max_size=6,
    )
)
def test_labels_are_the_short_scalar_fields_the_oracle_does_not_read(record: dict[str, object]) -> None:
    found = labels({**record, "response": "x", "prompt": "p", "starts": {}, "id": "q"})
    assert not {"response", "prompt", "starts", "id"} & found.keys()
    for key, value in record.items():
        if key in found:
            assert value is not None and len(found[key]) <= LABEL_LENGTH
        else:
            # a key the oracle reads (``setting``, ``tier``...) is never a label, whatever its value
            assert (
                value is None or len(str(value)) > LABEL_LENGTH or key in READ_KEYS or key in STRUCTURE_FIELDS
            )


def test_the_library_groups_by_labels() -> None:
    assert aggregate([], ["anything"]) == [] and aggregate_plans([], ["anything"]) == []

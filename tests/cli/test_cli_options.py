"""Every numeric option of every command: a bad value is a usage error (exit 2) before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from peakopt.campaign.ranges import SECONDS_MAX, SEED_MAX
from peakopt.cli.main import cli

#: Values no numeric option takes: not finite, overflowing, negative, too large, not a number.
BAD = ["nan", "inf", "-inf", "1e300", "-1", "99999999999999999999", "many"]

# command line (OUT is the output, which must not appear), the numeric options it takes
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "solve": (
        ["solve", "bundled:refund", "-o", "OUT"],
        ["--time-limit", "--gap-limit", "--seed", "--workers", "--jobs", "--dask-local"],
    ),
    "stress": (
        ["stress", "bundled:refund", "-m", "serial", "--db", "OUT"],
        [
            "--time-limit",
            "--method-limit",
            "--seed",
            "--workers",
            "--jobs",
            "--dask-local",
            "--chunk",
            "--worst",
            "--search",
        ],
    ),
    "schedule": (["schedule", "bundled:refund", "-o", "OUT"], ["--seed"]),
    "plot": (
        ["plot", "bundled:refund", "--optimal", "-o", "OUT.png"],
        ["--time-limit", "--workers", "--seed"],
    ),
    "generate": (
        ["generate", "-o", "OUT.json"],
        ["--seed", "--easy", "--medium", "--hard", "--piecewise", "--noise"],
    ),
    "generate --tasks": (
        ["generate", "--tasks", "5", "-o", "OUT.json"],
        ["--tasks", "--width", "--resources", "--strength", "--complexity", "--factor", "--count"],
    ),
    "report": (["report", "OUT", "-o", "OUT.html"], ["--worst"]),
}

CASES = [
    (command, option, value)
    for command, (_, options) in COMMANDS.items()
    for option in options
    for value in BAD
]


@pytest.mark.parametrize(("command", "option", "value"), CASES, ids=[" ".join(c) for c in CASES])
def test_a_bad_number_is_a_usage_error_before_any_work(
    tmp_path: Path, command: str, option: str, value: str
) -> None:
    out = tmp_path / "out"
    args = [a.replace("OUT", str(out)) for a in COMMANDS[command][0]]
    result = CliRunner().invoke(cli, [*args, option, value])
    assert result.exit_code == 2, result.output
    assert "Invalid value for " in result.stderr and f"'{option}'" in result.stderr
    assert isinstance(result.exception, SystemExit)  # click's usage error, nothing raised past it
    assert list(tmp_path.iterdir()) == []  # nothing read, nothing written, no store created


def test_a_seed_count_that_passes_the_largest_seed_is_a_usage_error(tmp_path: Path) -> None:
    args = ["generate", "--tasks", "5", "--seed", str(SEED_MAX - 1), "--count", "3", "-o", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "passes the largest seed" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "value"),
    [
        (["solve", "bundled:refund", "--json", "--seed"], str(SEED_MAX)),
        (["solve", "bundled:refund", "--json", "--time-limit"], "1e-3"),
        (["schedule", "bundled:refund", "--json", "--seed"], str(SEED_MAX)),
    ],
)
def test_the_ends_of_a_range_are_taken(args: list[str], value: str) -> None:
    result = CliRunner().invoke(cli, [*args, value])
    assert result.exit_code == 0, result.output


def test_the_ranges_are_in_the_help() -> None:
    text = " ".join(CliRunner().invoke(cli, ["solve", "--help"]).output.split())
    assert f"[default: 0; 0<=x<={SEED_MAX}]" in text and f"[default: 60.0; 0<x<={SECONDS_MAX}]" in text

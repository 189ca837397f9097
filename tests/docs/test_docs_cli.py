"""docs/cli.md is what the commands' --help prints: regenerated here, any difference fails."""

from __future__ import annotations

from types import ModuleType

import pytest
from docs_scripts import docs_script
from paths import ROOT


def cli_reference() -> ModuleType:
    """docs/scripts/cli_reference.py, a script rather than an installed module."""
    return docs_script("cli_reference")


def test_a_groups_commands_are_read_from_its_help() -> None:
    text = "Usage: peakopt [OPTIONS]\n\nCommands:\n  plan-score  Score...\n  solve       Optimal...\n\nMore"
    assert cli_reference().subcommands(text) == ["plan-score", "solve"]
    assert cli_reference().subcommands("Usage: peakopt solve [OPTIONS] PATHS...\n") == []


@pytest.mark.slow
def test_cli_reference_is_up_to_date() -> None:
    rendered = cli_reference().render()
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert rendered == committed, "docs/cli.md is stale: run python docs/scripts/cli_reference.py"
    for command in ("solve", "schedule", "score", "plan-score", "stress", "report", "plot", "validate"):
        assert f"## `peakopt {command}`" in committed

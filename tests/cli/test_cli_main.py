"""The lazy ``peakopt`` group: --help, --version and completion import no command and no heavy library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_helpers import imported
from click.testing import CliRunner

from peakopt.cli.main import COMMANDS, cli, load_command, short_help

#: What ``peakopt --help``, ``--version`` and ``validate bundled:refund`` must not import.
HEAVY = ("matplotlib", "ortools", "pandas", "numpy", "dask", "distributed", "scipy", "pulp", "inspect_ai")


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def command_modules(modules: set[str]) -> list[str]:
    return sorted({entry.target.partition(":")[0] for entry in COMMANDS.values()} & modules)


@pytest.mark.parametrize(
    "args", [["--help"], ["--version"], ["validate", "bundled:refund"]], ids=["help", "version", "validate"]
)
def test_startup_imports_no_heavy_library(tmp_path: Path, args: list[str]) -> None:
    modules, _ = imported(tmp_path, *args)
    assert heavy(modules) == []


@pytest.mark.parametrize("args", [["--help"], ["--version"]], ids=["help", "version"])
def test_help_and_version_import_no_command_nor_pydantic(tmp_path: Path, args: list[str]) -> None:
    modules, out = imported(tmp_path, *args)
    assert command_modules(modules) == []
    assert "pydantic" not in modules and "peakopt.models" not in modules
    assert out.strip()


def test_the_help_lists_every_command_in_order_with_its_short_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    _, out = imported(tmp_path, "--help")
    listed = out.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == list(COMMANDS)
    limit = click.HelpFormatter().width - 6 - max(map(len, COMMANDS))  # as click's own Group lists them
    for line in listed:
        name = line.split()[0]
        assert line.split(None, 1)[1] == load_command(name).get_short_help_str(limit)


@pytest.mark.parametrize("name", COMMANDS)
def test_the_kept_short_help_is_the_commands_own(name: str) -> None:
    command = load_command(name)
    assert command.name == name
    for limit in (45, 64, 10**6):  # shortened as click shortens the docstring, at any width
        assert short_help(name, limit) == command.get_short_help_str(limit)


def test_a_mistyped_command_is_a_usage_error_with_a_suggestion() -> None:
    result = CliRunner().invoke(cli, ["valdate", "bundled:refund"])
    assert result.exit_code == 2
    assert "No such command 'valdate'" in result.stderr and "validate" in result.stderr


def test_the_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"peakopt, version {version('peakopt')}\n"


def test_a_commands_help_loads_it() -> None:
    result = CliRunner().invoke(cli, ["solve", "--help"])
    assert result.exit_code == 0 and "--time-limit" in result.stdout


def complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    """Bash completions of ``words`` (the last one being completed), as click's bash script asks."""
    environ = {
        "_PEAKOPT_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
        **(env or {}),
    }
    result = CliRunner().invoke(cli, [], env=environ, prog_name="peakopt")
    assert result.exit_code == 0, result.output
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()]


@pytest.mark.parametrize(
    ("shell", "says"),
    [
        ("bash", "complete -o nosort -F"),
        ("zsh", "compdef _peakopt_completion peakopt"),
        ("fish", "complete --no-files --command peakopt"),
    ],
)
def test_the_completion_script_is_there(shell: str, says: str) -> None:
    # what the docs tell users to run: eval "$(_PEAKOPT_COMPLETE=bash_source peakopt)"
    result = CliRunner().invoke(cli, [], env={"_PEAKOPT_COMPLETE": f"{shell}_source"}, prog_name="peakopt")
    assert result.exit_code == 0
    assert f"_PEAKOPT_COMPLETE={shell}_complete" in result.stdout and says in result.stdout


def test_completion_of_command_names_and_options() -> None:
    assert complete("peakopt s") == ["schema", "solve", "schedule", "score", "stress", "serve"]
    assert "--time-limit" in complete("peakopt solve --ti")
    assert complete("peakopt --") == ["--version", "--help"]
    assert complete("peakopt plot bundled:refund --sch") == ["--schedules"]  # not the hidden old spelling
    assert "--quiet" in complete("peakopt validate --")


def test_completing_command_names_imports_no_command(tmp_path: Path) -> None:
    env = {"_PEAKOPT_COMPLETE": "bash_complete", "COMP_WORDS": "peakopt ", "COMP_CWORD": "1"}
    modules, out = imported(tmp_path, env=env)
    assert [line.split(",", 1)[1] for line in out.splitlines()] == list(COMMANDS)
    assert command_modules(modules) == [] and heavy(modules) == []


def test_every_command_module_is_mapped() -> None:
    """A click command defined in peakopt.cli but missing from COMMANDS would be unreachable."""
    import importlib
    import pkgutil

    import peakopt.cli

    mapped = {(entry.target.partition(":")[0], entry.target.partition(":")[2]) for entry in COMMANDS.values()}
    found = set()
    for info in pkgutil.iter_modules(peakopt.cli.__path__):
        if info.name in ("main", "__main__"):
            continue
        module = importlib.import_module(f"peakopt.cli.{info.name}")
        for attribute, value in vars(module).items():
            defined_here = getattr(getattr(value, "callback", None), "__module__", None) == module.__name__
            if isinstance(value, click.Command) and defined_here:
                found.add((module.__name__, attribute))
    assert found == mapped


#: Libraries only the exact solvers need (CP-SAT, the MILP).
SOLVER_ONLY = ("ortools", "pulp")


def test_the_heuristics_load_no_exact_solver() -> None:
    # the solver package's face is lazy (PEP 562): a heuristic needs neither OR-Tools nor PuLP
    code = "import sys, peakopt.solver.heuristics; print(sorted({m.split('.')[0] for m in sys.modules}))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert not set(SOLVER_ONLY) & set(json.loads(done.stdout.replace("'", '"')))


@pytest.mark.parametrize("method", ["asap", "serial", "admission", "sgs:parallel:lft"])
def test_peakopt_schedule_loads_no_exact_solver(tmp_path: Path, method: str) -> None:
    modules, out = imported(tmp_path, "schedule", "bundled:refund", "--method", method, "--json")
    assert not {m.split(".")[0] for m in modules} & set(SOLVER_ONLY), sorted(modules & {"ortools", "pulp"})
    assert out.strip()


def test_the_solver_face_gives_the_function_whatever_was_imported_first() -> None:
    # the module of solve() is not called solve: importing it first must not hide the function
    code = (
        "import peakopt.solver.pipeline, peakopt.solver.cpsat\n"
        "from peakopt.solver import solve, BACKENDS, register, MilpTooLarge\n"
        "import inspect; assert inspect.isfunction(solve) and BACKENDS, solve\n"
        "import peakopt.solver as s; assert 'solve' in dir(s)\n"
        "try:\n    s.nothing\nexcept AttributeError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "has no attribute 'nothing'" in done.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_option_shows_the_metavar_text(name: str) -> None:
    # "TEXT" says nothing of what to give: a file, a name, a list (generate -o showed it)
    command = load_command(name)
    bare = [
        p.opts[-1]
        for p in command.params
        if isinstance(p, click.Option) and not p.is_flag and p.metavar is None and p.type is click.STRING
    ]
    assert not bare, f"peakopt {name}: give {bare} a metavar"

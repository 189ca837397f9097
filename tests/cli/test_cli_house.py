"""The command layer's house rules, read from the source (ast: nothing of a command is imported).

A command module (one that :data:`peakopt.cli.main.COMMANDS` names) imports helper modules only,
never another command module: what two commands share lives in a helper (or lower, in the
library), so changing one command's options never silently changes another's.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import click
from click.testing import CliRunner
from paths import ROOT

from peakopt.cli.main import COMMANDS
from peakopt.cli.options import grouped

CLI = ROOT / "cli"


def command_modules() -> set[str]:
    """The dotted names of the modules that hold the commands of :data:`COMMANDS`."""
    return {entry.target.partition(":")[0] for entry in COMMANDS.values()}


def cli_modules() -> set[str]:
    """Every module of ``peakopt.cli`` by dotted name."""
    return {f"peakopt.cli.{path.stem}" for path in CLI.glob("*.py") if path.stem != "__init__"}


def imported(path: Path, module: str) -> set[str]:
    """The modules a file's imports name, at any depth of its code (relative ones resolved).

    ``from peakopt.cli import x`` names ``peakopt.cli.x`` when that is a module; ``from
    peakopt.cli.x import y`` names ``peakopt.cli.x``.
    """
    package = module.rpartition(".")[0]
    known = cli_modules()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known)
    return found


def test_the_command_table_names_modules_of_the_cli() -> None:
    assert command_modules() <= cli_modules()
    assert len(command_modules()) >= 10  # the reader finds them: not a vacuous check below


def test_no_command_module_imports_another() -> None:
    commands = command_modules()
    wrong = {
        module: sorted((imported(CLI / f"{module.rpartition('.')[2]}.py", module) & commands) - {module})
        for module in sorted(commands)
    }
    assert not {m: found for m, found in wrong.items() if found}


def test_the_reader_sees_every_spelling_of_an_import(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "import peakopt.cli.solve\n"
        "from peakopt.cli import score\n"
        "from peakopt.cli.report import gate\n"
        "from . import plot\n"
        "from .inputs import summary\n"
        "def later():\n"
        "    from peakopt.cli.stress import stress\n"
    )
    found = imported(source, "peakopt.cli.probe")
    assert {f"peakopt.cli.{m}" for m in ("solve", "score", "report", "plot", "inputs", "stress")} <= found


#: The most parameters a function of the command line may take, click callbacks included. A
#: callback takes one parameter per option it reads; past a dozen, related options are grouped
#: into one frozen dataclass (:func:`peakopt.cli.options.grouped`): ``stress`` went from 31 to 10.
#: Twelve is what the widest commands need once their related options are grouped (``plot`` reads
#: twelve unrelated ones).
MOST_PARAMETERS = 12


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters a function takes: positional, keyword-only, ``*args`` and ``**kwargs``."""
    args = node.args
    return (
        len(args.posonlyargs)
        + len(args.args)
        + len(args.kwonlyargs)
        + (args.vararg is not None)
        + (args.kwarg is not None)
    )


def wide_functions(path: Path) -> dict[str, int]:
    """The functions of a file (nested ones too) taking more than :data:`MOST_PARAMETERS`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        f"{path.name}:{node.name}": parameters(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and parameters(node) > MOST_PARAMETERS
    }


def test_no_function_of_the_command_line_takes_more_than_a_dozen_parameters() -> None:
    found = {name: count for path in sorted(CLI.glob("*.py")) for name, count in wide_functions(path).items()}
    assert not found, f"group related options (peakopt.cli.options.grouped): {found}"


def test_the_count_sees_every_kind_of_parameter(tmp_path: Path) -> None:
    source = tmp_path / "wide.py"
    names = ", ".join(f"a{i}" for i in range(MOST_PARAMETERS - 3))
    source.write_text(f"def f(p, /, {names}, *rest, k, **more): pass\ndef g(a, *, b): pass\n")
    assert wide_functions(source) == {"wide.py:f": MOST_PARAMETERS + 1}


def test_a_group_hands_its_options_over_as_one_dataclass_in_help_order() -> None:
    @dataclasses.dataclass(frozen=True)
    class Inner:
        b: int

    @dataclasses.dataclass(frozen=True)
    class Outer:
        a: str
        inner: Inner
        c: bool

    seen: list[object] = []

    @click.command()
    @click.option("--first")
    @grouped(
        "outer",
        Outer,
        click.option("--a", default="x"),
        grouped("inner", Inner, click.option("--b", type=int, default=1)),
        click.option("--c", is_flag=True),
    )
    @click.option("--last", type=int, default=0)
    def command(first: str | None, outer: Outer, last: int) -> None:
        """Help of the command."""
        seen.append((first, outer, last))

    assert [p.name for p in command.params] == ["first", "a", "b", "c", "last"]
    assert command.help == "Help of the command."
    result = CliRunner().invoke(command, ["--b", "7", "--c", "--last", "3"])
    assert result.exit_code == 0, result.output
    assert seen == [(None, Outer("x", Inner(7), True), 3)]

"""Every error the command line can show is a PeakoptError (one ``Error:`` line, exit 1) or a usage error.

The command group turns a :class:`~peakopt.models.PeakoptError` into one ``Error:`` line and lets
click's usage errors through (exit 2); anything else would be a traceback. So every exception
class peakopt defines is a PeakoptError, but for the few internal signals listed here with the
reason none reaches the command line, and every exception a command module raises itself is a
PeakoptError or a usage error, but for the group's own translations.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import tomllib
import types

import click
from paths import ROOT

from peakopt.models import PeakoptError

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]

#: Exceptions peakopt defines outside the PeakoptError hierarchy, and why none reaches a command's user.
INTERNAL = {
    "peakopt.campaign.limits.ItemTimeout": "a worker's soft time limit; the runner records it as an error",
    "peakopt.campaign.pools.Lost": "a lost worker; the runner runs its items again, or records them",
    "peakopt.evals.arguments.TaskError": "Inspect's PrerequisiteError: `inspect eval` shows it, not peakopt",
    "peakopt.runtime.adapters.langgraph.ToolCallError": "raised into the user's LangGraph graph",
    "peakopt.cli.group.Interrupted": "a KeyboardInterrupt: the group prints one Interrupted line",
    "peakopt.solver.heuristics.sgs.Stopped": "a halted pass in the genetic algorithm, which drops that child",
}

#: Click's usage errors (exit 2).
USAGE = (click.UsageError,)  # BadParameter and NoSuchCommand are UsageErrors

#: (module, exception) raised by a command module outside PeakoptError and the usage errors, and why.
TRANSLATIONS = {
    ("peakopt.cli.group", "ClickException"): "the group's translation of a PeakoptError or OSError",
    ("peakopt.cli.group", "SystemExit"): "the exit code of an interrupt (128 + the signal)",
    ("peakopt.cli.group", "Interrupted"): "a signal as the KeyboardInterrupt the commands clean up on",
    ("peakopt.cli.inputs", "SystemExit"): "exit 1 after the input errors were each printed on one line",
    ("peakopt.cli.main", "TypeError"): "a command table entry that is no click command: a bug, at import",
}


def modules() -> list[tuple[str, types.ModuleType]]:
    found = []
    for package in SETUPTOOLS["packages"]:
        for path in sorted((ROOT / SETUPTOOLS["package-dir"][package]).glob("*.py")):
            if path.stem != "__main__":
                name = package if path.stem == "__init__" else f"{package}.{path.stem}"
                found.append((name, importlib.import_module(name)))
    return found


def test_every_exception_peakopt_defines_is_a_peakopt_error_but_the_internal_signals() -> None:
    defined = {
        f"{name}.{cls.__name__}": cls
        for name, module in modules()
        for cls in vars(module).values()
        if inspect.isclass(cls)
        and issubclass(cls, BaseException)
        and cls.__module__ == name
        and not issubclass(cls, Warning)  # a warning is a Warning: line, never an error
    }
    assert "peakopt.campaign.executors.ExecutorError" in defined  # the scan reads every package
    outside = {name for name, cls in defined.items() if not issubclass(cls, PeakoptError)}
    assert outside == set(INTERNAL), "make it a PeakoptError, or say in INTERNAL why no user sees it"


def imported_inside(module: types.ModuleType, tree: ast.Module) -> dict[str, object]:
    """What the ``from X import Y`` lines inside the module's functions bind (light modules import there)."""
    bound: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.col_offset > 0:
            base = (
                (module.__package__ or "").rsplit(".", node.level - 1)[0]
                if node.level > 1
                else module.__package__
            )
            name = (
                f"{base}.{node.module}"
                if node.level and node.module
                else (base if node.level else node.module)
            )
            source = importlib.import_module(name or "")
            for alias in node.names:
                bound[alias.asname or alias.name] = getattr(source, alias.name, None)
    return bound


def raised(module: types.ModuleType) -> list[tuple[str, object]]:
    """(the source of the exception, the class) of every ``raise X`` / ``raise X(...)`` in the module."""
    tree = ast.parse(inspect.getsource(module))
    found: list[tuple[str, object]] = []
    local = imported_inside(module, tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            first, *rest = ast.unparse(target).split(".")
            value: object = getattr(module, first, local.get(first, getattr(builtins, first, None)))
            for part in rest:
                value = getattr(value, part, None)
            found.append((ast.unparse(target), value))
    return found


def test_every_exception_a_command_module_raises_is_a_peakopt_error_or_a_usage_error() -> None:
    cli = [(name, module) for name, module in modules() if name.startswith("peakopt.cli")]
    seen, wrong = 0, []
    for name, module in cli:
        for source, cls in raised(module):
            seen += 1
            if not inspect.isclass(cls):
                wrong.append(f"{name}: raise {source} (not a class this test can follow)")
            elif (
                not issubclass(cls, PeakoptError | click.UsageError)
                and (name, cls.__name__) not in TRANSLATIONS
            ):
                wrong.append(f"{name}: raise {source}")
    assert seen > 50, "the raises are read"
    assert not wrong, "raise a PeakoptError (one Error: line) or a usage error:\n" + "\n".join(wrong)

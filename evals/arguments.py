"""The tasks' arguments (Inspect's ``-T name=value``), checked before any work as the command line's are.

Inspect reads each value as YAML, so it arrives as YAML makes it: ``0`` an
int, ``1e300`` and ``abc`` strings (YAML 1.1 wants a dot in a float),
``[a,b]`` a list. A number, a choice or a flag is turned back into the text a
command line would hold and converted by the click type of the matching
command-line option (:mod:`peakopt.cli.options`: ``time_limit`` in seconds
like ``solve --time-limit``, ``limit`` a count, ``seed`` a solver seed), so
the ranges are the command line's and one message names the argument. Names
(``machines``, ``tiers``) come as a list or one comma-separated string, each
once. An argument the task does not have is refused (Inspect would only log
a warning and drop it).

A wrong argument, or an input the user can fix (a missing suite, a damaged
references cache), is a :class:`TaskError`: Inspect prints its message, one
line, without a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from peakopt.campaign.ranges import COUNT_OR_NONE, SECONDS, SEED
from peakopt.evals.suites import load_suite, name_list
from peakopt.instances.names import SETTINGS, SPLITS
from peakopt.models import PeakoptError, Suite

T = TypeVar("T")

try:  # what Inspect prints as a message alone (a private name: a later inspect-ai may move it)
    from inspect_ai._util.error import PrerequisiteError as _Shown
except ImportError:  # then the message comes with a traceback, still one line
    _Shown = Exception  # type: ignore[misc,assignment]

#: The click type of every argument that is a number, a choice or a flag: the command line's own.
TYPES: dict[str, click.ParamType[Any]] = {
    "time_limit": SECONDS,
    "limit": COUNT_OR_NONE,
    "seed": SEED,
    "structured": click.BOOL,
    "setting": click.Choice(SETTINGS),
    "split": click.Choice(SPLITS),
}

#: What Inspect passes to every task, whether it takes it or not.
ALWAYS_PASSED = frozenset({"model"})


class TaskError(_Shown):
    """An input of a task the user can fix; Inspect prints the message alone (no traceback).

    Parameters
    ----------
    message
        One line naming the argument or the file, and the rule.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.message)


def shown(value: Any) -> str:
    """A value as it is named in a message: text quoted, numbers and lists as Python writes them."""
    return repr(value)


def _converted(name: str, value: Any, kind: click.ParamType[Any]) -> Any:
    if isinstance(value, list | dict | tuple):
        raise TaskError(f"-T {name}={shown(value)}: one value is needed, not a list")
    try:
        return kind.convert(str(value), None, None)  # the text a command line would hold
    except click.BadParameter as exc:
        raise TaskError(f"-T {name}={shown(value)}: {exc.message}") from None


def listed_names(name: str, value: Any) -> list[str] | None:
    """A task argument that names things: None (all), ``"a,b"`` or ``["a", "b"]``, each name once.

    Raises
    ------
    TaskError
        When a name is given twice, or the value is no name or list of names.
    """
    scalar = isinstance(value, str | int | float) and not isinstance(value, bool)
    listed = isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value)
    if value is not None and not (scalar or listed):
        raise TaskError(f"-T {name}: {shown(value)} is not a name or a list of names")
    kept = name_list(str(value) if scalar else value)
    twice = next((item for k, item in enumerate(kept or []) if item in (kept or [])[:k]), None)
    if twice is not None:
        raise TaskError(f"-T {name}: names {twice!r} twice")
    return kept


def check_arguments(task: str, given: Mapping[str, Any], unknown: Mapping[str, Any]) -> dict[str, Any]:
    """The task's arguments, each converted by its command-line type (see the module doc).

    Parameters
    ----------
    task
        The task's name, for the messages (``peakopt/schedule``).
    given
        The task's own arguments, by name, as Inspect passed them.
    unknown
        Whatever else Inspect passed (the task's ``**kwargs``).

    Raises
    ------
    TaskError
        Naming the first argument that is wrong, or that the task does not have.
    """
    extra = [name for name in unknown if name not in ALWAYS_PASSED]
    if extra:
        raise TaskError(
            f"-T {extra[0]}: {task} has no argument {extra[0]!r} (its arguments: {', '.join(given)})"
        )
    found = dict(given)
    for name, value in given.items():
        if value is not None and name in TYPES:
            found[name] = _converted(name, value, TYPES[name])
    return found


def suite_argument(path: str) -> Suite:
    """The suite of ``-T suite`` (a file or ``bundled:NAME``).

    Raises
    ------
    TaskError
        Naming ``-T suite`` when the file cannot be used.
    """
    try:
        return load_suite(path)
    except PeakoptError as exc:
        raise TaskError(f"-T suite={shown(path)}: {exc}") from None


def chosen(pick: Callable[[], T]) -> T:
    """What ``pick`` chooses of the suite; its ValueError (naming ``-T machines``...) as a TaskError."""
    try:
        return pick()
    except ValueError as exc:
        raise TaskError(str(exc)) from None

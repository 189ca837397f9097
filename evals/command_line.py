"""The ``inspect eval`` command line that made a log, rebuilt from what Inspect recorded of the run.

A table in a paper or an eval's README names the exact command behind each figure. Inspect keeps
the arguments as they were passed (``task_args_passed``, ``solver_args_passed``: not the task's
defaults filled in) and the run's configuration, so the command can be written back: the task,
``--model`` (and ``--model-base-url``), ``-T`` and ``-S`` arguments, ``--solver`` when the task's
own was replaced, and the options of the run that change what is scored (``--epochs``,
``--epochs-reducer``, ``--limit``, ``--sample-id``). A run started from Python (``eval(...)``) gets
the command that does the same from a shell.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_ai.log import EvalSpec


def argument_text(value: Any) -> str:
    """An argument's value as ``-T``/``-S`` reads it back (Inspect reads each value as YAML).

    A string is written as it is unless YAML would read it as something else (``"1"``, ``"true"``,
    ``""``), then in double quotes; any other value in YAML's flow style (``1.0e+100``, ``[a, b]``).
    A string holding a comma cannot be passed by ``-T`` at all (Inspect splits it into a list,
    quoted or not): it is written as it is, and reads back as that list.
    """
    import yaml  # inspect_ai's dependency: only a log's command is written

    if isinstance(value, str):
        try:
            plain = yaml.safe_load(value) == value
        except yaml.YAMLError:
            plain = False
        if plain:
            return value
    # YAML's own writer: it escapes what its reader refuses raw (JSON's escapes are not all YAML's)
    style = '"' if isinstance(value, str) else None
    dumped: str = yaml.safe_dump(
        value, default_flow_style=True, default_style=style, width=float("inf"), allow_unicode=True
    )
    return dumped.removesuffix("\n").removesuffix("\n...").strip()


def _assigned(arguments: Mapping[str, Any] | None) -> list[str]:
    """``key=value`` per argument, as ``-T`` and ``-S`` take them."""
    return [f"{key}={argument_text(value)}" for key, value in (arguments or {}).items()]


def _pairs(flag: str, arguments: Mapping[str, Any] | None) -> list[str]:
    return [part for assigned in _assigned(arguments) for part in (flag, assigned)]


def solver_named(spec: EvalSpec) -> str | None:
    """The solver that replaced the task's own, with its arguments (``peakopt/trivial answer=asap``).

    None when the task ran its own solver (the model answered).
    """
    if not spec.solver:
        return None
    return " ".join([spec.solver, *_assigned(spec.solver_args_passed)])


def inspect_command(spec: EvalSpec) -> str:
    """The shell command that runs the evaluation ``spec`` describes (``inspect eval TASK --model ...``).

    Parameters
    ----------
    spec
        A log's ``eval`` field.

    Returns
    -------
    str
        One line, each part quoted for a POSIX shell where it needs it.
    """
    parts = ["inspect", "eval", spec.task, "--model", spec.model]
    if spec.model_base_url:
        parts += ["--model-base-url", spec.model_base_url]
    parts += _pairs("-T", spec.task_args_passed)
    if spec.solver:
        parts += ["--solver", spec.solver, *_pairs("-S", spec.solver_args_passed)]
    config = spec.config
    if config.epochs is not None and config.epochs > 1:
        parts += ["--epochs", str(config.epochs)]
        reducers = config.epochs_reducer or []
        if reducers:
            parts += ["--epochs-reducer", ",".join(reducers)]
    if config.limit is not None:
        limit = config.limit  # a range is kept from 0, as Inspect reads "--limit 11-20" into (10, 20)
        parts += ["--limit", f"{limit[0] + 1}-{limit[1]}" if isinstance(limit, tuple | list) else str(limit)]
    if config.sample_id is not None:
        ids = config.sample_id if isinstance(config.sample_id, list) else [config.sample_id]
        parts += ["--sample-id", ",".join(str(i) for i in ids)]
    return shlex.join(parts)

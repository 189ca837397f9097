"""Method names: parsing, the catalogue of built-ins, and :func:`run`.

The grammar (``:`` separates the parts)::

    asap | serial | cap:K                       resource-blind baselines
    sgs:SCHEME:RULE                             one pass; SCHEME serial|parallel
    sampling:N[:RULE]                           best of N regret-biased samples (serial SGS)
    best-rule                                   best single pass over every rule and scheme
    fbi:<sgs...|sampling...|best-rule>          the same, each pass improved forward-backward
    admission | admission:strict                per-resource semaphores in ready order
    best | best:fast | best:thorough            the best_schedule portfolio
    module:function | ENTRY_POINT               a plug-in

RULE is one of lft, lst, mts, grpw, spt, lpt, cp, nrp, fifo, random (sampling
takes a deterministic rule, lft by default).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from peakopt.models import Machine, Schedule, Workflow
from peakopt.solver.heuristics.arrays import Problem, compile_problem
from peakopt.solver.heuristics.errors import MachineNeeded, MethodError
from peakopt.solver.heuristics.identity import builtin_code
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.plugins import Plugin, installed, load_plugin
from peakopt.solver.heuristics.portfolio import (
    EFFORTS,
    SCHEMES,
    best_rule,
    best_starts,
    single_pass,
    to_schedule,
)
from peakopt.solver.heuristics.rules import RULE_NAMES, RULES, rule_keys
from peakopt.solver.heuristics.runtime import asap, in_flight, one_at_a_time, semaphores
from peakopt.solver.heuristics.sampling import sample

#: Start times by position from compiled arrays and a seed.
Scheduler = Callable[[Problem, int], list[float]]

#: Parametrised built-ins, as patterns (see the module docstring).
METHOD_PATTERNS = ("cap:K", "sampling:N[:RULE]", "fbi:sampling:N[:RULE]", "module:function", "ENTRY_POINT")


@dataclass(frozen=True)
class Method:
    """A parsed method name, ready to run.

    Attributes
    ----------
    name
        The name as given; it becomes the schedules' ``source``.
    resource_aware
        Whether it needs a machine (built-ins other than the blind baselines).
    seeded
        Whether ``seed`` changes its result.
    scheduler
        The built-in scheduler (start times by position), or None for a plug-in.
    plugin
        The loaded plug-in, or None for a built-in.
    """

    name: str
    resource_aware: bool
    seeded: bool = False
    scheduler: Scheduler | None = None
    plugin: Plugin | None = None

    @property
    def code(self) -> str:
        """The identity of the code that runs it: the plug-in's sources, or the built-ins'."""
        return self.plugin.code if self.plugin is not None else builtin_code()

    def schedule(self, workflow: Workflow, machine: Machine | None, *, seed: int = 0) -> Schedule:
        """Run the method on one workflow × machine.

        Raises
        ------
        MachineNeeded
            A resource-aware built-in without a machine.
        PluginError
            A plug-in that fails or returns an unusable result.
        """
        if self.plugin is not None:
            return self.plugin(workflow, machine, seed=seed)
        if self.resource_aware and machine is None:
            raise MachineNeeded(f"method {self.name!r} is resource-aware and needs a machine")
        assert self.scheduler is not None
        problem = compile_problem(workflow, machine)
        return to_schedule(problem, self.scheduler(problem, seed), self.name)


def _integer(name: str, text: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise MethodError(f"method {name!r}: {what} must be a positive integer, got {text!r}")
    return int(text)


def _pick(name: str, text: str, choices: tuple[str, ...], what: str) -> str:
    if text not in choices:
        raise MethodError(f"method {name!r}: unknown {what} {text!r}; choose from {', '.join(choices)}")
    return text


def _sgs(name: str, rest: str, justify: bool) -> Method:
    scheme, _, rule = rest.partition(":")
    _pick(name, scheme, SCHEMES, "scheme")
    _pick(name, rule, RULE_NAMES, "rule")

    def starts(problem: Problem, seed: int) -> list[float]:
        start = single_pass(problem, scheme, rule_keys(problem, rule, random.Random(seed)))
        return improve(problem, start)[0] if justify else start

    return Method(name, resource_aware=True, seeded=rule == "random", scheduler=starts)


def _sampling(name: str, rest: str, justify: bool) -> Method:
    count, _, rule = rest.partition(":")
    passes = _integer(name, count, "the number of samples")
    rule = _pick(name, rule or "lft", tuple(RULES), "rule")

    def starts(problem: Problem, seed: int) -> list[float]:
        return sample(problem, rule_keys(problem, rule), passes, random.Random(seed), justify=justify)[0]

    return Method(name, resource_aware=True, seeded=True, scheduler=starts)


def _best_rule(name: str, rest: str, justify: bool) -> Method:
    if rest:
        raise MethodError(f"method {name!r}: best-rule takes no parameter")
    return Method(name, resource_aware=True, scheduler=lambda problem, _: best_rule(problem, justify=justify))


def _improved(name: str, rest: str) -> Method:
    head, _, inner = rest.partition(":")
    builders = {"sgs": _sgs, "sampling": _sampling, "best-rule": _best_rule}
    if head not in builders:
        raise MethodError(f"method {name!r}: fbi applies to sgs:..., sampling:... or best-rule")
    return builders[head](name, inner, True)


def _simple(name: str, rest: str, scheduler: Scheduler, *, aware: bool) -> Method:
    if rest:
        raise MethodError(f"method {name!r} takes no parameter")
    return Method(name, resource_aware=aware, scheduler=scheduler)


def _cap(name: str, rest: str) -> Method:
    limit = _integer(name, rest, "K (steps in flight)")
    return Method(name, resource_aware=False, scheduler=lambda problem, _: in_flight(problem, limit))


def _admission(name: str, rest: str) -> Method:
    strict = _pick(name, rest, ("", "strict"), "admission variant") == "strict"
    return Method(name, resource_aware=True, scheduler=lambda problem, _: semaphores(problem, strict=strict))


def _best(name: str, rest: str) -> Method:
    effort = _pick(name, rest or "fast", EFFORTS, "effort")
    return Method(
        name,
        resource_aware=True,
        seeded=effort == "thorough",
        scheduler=lambda p, s: best_starts(p, effort, s),
    )


_BUILTINS: dict[str, Callable[[str, str], Method]] = {
    "asap": lambda name, rest: _simple(name, rest, lambda p, _: asap(p), aware=False),
    "serial": lambda name, rest: _simple(name, rest, lambda p, _: one_at_a_time(p), aware=False),
    "cap": _cap,
    "sgs": lambda name, rest: _sgs(name, rest, False),
    "sampling": lambda name, rest: _sampling(name, rest, False),
    "best-rule": lambda name, rest: _best_rule(name, rest, False),
    "fbi": _improved,
    "admission": _admission,
    "best": _best,
}


def parse_method(name: str) -> Method:
    """Turn a method name into a runnable :class:`Method` (loading plug-ins).

    Raises
    ------
    MethodError
        An unknown or malformed built-in name, or a bare name that is neither
        a built-in nor an installed entry point.
    PluginError
        A plug-in that cannot be loaded.
    """
    head, _, rest = name.partition(":")
    if head in _BUILTINS:
        return _BUILTINS[head](name, rest)
    if ":" in name or name in installed():
        return Method(name, resource_aware=False, seeded=True, plugin=load_plugin(name))
    raise MethodError(
        f"unknown method {name!r}; built-ins: {', '.join(sorted(_BUILTINS))} "
        "(see 'peakopt schedule --list'), or a plug-in module:function or entry-point name"
    )


def method_names() -> list[str]:
    """Every built-in method that takes no number, by name (see :data:`METHOD_PATTERNS`)."""
    one_pass = [f"sgs:{scheme}:{rule}" for scheme in SCHEMES for rule in RULE_NAMES]
    return [
        "asap",
        "serial",
        *one_pass,
        "best-rule",
        *(f"fbi:{name}" for name in [*one_pass, "best-rule"]),
        "admission",
        "admission:strict",
        *(f"best:{effort}" for effort in EFFORTS),
    ]


def run(workflow: Workflow, machine: Machine | None, method: str, *, seed: int = 0) -> Schedule:
    """Schedule ``workflow`` on ``machine`` with the heuristic called ``method``.

    Parameters
    ----------
    workflow, machine
        The instance; ``machine`` may be None for the resource-blind methods
        (``asap``, ``serial``, ``cap:K``) and plug-ins.
    method
        A name of the grammar in this module's docstring.
    seed
        For the seeded methods (``random`` rule, sampling, plug-ins taking
        ``seed``): the same seed gives the same schedule.

    Returns
    -------
    Schedule
        With ``source`` set to ``method``. Every resource-aware built-in
        returns a safe, dependency-valid schedule.
    """
    return parse_method(method).schedule(workflow, machine, seed=seed)

"""The solver's backends, registered by name: one signature, one result type, nothing of CP-SAT.

A backend is a function of a :class:`Request` — the integer problem, a feasible schedule
in ticks to start from (hint and horizon), a proven lower bound, the conflict cliques,
the budget (:class:`Limits`), its own switches and a progress callback — that returns an
:class:`Outcome`: the best schedule it found, in ticks, and the best bound it proved.
:func:`peakopt.solver.solve` does everything around it: scaling, the starting schedule
and the bounds (it returns at once, without asking any backend, when the start meets the
bound), the real figures, and the oracle's check of what the backend returns: a schedule
the oracle finds invalid or unsafe is an ``error`` result, never a reference (the bound a
backend proves is its own claim).

Built in: ``cpsat`` (the reference, :mod:`peakopt.solver.search`) and ``milp`` (a
time-indexed cross-check for small instances, :mod:`peakopt.solver.milp`); both are
registered by :mod:`peakopt.solver.pipeline`. :func:`register` adds others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # annotations only: `peakopt solve --help` reads BUILT_IN here and must not pay for NumPy
    from peakopt.solver.conflicts import Node
    from peakopt.solver.scaling import IntegerProblem

#: The built-in backends, registered by :mod:`peakopt.solver.pipeline` (a test holds the two equal):
#: named here so that ``peakopt solve --help`` lists them without importing OR-Tools.
BUILT_IN = ("cpsat", "milp")

#: progress(incumbent, bound) in ticks; the incumbent is None when only the bound moved.
Progress = Callable[[int | None, int], None]


@dataclass(frozen=True)
class Limits:
    """How long and how wide to search.

    Attributes
    ----------
    time_limit
        Seconds for the search.
    workers
        Threads.
    seed
        Random seed.
    gap_limit
        Stop once (makespan − bound) / makespan is at most this.
    """

    time_limit: float
    workers: int
    seed: int
    gap_limit: float = 0.0


@dataclass
class Outcome:
    """The best schedule (ticks) a backend found, its makespan, the bound it proved, and its phases."""

    starts: list[int]
    makespan: int
    bound: int
    phases: list[str] = field(default_factory=list)
    gap_limit: float = 0.0

    def done(self, gap_limit: float | None = None) -> bool:
        """Whether the bound meets the makespan, or the gap is within the gap limit."""
        limit = self.gap_limit if gap_limit is None else gap_limit
        return self.bound >= self.makespan or (self.makespan - self.bound) <= limit * self.makespan


@dataclass(frozen=True)
class Request:
    """What every backend is given.

    Attributes
    ----------
    problem
        The integer problem (see :func:`peakopt.solver.scaling.scale`).
    initial
        A feasible schedule in ticks: a hint, and its makespan the horizon.
    lower
        A proven lower bound in ticks (critical path, energy, cliques).
    cliques
        Greedy cliques of the conflict graph (steps that can never overlap).
    limits
        The budget.
    options
        The backend's own switches (:class:`peakopt.solver.cpsat.CpsatOptions` for ``cpsat``);
        None for its defaults.
    progress
        Called with (incumbent, bound) in ticks whenever either improves, if the backend can say.
    """

    problem: IntegerProblem
    initial: list[int]
    lower: int
    cliques: list[list[Node]]
    limits: Limits
    options: object | None = None
    progress: Progress | None = None


#: A backend: the best schedule and bound it finds within the request's limits.
Search = Callable[[Request], Outcome]


@dataclass(frozen=True)
class Backend:
    """A registered backend.

    Attributes
    ----------
    name
        What ``solve(..., backend=NAME)`` and ``peakopt solve --backend`` call it.
    search
        The function.
    relaxation
        Whether ``solve`` also gives it, on rounded data, the relaxation to search for a
        better lower bound with the time left (the MILP cross-check is registered
        without: it judges the rounded problem alone).
    """

    name: str
    search: Search
    relaxation: bool = True


#: The backends by name, in the order registered.
REGISTRY: dict[str, Backend] = {}


def register(name: str, search: Search, *, relaxation: bool = True) -> None:
    """Add a backend (or replace the one of that name)."""
    REGISTRY[name] = Backend(name, search, relaxation)


def names() -> tuple[str, ...]:
    """The registered backends' names."""
    return tuple(REGISTRY)


def backend_named(name: str) -> Backend:
    """The backend called ``name``.

    Raises
    ------
    ValueError
        When no backend has that name.
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"backend must be one of {names()}, got {name!r}") from None

"""What a scheduling prompt tells the model: one context per setting (PeakBench's context ablation).

Every context holds the steps (id, tool, server) and the dependency
structure (each step lists the steps it needs) and names the machine. The
settings differ in the measured costs (``resource_costs.steps``) and
machine capacities they add (PeakBench's context ablation, its Table 9):

- ``rasc``: ``duration_s``, ``cpu_avg_cores``, ``cpu_peak_cores``,
  ``memory_mb`` and other resources (``other_demand``); every capacity
  (``cpu_capacity``, ``memory_mb_capacity``, ``other_capacity``);
- ``durations``: ``duration_s``; no capacity;
- ``cpu``: ``cpu_avg_cores``, ``cpu_peak_cores``; ``cpu_capacity``;
- ``memory``: ``memory_mb``; ``memory_mb_capacity``;
- ``cpu-memory``: ``cpu_avg_cores``, ``cpu_peak_cores``, ``memory_mb``;
  ``cpu_capacity``, ``memory_mb_capacity``;
- ``no-profile``: no ``resource_costs`` block; no capacity.

``rasc`` is PeakBench's resource-aware scheduling context
(:func:`peakopt.instances.to_context`) as it is; the others are it with the
other fields left out, so that a setting's figures are exactly the RASC's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peakopt.instances.peakbench import CPU, MEMORY, to_context
from peakopt.models import Machine, Workflow

_DURATION = ("duration_s",)
_CPU = ("cpu_avg_cores", "cpu_peak_cores")
_MEMORY = ("memory_mb",)

_SCHEDULE = "You schedule the tool calls (steps) of an LLM agent's workflow on one machine.\n"
_STRUCTURE = (
    "The context below gives the steps (with the tool and server each one calls), their dependencies "
    "(each step lists the steps it needs)"
)


@dataclass(frozen=True)
class Setting:
    """What one setting's context holds, and how its prompt introduces it.

    Attributes
    ----------
    name
        As ``peakopt prompt --setting`` takes it.
    costs
        The per-step cost fields kept; None for every field (other resources
        included), ``()`` for no ``resource_costs`` block at all.
    capacities
        The machine fields kept besides its name; None for all of them.
    intro
        The prompt's opening: what the context gives and what the model must judge itself.
    """

    name: str
    costs: tuple[str, ...] | None
    capacities: tuple[str, ...] | None
    intro: str

    @property
    def durations(self) -> bool:
        """Whether the context gives each step's duration (``duration_s``)."""
        return self.costs is None or "duration_s" in self.costs


def _ablated(
    name: str, costs: tuple[str, ...], capacities: tuple[str, ...], given: str, judge: str
) -> Setting:
    return Setting(name, costs, capacities, f"{_SCHEDULE}{_STRUCTURE} and {given}. {judge}")


_SETTINGS = (
    Setting(
        "rasc",
        None,
        None,
        _SCHEDULE + "The context below gives the steps, their dependencies (each step lists the steps it "
        "needs), the machine's capacities and each step's measured costs: duration_s (seconds), "
        "cpu_avg_cores, cpu_peak_cores (cores) and memory_mb (peak memory, MB). A step uses its peak CPU "
        "and its memory for its whole duration.",
    ),
    _ablated(
        "durations",
        _DURATION,
        (),
        "each step's measured duration_s (seconds)",
        "The steps' CPU and memory use and the machine's capacities are not given: judge from the tools "
        "how much CPU and memory each call needs, and avoid overloading the machine.",
    ),
    _ablated(
        "cpu",
        _CPU,
        ("cpu_capacity",),
        "each step's measured CPU, cpu_avg_cores and cpu_peak_cores (cores), with the machine's "
        "cpu_capacity; a step uses its peak CPU for its whole duration",
        "The steps' durations and memory use and the machine's memory are not given: judge from the "
        "tools how long each call takes and how much memory it needs, and avoid overloading the machine.",
    ),
    _ablated(
        "memory",
        _MEMORY,
        ("memory_mb_capacity",),
        "each step's measured memory_mb (peak memory, MB), with the machine's memory_mb_capacity; a "
        "step uses its memory for its whole duration",
        "The steps' durations and CPU use and the machine's CPU capacity are not given: judge from the "
        "tools how long each call takes and how much CPU it needs, and avoid overloading the machine.",
    ),
    _ablated(
        "cpu-memory",
        _CPU + _MEMORY,
        ("cpu_capacity", "memory_mb_capacity"),
        "each step's measured cpu_avg_cores, cpu_peak_cores (cores) and memory_mb (peak memory, MB), "
        "with the machine's cpu_capacity and memory_mb_capacity; a step uses its peak CPU and its "
        "memory for its whole duration",
        "The steps' durations are not given: judge from the tools how long each call takes.",
    ),
    Setting(
        "no-profile",
        (),
        (),
        _SCHEDULE + _STRUCTURE + ". The steps' durations and resource use and the machine's capacities "
        "are not given: judge from the tools how long each call takes and how much CPU and memory it "
        "needs, and avoid overloading the machine.",
    ),
)

#: Every setting by name, in the order of the table above.
SETTING_CONTEXTS: dict[str, Setting] = {s.name: s for s in _SETTINGS}


def setting_of(name: str) -> Setting:
    """The setting called ``name``.

    Raises
    ------
    ValueError
        On an unknown setting.
    """
    try:
        return SETTING_CONTEXTS[name]
    except KeyError:
        raise ValueError(f"setting must be one of {tuple(SETTING_CONTEXTS)}, got {name!r}") from None


def context(workflow: Workflow, machine: Machine, setting: str = "rasc") -> dict[str, Any]:
    """The context of ``workflow`` on ``machine`` in ``setting`` (see the module doc).

    Raises
    ------
    ValueError
        On an unknown setting.
    """
    chosen = setting_of(setting)
    document = to_context(workflow, machine)
    if chosen.capacities is not None:
        kept = ("name", *chosen.capacities)
        document["machine"] = {k: v for k, v in document["machine"].items() if k in kept}
    if chosen.costs == ():
        del document["resource_costs"]
    elif chosen.costs is not None:
        costs = document["resource_costs"]["steps"]
        document["resource_costs"] = {
            "steps": {
                step: {k: v for k, v in cost.items() if k in chosen.costs} for step, cost in costs.items()
            }
        }
    return document


#: A context's capacity field -> the resource it gives the capacity of (others: ``other_capacity``).
_CAPACITY_FIELDS = {"cpu_capacity": CPU, "memory_mb_capacity": MEMORY}


def shown_machine(machine: Machine, setting: str = "rasc") -> Machine | None:
    """``machine`` as ``setting``'s context shows it: only the capacities the context gives.

    What a scheduler given that context knows of the machine: a heuristic run on it (any
    resource left out is unconstrained to it) decides as a model given the context could, and
    its schedule is then judged on the real ``machine``. Which resources are soft is kept.

    Parameters
    ----------
    machine
        The real machine.
    setting
        A setting of :data:`SETTING_CONTEXTS`.

    Returns
    -------
    Machine or None
        ``machine`` itself for ``rasc``; None when the context gives no capacity at all
        (``durations``, ``no-profile``).

    Raises
    ------
    ValueError
        On an unknown setting.
    """
    chosen = setting_of(setting)
    if chosen.capacities is None:
        return machine
    kept = {_CAPACITY_FIELDS[field] for field in chosen.capacities if field in _CAPACITY_FIELDS}
    capacity = {r: c for r, c in machine.capacity.items() if r in kept}
    if not capacity:
        return None
    soft = tuple(r for r in machine.soft if r in capacity)
    return Machine.model_validate({**machine.model_dump(), "capacity": capacity, "soft": soft})


def structure_context(workflow: Workflow, machine: Machine) -> dict[str, Any]:
    """The structure-only context (``no-profile``): the RASC without capacities and per-step costs."""
    return context(workflow, machine, "no-profile")

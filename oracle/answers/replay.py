"""Turn parsed timings into start times, as given or as an executor would run them.

Two replay modes:

- ``literal``: the starts are taken as given; a step that starts before a
  predecessor ends is a dependency violation (the schedule is invalid).
- ``runtime``: an executor that enforces dependencies: each step starts at
  max(requested start, when its last predecessor finishes). Dependencies then
  hold; the result records how many steps were pushed, and by how much.

PeakBench's ``requested_delay`` is a delay, not a start: with
``delay_from="ready"`` a step starts ``delay`` seconds after its last
predecessor finishes (after 0 for a step without predecessors), with
``delay_from="zero"`` at ``delay`` seconds after time 0. ``missing="asap"``
starts the steps the answer leaves out as soon as their predecessors finish.
"""

from __future__ import annotations

from dataclasses import dataclass

from peakopt.models import Workflow
from peakopt.oracle.answers.names import DelayFrom, Missing, Mode
from peakopt.oracle.answers.parse import Parsed
from peakopt.oracle.base.exact import before
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.uncertain.simulate import timetable


@dataclass(frozen=True)
class Replay:
    """Start times to score, and what the replay changed.

    Attributes
    ----------
    starts
        Step id -> start; steps unknown to the workflow are kept (the oracle
        reports them), missing steps are absent unless filled.
    pushed
        Steps the runtime started later than requested.
    pushed_seconds
        Sum of those delays.
    filled
        Missing steps started as soon as ready (``missing="asap"``).
    problems
        Negative requested starts or delays.
    """

    starts: dict[str, float]
    pushed: int = 0
    pushed_seconds: float = 0.0
    filled: int = 0
    problems: tuple[Violation, ...] = ()


def _negative(step: str, value: float, kind: str) -> Violation:
    what = "start" if kind == "start" else "requested delay"
    return Violation(
        kind="negative_start", message=f"step {step!r}: {what} {value:g} is negative", tasks=(step,)
    )


def replay(
    workflow: Workflow,
    parsed: Parsed,
    mode: Mode = "literal",
    delay_from: DelayFrom = "ready",
    missing: Missing = "invalid",
) -> Replay:
    """Start times of ``parsed`` on ``workflow`` under a replay mode.

    Parameters
    ----------
    workflow
        The workflow the timings are for.
    parsed
        Starts or requested delays, from :mod:`peakopt.oracle.answers.parse`.
    mode
        ``literal`` or ``runtime`` (see the module docstring).
    delay_from
        What a requested delay counts from: ``ready`` or ``zero``.
    missing
        ``invalid`` leaves missing steps out (the oracle reports them);
        ``asap`` starts them when their predecessors have finished.

    Returns
    -------
    Replay
    """
    ids = [t.id for t in workflow.tasks]
    requested: dict[str, float] = {}

    def request(position: int, ready: float) -> float | None:
        step = ids[position]
        if step not in parsed.values:
            return ready if missing == "asap" else None
        value = parsed.values[step]
        if parsed.kind == "delay" and delay_from == "ready":
            value += ready
        requested[step] = value
        return value

    # runtime is the simulator's ``enforced`` execution: one pass, one implementation
    lengths = [t.length for t in workflow.tasks]
    timed = timetable(
        workflow.topological_order, workflow.predecessors, lengths, request, enforce=mode == "runtime"
    )
    starts = {step: value for step, value in parsed.values.items() if step not in workflow.index}
    for j in workflow.topological_order:
        start = timed[j]
        if start is not None:
            starts[ids[j]] = start
    late = [starts[step] - wanted for step, wanted in requested.items() if before(wanted, starts[step])]
    filled = sum(1 for step in ids if step in starts and step not in parsed.values)
    problems = [_negative(s, v, parsed.kind) for s, v in parsed.values.items() if v < 0]
    return Replay(starts, len(late), sum(late), filled, tuple(problems))

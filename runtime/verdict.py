"""The oracle's verdict on a run as it ran: safe or not, judged by what the steps were measured to use.

``peakopt run`` ends with one line of this verdict, and a governor's trace is judged the same way.
A run whose steps were measured (``--measure``; a governor's ``release(usage=...)``) is judged with
the **measured** figures (:meth:`Trace.realised <peakopt.runtime.trace.Trace.realised>` with
``measured``: peak memory, average cores), what ``peakopt score --demand measured`` judges: a step
that declared 100 MiB and used 400 overflows a 512 MiB machine beside another such step whatever
the declarations say, and the verdict says so. A step that ran without a measurement (an async
callable) is judged with its declared demands. A run without any measurement is judged with the
declared demands, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from peakopt.oracle import evaluate
from peakopt.oracle.judge.verdict import Score
from peakopt.runtime.names import DemandKind
from peakopt.runtime.overuse import Excess, declared_peaks, excesses, measured_demand
from peakopt.runtime.trace import Trace


@dataclass(frozen=True)
class RunVerdict:
    """What the oracle says of a run.

    Attributes
    ----------
    score
        The score of the actual starts and durations, with the demands of ``demand``.
    demand
        ``measured`` when any step was measured, else ``declared``.
    declared
        The score with the declared demands (the same as ``score`` when ``demand`` is declared).
    over
        Step id -> the resources it was measured to use more of than it declared.
    """

    score: Score
    demand: DemandKind
    declared: Score
    over: dict[str, list[Excess]]


def judge_run(trace: Trace) -> RunVerdict:
    """The verdict on ``trace`` on its own machine (see the module docstring)."""
    workflow, schedule = trace.realised()
    declared = evaluate(workflow, trace.machine, schedule)
    if not any(s.usage is not None for s in trace.ran):
        return RunVerdict(declared, "declared", declared, {})
    measured, _ = trace.realised("measured", unmeasured="declared")
    tasks = trace.workflow.index
    resources = set(trace.machine.capacity)
    over = {}
    for step in trace.ran:
        if step.usage is not None:
            task = trace.workflow.tasks[tasks[step.id]]
            found = excesses(declared_peaks(task), measured_demand(step.usage), resources)
            if found:
                over[step.id] = found
    return RunVerdict(evaluate(measured, trace.machine, schedule), "measured", declared, over)


def verdict_line(trace: Trace) -> str:
    """One line: safe or UNSAFE (by which demands), avoidable cva, makespan, the steps' outcome."""
    verdict = judge_run(trace)
    score = verdict.score
    counts = {s: sum(r.status == s for r in trace.steps) for s in ("ok", "failed", "skipped")}
    steps = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    safe = "safe" if score.safe else "UNSAFE"
    by = ""
    if verdict.demand == "measured":
        by = " by measured use"
        if verdict.over:
            n = len(verdict.over)
            by += f" ({n} step{'s' * (n > 1)} over {'their' if n > 1 else 'its'} declaration"
            by += f"; by the declared demands {'safe' if verdict.declared.safe else 'UNSAFE'})"
    guarded = "" if trace.guarded else " (unguarded)"
    return (
        f"{safe}{by}: avoidable cva {score.avoidable_cva:g}, makespan {score.makespan:.3f} s "
        f"on {trace.machine.name!r} under {trace.policy}{guarded} ({steps})"
    )

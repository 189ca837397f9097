"""The OOM demonstration (issue 24, item 6): one agent turn fans out to heavy tool calls on a small machine.

The turn is what the agent runtimes' users report: the model asks for :data:`CALLS` at once —
two 280 MiB indexing calls, then six 56 MiB searches — each a real process that allocates (and
writes) its memory, holds it, and exits. The machine is :data:`CAPACITY_MB` of memory: a cgroup
v1 of its own with that ``memory.limit_in_bytes`` where the kernel lets us make one (the kernel
then OOM-kills a call that does not fit, as it would the agent's container), else a declared
capacity (nothing is killed; an overflow is the measured peak over it).

Five ways to run the turn, in the model's order:

- ``cap k`` for k = 1, 2, 4 and N: an ``asyncio.Semaphore(k)`` around each call, as the SDKs
  cap tool concurrency (by count: they know nothing of memory);
- ``governor``: :class:`peakopt.runtime.governor.Governor` admitting each call with its declared
  demand (its allocation plus :data:`OVERHEAD_MB` for the interpreter).

Every run is recorded as a governor trace (a count cap's through a governor of unbounded
capacity, which admits each call the moment the semaphore lets it go, then judged against the
real machine) and scored with :func:`peakopt.runtime.hindsight.score_trace`, which is what
``peakopt score TRACE`` does: safe or not, and against the hindsight optimum of the actual
durations, the gap. ``python benchmarks/oom_demo.py`` prints the table and draws the picture
(``docs/oom-demo.md`` shows both).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from peakopt.models import Machine
from peakopt.runtime.cgroup_v1 import remove_cgroup
from peakopt.runtime.cgroups import detect
from peakopt.runtime.governor import Governor
from peakopt.runtime.hindsight import score_trace
from peakopt.runtime.trace import Trace

CAPACITY_MB = 512
#: What a Python child holds beyond its allocation (interpreter, libraries), declared on top.
OVERHEAD_MB = 16
#: The turn, in the model's order: (tool, MiB allocated, seconds held).
CALLS: tuple[tuple[str, int, float], ...] = (
    ("index", 280, 1.0),
    ("index", 280, 1.0),
    *(("search", 56, 0.5),) * 6,
)
CAPS = (1, 2, 4, len(CALLS))
#: How often the memory in use is sampled for the picture and the peak.
SAMPLE = 0.01
CHILD = """
import sys, time
block = bytearray(b"\\x01") * (int(sys.argv[1]) << 20)
time.sleep(float(sys.argv[2]))
print(sys.argv[3], len(block) >> 20)
"""


@dataclass
class Outcome:
    """One way of running the turn, measured and judged."""

    strategy: str
    accounting: str
    makespan: float
    peak_mb: float
    kills: int
    failed: int
    declared_peak_mb: float
    safe: bool
    gap: float | None
    trace: Trace
    samples: list[tuple[float, float]] = field(default_factory=list)

    @property
    def overflowed(self) -> bool:
        """Killed by the kernel, a call failed, or more memory in use than the machine has."""
        return self.kills > 0 or self.failed > 0 or self.peak_mb > CAPACITY_MB or not self.safe


class Box:
    """The machine the calls run in: a memory cgroup limited to the capacity, or only a declared one."""

    def __init__(self, *, cgroup: bool = True) -> None:
        found = detect()
        self.folder: Path | None = None
        self.accounting = f"declared {CAPACITY_MB} MiB ({found.reason if cgroup else 'no cgroup asked for'})"
        if cgroup and found.v1 and "memory" in found.v1:
            self.folder = found.v1["memory"] / f"peakopt-oom-demo-{os.getpid()}"
            self.accounting = f"cgroup v1 memory.limit_in_bytes = {CAPACITY_MB} MiB"
        self.pids: set[int] = set()
        self.lock = threading.Lock()  # the sampler's thread reads the pids the event loop changes

    @contextlib.contextmanager
    def opened(self) -> Iterator[Box]:
        """A fresh cgroup for one run (its counters from zero), removed after it."""
        if self.folder is None:
            yield self
            return
        self.folder.mkdir()
        try:
            (self.folder / "memory.limit_in_bytes").write_text(str(CAPACITY_MB << 20))
            yield self
        finally:
            remove_cgroup(self.folder)

    def join(self) -> None:
        """In the child, between fork and exec: move into the cgroup."""
        if self.folder is not None:
            (self.folder / "cgroup.procs").write_text(str(os.getpid()))

    def in_use_mb(self) -> float:
        """Memory in use now: the cgroup's charge less its page cache, else the children's RSS."""
        if self.folder is not None:
            from peakopt.runtime.cgroup_v1 import file_cache

            usage = int((self.folder / "memory.usage_in_bytes").read_text())
            return max(0, usage - file_cache((self.folder / "memory.stat").read_text())) / 2**20
        import psutil

        total = 0
        with self.lock:
            pids = list(self.pids)
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                total += psutil.Process(pid).memory_info().rss
        return total / 2**20

    def kills(self) -> int:
        """OOM kills in the cgroup so far (0 without one)."""
        if self.folder is None:
            return 0
        for line in (self.folder / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0


async def tool_call(box: Box, tool: str, mb: int, seconds: float, tag: str) -> str:
    """One heavy tool call: a process holding ``mb`` MiB for ``seconds``; its output, or an error."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(mb), str(seconds), tag,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, preexec_fn=box.join,
    )  # fmt: skip
    with box.lock:
        box.pids.add(proc.pid)
    out, _ = await proc.communicate()
    with box.lock:
        box.pids.discard(proc.pid)
    if proc.returncode != 0:
        raise RuntimeError(f"{tool} {tag} exited with {proc.returncode}")
    return out.decode().strip()


def demand(mb: int) -> dict[str, float]:
    return {"memory_mb": float(mb + OVERHEAD_MB)}


Samples = list[tuple[float, float]]
#: The turn through LangGraph: ToolNode as it is (an async graph starts every call), and the drop-in.
GRAPHS = ("ToolNode (async)", "GovernedToolNode")


def _recorder(strategy: str, machine: Machine) -> Governor:
    """The governor a run is recorded by: the machine's for the governed runs, else an unbounded one."""
    if strategy in ("governor", "GovernedToolNode"):
        return Governor(machine, name="turn")
    unbounded = sum(mb + OVERHEAD_MB for _, mb, _ in CALLS)
    return Governor(Machine(name="unbounded", capacity={"memory_mb": float(unbounded)}), name="turn")


async def _sampled(box: Box, body: Awaitable[list[bool]]) -> tuple[list[bool], Samples]:
    """``body``'s result (whether each call succeeded), and the memory in use every SAMPLE seconds (when)."""
    samples: Samples = []
    stop = threading.Event()

    def sample() -> None:  # in a thread: starting eight processes blocks the event loop a while
        while not stop.wait(SAMPLE):
            samples.append((time.monotonic(), box.in_use_mb()))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        return await body, samples
    finally:
        stop.set()
        sampler.join()


async def _capped(box: Box, governor: Governor, cap: int | None) -> list[bool]:
    """The turn as asyncio runs it: every call at once, behind a count cap (a semaphore) if any."""
    gate = asyncio.Semaphore(cap) if cap is not None else None

    async def one(k: int, tool: str, mb: int, seconds: float) -> str:
        # the count cap first (a call waits for a slot), then the recording lease
        async with (
            gate if gate is not None else contextlib.nullcontext(),
            governor.admit(tool, demand=demand(mb)),
        ):
            return await tool_call(box, tool, mb, seconds, f"{tool}-{k}")

    results = await asyncio.gather(*(one(k, *c) for k, c in enumerate(CALLS)), return_exceptions=True)
    return [not isinstance(r, BaseException) for r in results]


async def _graph(box: Box, governor: Governor, governed: bool) -> list[bool]:
    """The turn as LangGraph runs it: a fake model emits the calls, a tool node runs them (async)."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import StructuredTool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from peakopt.runtime.adapters.langgraph import GovernedToolNode, governed_tool

    async def heavy(tool: str, mb: int, seconds: float, tag: str) -> str:
        return await tool_call(box, tool, mb, seconds, tag)

    tool = StructuredTool.from_function(coroutine=heavy, name="heavy", description="A heavy tool call.")
    needs = {"heavy": lambda args: demand(args["mb"])}
    # ToolNode as it is, its calls recorded (never held back) by a governor of unbounded capacity
    node = (
        GovernedToolNode([tool], governor=governor, demands=needs, handle_tool_errors=True)
        if governed
        else ToolNode([governed_tool(tool, governor, demand=needs["heavy"])], handle_tool_errors=True)
    )
    calls = [
        {"name": "heavy", "args": {"tool": t, "mb": mb, "seconds": s, "tag": f"{t}-{k}"}, "id": f"call{k}"}
        for k, (t, mb, s) in enumerate(CALLS)
    ]
    model = FakeMessagesListChatModel(responses=[AIMessage("", tool_calls=calls), AIMessage("done")])
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", node)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    out = await builder.compile().ainvoke({"messages": [HumanMessage("go")]})
    return [m.status != "error" for m in out["messages"] if m.type == "tool"]


def run_strategy(box: Box, strategy: str) -> Outcome:
    """Run the turn ``strategy``'s way in a fresh cgroup; measured and scored."""
    machine = Machine(name=f"box-{CAPACITY_MB}", capacity={"memory_mb": float(CAPACITY_MB)})
    governor = _recorder(strategy, machine)
    if strategy in GRAPHS:
        body = _graph(box, governor, strategy == "GovernedToolNode")
    else:
        body = _capped(box, governor, None if strategy == "governor" else int(strategy.split()[1]))
    with box.opened():
        succeeded, samples = asyncio.run(_sampled(box, body))
        kills = box.kills()
    trace = governor.trace().model_copy(update={"machine": machine, "policy": strategy.replace(" ", ":")})
    t0 = governor.started or 0.0  # the trace's time 0: when the first call asked
    samples = [(t - t0, mb) for t, mb in samples if t >= t0]
    row, _ = score_trace(trace, strategy)
    return Outcome(
        strategy=strategy,
        accounting=box.accounting,
        makespan=trace.makespan,
        peak_mb=max((m for _, m in samples), default=0.0),
        kills=kills,
        failed=succeeded.count(False),
        declared_peak_mb=row.peak_ratio.get("memory_mb", 0.0) * CAPACITY_MB,
        safe=row.safe and not row.reasons,
        gap=row.gap,
        trace=trace,
        samples=samples,
    )


def run_all(
    *, cgroup: bool = True, caps: tuple[int, ...] = CAPS, graphs: tuple[str, ...] = GRAPHS
) -> list[Outcome]:
    """The governor, every count cap, the LangGraph runs (in a cgroup if one can be made and ``cgroup``)."""
    box = Box(cgroup=cgroup)
    return [run_strategy(box, s) for s in ("governor", *(f"cap {k}" for k in caps), *graphs)]


def table(outcomes: list[Outcome]) -> str:
    """The outcomes as a Markdown table."""
    lines = [
        "| strategy | peak memory (MiB) | declared at once (MiB) | OOM kills | failed calls "
        "| makespan (s) | safe | gap to hindsight |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for o in outcomes:
        gap = "–" if o.gap is None else f"{100 * o.gap:.1f} %"
        lines.append(
            f"| {o.strategy} | {o.peak_mb:.0f} | {o.declared_peak_mb:.0f} | {o.kills} | {o.failed} | "
            f"{o.makespan:.2f} | {'yes' if o.safe else 'no'} | {gap} |"
        )
    return "\n".join(lines)


def picture(outcomes: list[Outcome], path: Path) -> None:
    """Memory in use over time, one panel per strategy, against the capacity."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(outcomes), 1, figsize=(8, 1.6 * len(outcomes)), sharex=True)
    for ax, o in zip(axes, outcomes, strict=True):
        ax.plot([t for t, _ in o.samples], [m for _, m in o.samples], color="tab:blue", lw=1.2)
        ax.axhline(CAPACITY_MB, color="tab:red", lw=1, ls="--")
        verdict = f"{o.kills} killed" if o.kills else ("safe" if o.safe else "unsafe")
        ax.set_title(f"{o.strategy}: {o.makespan:.2f} s, {verdict}", fontsize=9, loc="left")
        ax.set_ylim(0, CAPACITY_MB * 1.25)
        ax.set_ylabel("MiB", fontsize=8)
    axes[-1].set_xlabel("seconds since the first call asked")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    """Run every strategy; print the table, draw docs/oom-demo.png."""
    outcomes = run_all()
    print(f"{len(CALLS)} calls on {outcomes[0].accounting}\n")
    print(table(outcomes))
    path = Path(__file__).resolve().parents[1] / "docs" / "oom-demo.png"
    picture(outcomes, path)
    print(f"\nwrote {path.relative_to(path.parents[1])}")


if __name__ == "__main__":
    main()

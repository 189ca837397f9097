"""The profile store: what each tool demands and how long it takes, by tool name, learnt from measurements.

The governor looks a call's demand up here when none is declared. A store is one JSON file
(``peakopt profile --store FILE`` adds the measured runs of a command under its tool name)::

    {"format": "peakopt-profiles", "version": 1,
     "tools": {"embed": {"samples": [{"seconds": 1.2, "demand": {"cpu": 1.0, "memory_mb": 812.0}},
                                     ...]}}}

Each sample is one measured run: its wall time and its peak demand per resource. A tool's
**demand** is, per resource, the p90 of its samples (linearly interpolated, as
:func:`peakopt.runtime.profile.percentile`), and its **expected** duration the p90 of their
seconds: a running p90 over the last :data:`WINDOW` samples, so that declarations improve as
calls are measured (:meth:`ProfileStore.observe`) and a tool that grows is noticed.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from peakopt.instances.errors import InputError
from peakopt.models import Task
from peakopt.runtime.profile import percentile

STORE_FORMAT = "peakopt-profiles"
#: How many of a tool's latest samples its p90 is taken over.
WINDOW = 100
#: The quantile a tool's demand and expected duration are.
QUANTILE = 0.9


def _number(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


class ProfileStore:
    """What tools demand, by tool name (see the module docstring); safe to share between threads.

    Parameters
    ----------
    path
        The JSON file it is read from (when it exists) and :meth:`save` writes; None: in memory only.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._lock = threading.Lock()
        self._samples: dict[str, list[dict[str, Any]]] = {}
        if self.path is not None and self.path.exists():
            self._samples = _read(self.path)

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools it knows, sorted."""
        with self._lock:
            return tuple(sorted(self._samples))

    def demand(self, tool: str) -> dict[str, float] | None:
        """The tool's demand: per resource, the p90 of its samples' peaks; None for an unknown tool."""
        with self._lock:
            samples = self._samples.get(tool)
            if not samples:
                return None
            resources = sorted({r for s in samples for r in s["demand"]})
            return {
                r: round(percentile([s["demand"][r] for s in samples if r in s["demand"]], QUANTILE), 6)
                for r in resources
            }

    def samples(self, tool: str) -> list[dict[str, Any]]:
        """The tool's samples kept (the last :data:`WINDOW`), oldest first; empty for an unknown tool."""
        with self._lock:
            return [dict(s, demand=dict(s["demand"])) for s in self._samples.get(tool, ())]

    def expected(self, tool: str) -> float | None:
        """The p90 of the tool's measured seconds; None when unknown or never timed."""
        with self._lock:
            seconds = [s["seconds"] for s in self._samples.get(tool, ()) if s.get("seconds") is not None]
            return round(percentile(seconds, QUANTILE), 6) if seconds else None

    def observe(
        self, tool: str, *, seconds: float | None = None, demand: Mapping[str, float] | None = None
    ) -> None:
        """Add one measured run of ``tool``: its wall time and/or its peak use per resource.

        Raises
        ------
        ValueError
            For a negative or non-finite number.
        """
        used = dict(demand or {})
        for key, value in [("seconds", seconds), *used.items()]:
            if value is not None and not _number(value):
                raise ValueError(f"tool {tool!r}: {key} {value!r} is not a finite number >= 0")
        sample: dict[str, Any] = {"demand": {r: float(v) for r, v in sorted(used.items())}}
        if seconds is not None:
            sample["seconds"] = float(seconds)
        with self._lock:
            kept = self._samples.setdefault(tool, [])
            kept.append(sample)
            del kept[:-WINDOW]

    def add_task(self, task: Task, tool: str | None = None) -> None:
        """Add a profiled task's runs (``peakopt profile``'s ``meta.profile``) under ``tool`` (its id).

        One sample per run: its seconds and peak memory, and the profile's peak of every other
        resource; a task without that meta is one sample of its length and peaks.
        """
        name = tool or task.tool or task.id
        peaks = {r: task.peak(r) for s in task.segments for r in s.demand}
        runs = task.meta.get("profile", {}) if isinstance(task.meta.get("profile"), dict) else {}
        seconds, memory = runs.get("seconds"), runs.get("memory_peak_mb")
        if isinstance(seconds, list) and isinstance(memory, list) and len(seconds) == len(memory) > 0:
            for run_seconds, run_memory in zip(seconds, memory, strict=True):
                self.observe(name, seconds=run_seconds, demand={**peaks, "memory_mb": run_memory})
        else:
            self.observe(name, seconds=task.length, demand=peaks)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the store as JSON (to ``path``, else where it was read from); the file written.

        Raises
        ------
        ValueError
            When it has no path and none is given.
        """
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("the profile store has no file: give save() a path")
        target.write_text(self.to_json(), encoding="utf-8")
        return target

    def to_json(self) -> str:
        """The store as the JSON document :meth:`save` writes."""
        with self._lock:
            data = {
                "format": STORE_FORMAT,
                "version": 1,
                "tools": {t: {"samples": s} for t, s in sorted(self._samples.items())},
            }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _read(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The samples of a store file, checked (naming the file, the tool and the rule)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, "", f"cannot be read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"not JSON ({exc.msg})") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != STORE_FORMAT
        or not isinstance(data.get("tools"), dict)
    ):
        raise InputError(path, "", f'is not a profile store (no "format": "{STORE_FORMAT}" and "tools")')
    found: dict[str, list[dict[str, Any]]] = {}
    for tool, entry in data["tools"].items():
        samples = entry.get("samples") if isinstance(entry, dict) else None
        if not isinstance(samples, list):
            raise InputError(path, f"tools.{tool}", "has no list of samples")
        for k, sample in enumerate(samples):
            where = f"tools.{tool}.samples[{k}]"
            demand = sample.get("demand") if isinstance(sample, dict) else None
            if not isinstance(demand, dict) or not all(_number(v) for v in demand.values()):
                raise InputError(path, where, "demand is not an object of finite numbers >= 0")
            if sample.get("seconds") is not None and not _number(sample["seconds"]):
                raise InputError(path, where, "seconds is not a finite number >= 0")
        found[str(tool)] = samples[-WINDOW:]
    return found

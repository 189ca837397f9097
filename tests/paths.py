"""Where the tests find the shared benchmark data (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PEAKOPT_SHARED", ROOT.parent / "shared"))
J30 = SHARED / "psplib" / "j30"
PATTERSON = SHARED / "psplib" / "patterson"

if not J30.is_dir() or not PATTERSON.is_dir():  # fail loudly: never skip the real-data tests
    raise RuntimeError(f"benchmark data not found under {SHARED}; set PEAKOPT_SHARED")


def j30_files() -> list[Path]:
    """The 480 j30 instance files."""
    return sorted(p for p in J30.glob("j30*_*.sm"))


def patterson_files() -> list[Path]:
    """The 110 Patterson instance files."""
    return sorted(PATTERSON.glob("pat*.rcp"))


def j30_optima() -> dict[str, int]:
    """Instance name (``j301_1``) -> proven optimal makespan, from j30opt.sm."""
    optima = {}
    for line in (J30 / "j30opt.sm").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 3 and all(f.isdigit() for f in fields[:3]):
            optima[f"j30{fields[0]}_{fields[1]}"] = int(fields[2])
    return optima


def patterson_optima() -> dict[str, int]:
    """Instance name (``pat1``) -> optimal makespan, from optimum.csv."""
    rows = (PATTERSON / "optimum.csv").read_text().splitlines()[1:]
    return {name.removesuffix(".rcp"): int(value) for name, value in (r.split(",") for r in rows if r)}


def select_names(variable: str, names: list[str], default: str = "all") -> list[str]:
    """The names a benchmark's environment variable selects: ``all``, ``none``, ``every:K`` or a list."""
    chosen = os.environ.get(variable, default)
    if chosen == "all":
        return names
    if chosen == "none":
        return []
    if chosen.startswith("every:"):
        return names[:: int(chosen.removeprefix("every:"))]
    return [n for n in chosen.split(",") if n in names]

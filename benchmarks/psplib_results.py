"""Print the tables of a PSPLIB run kept as JSON Lines (``PEAKOPT_BENCH_LOG``), as the benchmark prints them.

The j120 runs are measured over several sessions, a stratified selection at a time, and kept in
``docs/results/``; this reads such a file back and prints, per time limit, each solver's figures
in all, per half of the tuning split and on the open instances, the ratio of the mean deviations,
and whether the file covers the whole set::

    python benchmarks/psplib_results.py j120 docs/results/j120-10s.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

# run as a script: the benchmarks' and the tests' helpers, as pytest's pythonpath puts them
sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1] / "tests")]

from psplib_sets import PsplibSet, read_runs, tables  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python benchmarks/psplib_results.py SET RUNS.jsonl", file=sys.stderr)
        return 2
    psplib, path = PsplibSet(argv[0]), Path(argv[1])
    runs = read_runs(psplib, path)
    for limit in sorted({limit for _, _, limit in runs}):
        found = tables(psplib, runs, limit)
        if {"peakopt", "textbook"} <= set(found):
            mine, plain = found["peakopt"], found["textbook"]
            whole = (
                "all" if mine.instances == len(psplib.best()) else f"{mine.instances} of {len(psplib.best())}"
            )
            print(
                f"{psplib.name} at {limit:g} s: peakopt / textbook mean deviation "
                f"{mine.deviation / plain.deviation:.3f} on {whole} instances"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

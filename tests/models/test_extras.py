"""The light core (issue 23 item 5, issue 25 item 7): what each command imports, and missing extras.

Every command's ``--help`` imports none of the heavy libraries; a real small run imports no extra
it does not need; a command (or option) whose extra is missing says so in one ``Error:`` line,
exit 1. The missing library is simulated in a fresh interpreter: ``sys.modules[name] = None``
makes every import of it fail as an uninstalled one does (ModuleNotFoundError naming it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from project_root import ROOT

from peakopt.cli.main import COMMANDS
from peakopt.models import PeakoptError
from peakopt.models.extras import EXTRA_OF, LazyModule, MissingExtra, lazy_face, missing_extra, require

#: What no command's --help may import: the solvers, the extras, NumPy and what comes with them.
HEAVY = (
    "matplotlib",
    "ortools",
    "pulp",
    "dask",
    "distributed",
    "scipy",
    "inspect_ai",
    "psutil",
    "pandas",
    "numpy",
)
#: What a command's --help imports neither: pydantic and the models (their classes are built on
#: import). This is what keeps every --help within 3x `import click` (benchmarks/test_startup.py).
MODELS = ("pydantic", "pydantic_core", "peakopt.models.workflow", "peakopt.models.task")
#: The extras' libraries: what a run imports only when it needs that extra.
EXTRAS = ("matplotlib", "dask", "distributed", "psutil", "inspect_ai")

#: Blocks the modules named in $BLOCK (as if not installed), runs ``peakopt ARGS``, then writes
#: the names of the imported modules to $PROBE_OUT.
PROBE = """
import atexit, json, os, sys
for name in filter(None, os.environ.get("BLOCK", "").split(",")):
    sys.modules[name] = None
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps(sorted(sys.modules))))
from peakopt.cli.main import main
sys.argv = ["peakopt", *sys.argv[1:]]
main()
"""


def peakopt(
    tmp_path: Path, *args: str, block: tuple[str, ...] = ()
) -> tuple[int, set[str], subprocess.CompletedProcess[str]]:
    """Exit code, imported modules (top-level names) and the process of a fresh ``peakopt ARGS``."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PROBE_OUT": str(out), "BLOCK": ",".join(block), "COLUMNS": "100"},
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    names = {m.split(".")[0] for m in json.loads(out.read_text())} if out.exists() else set()
    return done.returncode, names, done


def full_names(tmp_path: Path) -> set[str]:
    """Every module (not only top-level names) the last :func:`peakopt` run imported."""
    return set(json.loads((tmp_path / "modules.json").read_text()))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_imports_no_heavy_library(tmp_path: Path, command: str) -> None:
    code, names, done = peakopt(tmp_path, command, "--help")
    assert code == 0, done.stderr
    assert "Usage: peakopt" in done.stdout
    assert sorted(names & set(HEAVY)) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_imports_no_pydantic_nor_model(tmp_path: Path, command: str) -> None:
    code, _, done = peakopt(tmp_path, command, "--help")
    assert code == 0, done.stderr
    assert sorted(full_names(tmp_path) & set(MODELS)) == []


def score_input(tmp_path: Path) -> Path:
    """Two schedules of the bundled refund workflow on its worker machine."""
    path = tmp_path / "answers.jsonl"
    # what `peakopt schedule bundled:refund -m serial` gives
    serial = {"lookup_order": 0, "fraud_score": 0.3, "history_scan": 5.1, "policy_search": 8.3, "decide": 9.8}
    rows = [
        {"workflow": "refund", "machine": "worker", "source": "serial", "starts": serial},
        {"workflow": "refund", "machine": "worker", "source": "llm", "response": json.dumps(serial)},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_score_input_is_what_the_oracle_reads(tmp_path: Path) -> None:
    from peakopt.instances import load

    suite = load("bundled:refund")
    (workflow,) = suite.workflows
    answers = [json.loads(line) for line in score_input(tmp_path).read_text().splitlines()]
    assert set(answers[0]["starts"]) == {task.id for task in workflow.tasks}


@pytest.mark.parametrize(
    ("args", "not_imported"),
    [
        (["validate", "bundled:refund"], HEAVY),
        (["convert", "bundled:refund", "-o", "refund.json"], HEAVY),
        (["schedule", "bundled:refund", "-m", "asap,serial"], ("ortools", "pulp", *EXTRAS)),
        (["score", "bundled:refund", "--schedules", "answers.jsonl"], ("ortools", "pulp", *EXTRAS)),
        (["solve", "bundled:refund", "-o", "refs.jsonl"], EXTRAS),
        (["generate", "--seed", "3", "-o", "suite.json"], ("ortools", "pulp", *EXTRAS)),
        (["prompt", "bundled:refund", "-o", "prompts.jsonl"], HEAVY),
    ],
    ids=["validate", "convert", "schedule", "score", "solve", "generate", "prompt"],
)
def test_a_run_imports_no_extra_it_does_not_need(
    tmp_path: Path, args: list[str], not_imported: tuple[str, ...]
) -> None:
    score_input(tmp_path)
    code, names, done = peakopt(tmp_path, *args)
    assert code == 0, done.stderr
    assert sorted(names & set(not_imported)) == []


def test_a_report_of_scores_loads_no_solver_nor_extra(tmp_path: Path) -> None:
    score_input(tmp_path)
    code, _, done = peakopt(tmp_path, "score", "bundled:refund", "-s", "answers.jsonl", "-o", "scores.jsonl")
    assert code == 0, done.stderr
    code, names, done = peakopt(tmp_path, "report", "scores.jsonl")
    assert code == 0, done.stderr
    assert sorted(names & {"ortools", "pulp", *EXTRAS}) == []


def test_the_heuristics_load_no_exact_solver() -> None:
    probe = "import sys, peakopt.solver.heuristics; print(sorted({m.split('.')[0] for m in sys.modules}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert not {"ortools", "pulp", "pandas"} & set(json.loads(done.stdout.replace("'", '"')))


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # never a traceback
    return lines[0]


@pytest.mark.parametrize(
    ("args", "block", "message"),
    [
        (
            ["plot", "bundled:refund", "-m", "asap", "-o", "refund.png"],
            ("matplotlib",),
            "Error: peakopt plot needs the plot extra: pip install 'peakopt[plot]'",
        ),
        (
            ["report", "answers.scores.jsonl", "-o", "report.html"],
            ("matplotlib",),
            "Error: report -o (the HTML report) needs the plot extra: pip install 'peakopt[plot]'",
        ),
        (
            ["solve", "bundled:refund", "--dask-local", "1", "-o", "refs.jsonl"],
            ("distributed", "dask"),
            "Error: --dask-local needs the dask extra: pip install 'peakopt[dask]'",
        ),
        (
            ["profile", "--", sys.executable, "-c", "pass"],
            ("psutil",),
            "Error: peakopt profile needs the runtime extra: pip install 'peakopt[runtime]'",
        ),
        (
            ["run", "commands.json", "--machine", "worker", "-o", "trace.json"],
            ("psutil",),
            "Error: peakopt run needs the runtime extra: pip install 'peakopt[runtime]'",
        ),
    ],
    ids=["plot", "report-html", "dask", "profile", "run"],
)
def test_a_missing_extra_is_one_error_line(
    tmp_path: Path, args: list[str], block: tuple[str, ...], message: str
) -> None:
    (tmp_path / "answers.scores.jsonl").write_text("")
    (tmp_path / "commands.json").write_text("{}")
    code, _, done = peakopt(tmp_path, *args, block=block)
    assert (code, one_error_line(done)) == (1, message)
    assert not (tmp_path / args[-1]).exists()  # refused before any work


def test_without_the_runtime_extra_the_judge_still_runs(tmp_path: Path) -> None:
    score_input(tmp_path)
    code, _, done = peakopt(
        tmp_path,
        "score",
        "bundled:refund",
        "--schedules",
        "answers.jsonl",
        "--json",
        block=("psutil", "matplotlib", "dask", "distributed", "inspect_ai"),
    )
    assert code == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])


def test_an_extra_imported_without_require_is_still_one_line(tmp_path: Path) -> None:
    # the group's safety net: a command that imports an extra's library directly
    args = ("plot", "bundled:refund", "-m", "asap", "-o", "x.png")
    code, _, done = peakopt(tmp_path, *args, block=("matplotlib.figure",))
    assert code == 1
    assert one_error_line(done) == "Error: peakopt plot needs the plot extra: pip install 'peakopt[plot]'"


def test_require_imports_or_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert require("json", "reading").__name__ == "json"
    for name in ("matplotlib", "matplotlib.figure"):  # another test may have imported it
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(MissingExtra) as raised:
        require("matplotlib.figure", "a picture")
    assert isinstance(raised.value, PeakoptError)
    assert str(raised.value) == "a picture needs the plot extra: pip install 'peakopt[plot]'"


def test_a_library_that_is_no_extras_is_not_reported_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # a broken install (a dependency of the extra's library missing) stays the error it is
    monkeypatch.setitem(sys.modules, "no_such_dependency", None)
    with pytest.raises(ModuleNotFoundError):
        require("no_such_dependency", "something")
    assert missing_extra(ModuleNotFoundError("x", name="pyparsing")) is None
    assert missing_extra(ImportError("cannot import name 'x'", name="matplotlib")) is None
    assert missing_extra(ModuleNotFoundError("x", name="distributed.client")) == "dask"


def test_a_lazy_module_imports_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    lazy = LazyModule("json", "reading")
    assert lazy.dumps([1]) == "[1]"
    monkeypatch.setitem(sys.modules, "psutil", None)
    with pytest.raises(MissingExtra, match="measuring needs the runtime extra"):
        _ = LazyModule("psutil", "measuring").Process


def test_a_lazy_face_loads_a_name_once_and_lists_each_name_once() -> None:
    namespace: dict[str, object] = {"__name__": "face"}
    get, listed = lazy_face(namespace, {"dumps": "json"})
    assert "dumps" not in namespace and listed() == ["__name__", "dumps"]
    assert get("dumps") is json.dumps and namespace["dumps"] is json.dumps  # stored: no second look-up
    assert listed() == ["__name__", "dumps"]
    with pytest.raises(AttributeError, match="module 'face' has no attribute 'loads'"):
        get("loads")


def test_every_extras_library_is_named_in_pyproject() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRA_OF.values()) <= set(extras)


def test_solve_help_lists_the_registered_backends() -> None:
    from peakopt.solver import BACKENDS
    from peakopt.solver.backends import BUILT_IN

    assert tuple(BACKENDS) == BUILT_IN

"""Shared test settings: hypothesis profiles, a cache of the run's own, the ``backend`` parameter."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# CI machines are noisy: no per-example deadline, and a fixed budget.
settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# No test writes into the user's own cache (~/.cache/peakopt): every process of the run, and the
# subprocesses the tests start, get a cache of this run's own; a test that studies the cache sets
# PEAKOPT_CACHE itself (monkeypatch).
_CACHE = tempfile.mkdtemp(prefix="peakopt-test-cache-")
os.environ["PEAKOPT_CACHE"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

# pytest-xdist's workers inherit COLUMNS=80 (and LINES) from their launcher, and the tables honour
# COLUMNS: without it, every process of the run has one width whether run with -n or not (a piped
# stderr's, peakopt.cli.messages.PIPED_WIDTH). A test that studies widths sets COLUMNS itself.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


#: The exact backends built in (``peakopt.solver.BACKENDS``, held equal by test_solver_backends.py;
#: not imported here, so that collecting a test does not load OR-Tools).
EXACT_BACKENDS = ("cpsat", "milp")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--backends``: the exact backends the solver tests run on (PyJobShop's ``--solvers``)."""
    parser.addoption(
        "--backends",
        nargs="+",
        default=list(EXACT_BACKENDS),
        choices=EXACT_BACKENDS,
        help="exact solver backends that tests taking a `backend` argument run on (default: all)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test taking ``backend`` runs once per backend of ``--backends``: a property of a solve holds
    for every exact backend, without each test looping over them by hand. With hypothesis' ``@given``,
    ``backend`` comes first: its positional strategies fill the rightmost arguments."""
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", metafunc.config.getoption("backends"))

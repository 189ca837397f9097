"""What a stress campaign under noise is (``peakopt stress --samples/--noise``): its settings and rows.

:class:`NoiseRun` holds how methods are judged (the noise, the number of scenarios, the execution
policy, the bounds' CP-SAT limit) and what of it keys the rows; the campaign adds the reference
rows :data:`OPTIMUM_ROW` and :data:`ROBUST_ROW` beside the methods (see
:mod:`peakopt.campaign.stress_noise`, which runs them).
"""

from __future__ import annotations

from dataclasses import dataclass

from peakopt.oracle.uncertain.names import Execution
from peakopt.oracle.uncertain.scenarios import Noise

#: The row of the proven optimum executed by ``--execute`` (a campaign under noise).
OPTIMUM_ROW = "optimum"
#: The row of the robust reference (``solve --robust``) executed as a partial-order schedule.
ROBUST_ROW = "robust"
#: Rows a campaign under noise adds beside its methods: the references, executed.
REFERENCE_ROWS = (OPTIMUM_ROW, ROBUST_ROW)
#: The execution of a method judged through its online form (no ``--execute``).
ONLINE = "online"


@dataclass(frozen=True)
class NoiseRun:
    """How ``peakopt stress --noise`` judges methods (see :mod:`peakopt.campaign.stress_noise`).

    Parameters
    ----------
    noise
        PeakBench's uniform perturbation of durations (and demands) for every task; None: each
        task's own ``varies`` (a task without one keeps its nominal figures).
    samples
        Scenarios per workflow, the same for every method and machine (common random numbers).
    execute
        The execution policy applied to each method's nominal plan; None: each method's online form.
    bound_limit
        Seconds of CP-SAT search per scenario for its perfect-information bound.
    """

    noise: Noise | None
    samples: int = 100
    execute: Execution | None = None
    bound_limit: float = 1.0

    @property
    def params(self) -> dict[str, object]:
        """What the rows' keys hold of these settings (the CP-SAT limit of the bounds is not one)."""
        return {
            "noise": None if self.noise is None else self.noise.duration,
            "noise_demand": None if self.noise is None else self.noise.demand,
            "samples": self.samples,
            "execute": self.execute or ONLINE,
        }

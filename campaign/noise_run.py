"""What a stress campaign under noise is (``peakopt stress --samples/--noise``): its settings and rows.

:class:`NoiseRun` holds how methods are judged (the noise, the number of scenarios, the execution
policy, the bounds' CP-SAT limit) and what of it keys the rows; the campaign adds the reference
rows :data:`OPTIMUM_ROW` and :data:`ROBUST_ROW` beside the methods (see
:mod:`peakopt.campaign.stress_noise`, which runs them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from peakopt.models import Workflow
from peakopt.oracle.uncertain.literature import draw_literature
from peakopt.oracle.uncertain.names import Execution, LiteratureDistribution
from peakopt.oracle.uncertain.scenarios import Noise, Scenarios, draw

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
        task's own ``varies`` (a task without one keeps its nominal figures), or ``distribution``.
    samples
        Scenarios per workflow, the same for every method and machine (common random numbers).
    execute
        The execution policy applied to each method's nominal plan; None: each method's online form.
    bound_limit
        Seconds of CP-SAT search per scenario for its perfect-information bound.
    distribution
        One of the stochastic RCPSP literature's five distributions for every task's duration,
        its nominal duration as mean, demands nominal (:mod:`peakopt.oracle.uncertain.literature`);
        never with ``noise``.
    """

    noise: Noise | None
    samples: int = 100
    execute: Execution | None = None
    bound_limit: float = 1.0
    distribution: LiteratureDistribution | None = None

    def __post_init__(self) -> None:
        if self.noise is not None and self.distribution is not None:
            raise ValueError("PeakBench's noise and a literature distribution are two protocols: choose one")

    def check(self, workflow: Workflow) -> None:
        """Raise what :meth:`draw` would raise on ``workflow``, before anything is run or stored.

        Raises
        ------
        peakopt.oracle.uncertain.literature.ProtocolError
            A duration the distribution is not defined for.
        peakopt.oracle.uncertain.scenarios.NoiseError
            A draw under ``noise`` the model does not allow.
        """
        replace(self, samples=0).draw(workflow, 0)  # both draws check the whole workflow first

    def draw(self, workflow: Workflow, seed: int) -> Scenarios:
        """The campaign's scenarios of ``workflow``: ``samples`` of them, seeded by ``seed``.

        Raises
        ------
        peakopt.oracle.uncertain.literature.ProtocolError
            A duration the distribution is not defined for.
        peakopt.oracle.uncertain.scenarios.NoiseError
            A draw under ``noise`` the model does not allow.
        """
        if self.distribution is not None:
            return draw_literature(workflow, self.samples, self.distribution, seed=seed)
        return draw(workflow, self.samples, seed=seed, noise=self.noise)

    @property
    def params(self) -> dict[str, object]:
        """What the rows' keys hold of these settings (the CP-SAT limit of the bounds is not one).

        ``distribution`` only when one is drawn from, so that the rows stored before it existed
        keep their keys.
        """
        drawn = {} if self.distribution is None else {"distribution": self.distribution}
        return {
            "noise": None if self.noise is None else self.noise.duration,
            "noise_demand": None if self.noise is None else self.noise.demand,
            **drawn,
            "samples": self.samples,
            "execute": self.execute or ONLINE,
        }

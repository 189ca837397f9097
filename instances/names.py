"""The names the readers offer as choices: input formats and CPU readings, as plain constants.

Here, apart from the readers, because the command line builds its options from them: a
command's ``--help`` imports this module and no pydantic, no model and no reader.
"""

from __future__ import annotations

#: The input formats a file may be read as (``--format``).
FORMATS = ("json", "jsonl", "sm", "rcp", "rasc")

#: How a PeakBench context's CPU cost becomes a demand: its peak or its average (``--cpu``).
CPU_CHOICES = ("peak", "avg")

#: The sizes of a generated suite's tiers: the bundled default has 150 easy, 100 medium, 50 hard
#: workflows (seed 0).
DEFAULT_COUNTS = {"easy": 150, "medium": 100, "hard": 50}

#: The kinds of large stress instance (``generate --large --kind``).
KINDS = ("layered", "rcpsp")

#: The settings ``peakopt prompt --setting`` takes, one per context of
#: :data:`peakopt.instances.contexts.SETTING_CONTEXTS` (a test checks that they agree).
SETTINGS = ("rasc", "durations", "cpu", "memory", "cpu-memory", "no-profile")

#: What a prompt asks for: a schedule, or the dependency structure.
TASKS = ("schedule", "plan")

#: The splits of a suite's pairs (``--split``, ``-T split=``): all of them, or the ``hard`` ones no
#: trivial answer solves optimally (:mod:`peakopt.campaign.floor`).
SPLITS = ("all", "hard")

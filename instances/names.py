"""The names the readers offer as choices: input formats and CPU readings, as plain constants.

Here, apart from the readers, because the command line builds its options from them: a
command's ``--help`` imports this module and no pydantic, no model and no reader.
"""

from __future__ import annotations

#: The input formats a file may be read as (``--format``).
FORMATS = ("json", "jsonl", "sm", "rcp", "rasc")

#: How a PeakBench context's CPU cost becomes a demand: its peak or its average (``--cpu``).
CPU_CHOICES = ("peak", "avg")

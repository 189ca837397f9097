"""The fields score rows are grouped by (``--by``), as plain constants.

Here, apart from :mod:`peakopt.oracle.tables.aggregate` (pydantic, the rows, NumPy), because
the command line builds its options from them: ``score --help`` imports this module and no
pydantic and no model.
"""

from __future__ import annotations

#: What a scheduling score row may be grouped by.
GROUP_KEYS = ("source", "setting", "machine", "tier", "workflow")
#: What a planning score row may be grouped by.
PLAN_GROUP_KEYS = ("source", "setting", "tier", "workflow")

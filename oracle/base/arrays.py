"""The NumPy array types of the oracle's vectorised code, named once.

Imported only by modules that use NumPy anyway (the scenarios, the vectorised scorers, the
Monte Carlo figures): nothing else of the oracle loads NumPy through this room.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: Float64 arrays: times, loads, figures per row.
Floats = npt.NDArray[np.float64]
#: Boolean arrays: masks per row or per task.
Bools = npt.NDArray[np.bool_]
#: Int64 arrays: grid integers.
Ints = npt.NDArray[np.int64]

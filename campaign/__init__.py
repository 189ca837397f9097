"""Everything that runs many items resumably in parallel.

The executors (local processes, Dask), limits and watchdogs, the results store, the one
reference runner of ``solve`` and ``stress``, the stress campaign and the adversarial search.
"""

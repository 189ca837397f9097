"""peakopt as an Inspect AI benchmark: the tasks ``peakopt/schedule`` and ``peakopt/plan``.

Inspect finds the tasks through the ``inspect_ai`` entry point
(:mod:`peakopt.evals._registry`)::

    inspect eval peakopt/schedule --model openai/gpt-4o -T suite=bundled:default -T setting=rasc

This package is the only place that imports ``inspect_ai``, and only in the
modules that need it: :mod:`peakopt.evals.logs`, which the command line uses to
read ``.eval`` logs, imports it when a log is read, so that the command line
starts without it (and says how to install it when a log is given).
"""

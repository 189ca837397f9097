"""Errors of the heuristics layer, each fit for one ``Error:`` line."""

from __future__ import annotations

from peakopt.models import PeakoptError


class MethodError(PeakoptError, ValueError):
    """A method name that is unknown or malformed (a usage error)."""


class MachineNeeded(PeakoptError, ValueError):
    """A resource-aware method was run without a machine."""


class PluginError(PeakoptError, RuntimeError):
    """A plug-in heuristic that cannot be loaded, raised, or returned an unusable result.

    The message always names the plug-in.
    """

"""Heuristic schedulers, runtime admission policies and plug-ins (see :mod:`.methods` for names)."""

from peakopt.solver.heuristics.activity_list import genetic_schedule
from peakopt.solver.heuristics.arrays import Problem, compile_problem
from peakopt.solver.heuristics.errors import MachineNeeded, MethodError, PluginError
from peakopt.solver.heuristics.identity import package_code
from peakopt.solver.heuristics.methods import METHOD_PATTERNS, Method, method_names, parse_method, run
from peakopt.solver.heuristics.online import online_policy, policy_factory
from peakopt.solver.heuristics.plugins import GROUP, Plugin, load_plugin
from peakopt.solver.heuristics.portfolio import EFFORTS, best_schedule
from peakopt.solver.heuristics.rules import RULE_NAMES

__all__ = [
    "EFFORTS",
    "GROUP",
    "METHOD_PATTERNS",
    "RULE_NAMES",
    "MachineNeeded",
    "Method",
    "MethodError",
    "Plugin",
    "PluginError",
    "Problem",
    "best_schedule",
    "compile_problem",
    "genetic_schedule",
    "load_plugin",
    "method_names",
    "online_policy",
    "package_code",
    "parse_method",
    "policy_factory",
    "run",
]

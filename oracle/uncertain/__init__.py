"""Execution under uncertainty: scenarios, the event-driven simulator and the policies it runs.

The one home of the policy idea (the online interface, the deciders, the built-in policies);
imports the base room and the judge only.
"""

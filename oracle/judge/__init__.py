"""The metric contract, exact: the event sweep, the metrics, the verdict on one schedule.

Imports the base room only (and peakopt.models).
"""

"""Presentation: Gantt and load-against-capacity pictures, the HTML report, and the tables' cells.

Only the command line imports this package, and nothing here loads matplotlib
on import: :mod:`peakopt.plots.columns` (number and percent formatting, the
summary columns) serves the terminal tables without it.
"""

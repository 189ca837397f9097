"""Vectorised copies of the judge (NumPy), for many schedules or realisations of one workflow.

Held equal to the judge by property tests; imports the base room and the judge only.
"""

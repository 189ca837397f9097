"""The base of every error peakopt reports to users as one line."""


class PeakoptError(Exception):
    """An error with a message fit for one ``Error:`` line (bad input, a refused run)."""

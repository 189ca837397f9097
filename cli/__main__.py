"""``python -m peakopt.cli``."""

from peakopt.cli.main import main

main()

"""The independent judge: scores any schedule; depends on peakopt.models only."""

"""Tables and statistics on top: score rows, aggregates, intervals, leaderboard, planning, Monte Carlo.

May import every other room of the oracle; none imports it.
"""

"""``peakopt/plan`` (PeakBench's Dimension I): placeholder until the planning prompts land."""

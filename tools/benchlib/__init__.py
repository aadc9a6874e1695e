"""The pieces of tools/bench: the synthetic home, the helper processes, the analysis."""

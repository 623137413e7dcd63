"""Whole models whose attention the pages show: ``designed`` (a hand-built transformer with readable heads)
and ``minilm`` (all-MiniLM-L6-v2 in NumPy from its real weights, loaded on demand)."""

"""Whole models whose attention the pages show.

``block`` (the post-LN layer loop the toy models share), ``designed`` (a hand-built transformer with
readable heads), ``random`` (the same block with seeded untrained weights), ``induction`` (a
hand-built two-layer causal model whose heads copy), ``minilm`` (all-MiniLM-L6-v2 in NumPy from its
real weights, loaded on demand)."""

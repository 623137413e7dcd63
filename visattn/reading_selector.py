"""The reading selector's controls, shared by the multi-head, pretrained and reading lessons: which
reading of the attention (weights | weights × ‖value‖ | mean | max | rollout | flow), its colour
scale (linear | log | power γ; Blues | Viridis | Greys; 0…1 or 0…max) and the lines' filters (edge
threshold, top-k edges per query). Each lesson adds ``controls(prefix)`` to its ``CONTROLS`` under
its own URL prefix (``mh_view``, ``pt_view``, ``rd_view``, …)."""

from __future__ import annotations

from .controls import Control
from .display import DEFAULT_GAMMA, GAMMA_RANGE, PALETTES, RANGES, SCALES
from .reading import READINGS

TOP_K = (0, 1, 2, 3, 5)  # strongest edges kept per query in the lines (0: every edge)
THRESHOLD = (0.0, 0.5, 0.01)  # the lines' edge threshold: lowest, highest, step
# What each reading's cells hold, and what it measures: one label table each, keyed by it.
LABELS = {"reading.view_about": READINGS, "reading.view_values": READINGS}


def controls(prefix: str) -> tuple[Control, ...]:
    """The selector's controls under ``prefix`` (``"mh"`` → ``mh_view``, ``mh_scale``, …)."""
    gamma_lo, gamma_hi, gamma_step = GAMMA_RANGE
    thr_lo, thr_hi, thr_step = THRESHOLD
    return (
        Control(f"{prefix}_view", "weights", options=READINGS, labels="reading.views"),
        Control(f"{prefix}_scale", "linear", options=SCALES, labels="reading.scales"),
        Control(f"{prefix}_palette", "Blues", options=PALETTES, labels="reading.palettes"),
        Control(f"{prefix}_range", "unit", options=RANGES, labels="reading.ranges"),
        Control(f"{prefix}_topk", 0, options=TOP_K),
        Control(f"{prefix}_gamma", DEFAULT_GAMMA, lo=gamma_lo, hi=gamma_hi, step=gamma_step),
        Control(f"{prefix}_thr", 0.02, lo=thr_lo, hi=thr_hi, step=thr_step),
    )

"""What the screen can show, decided without drawing (lessons and figures both follow it).

``MAX_TEXT_CELLS``: above this many rows or columns a heatmap prints no number in its cells (they
are in the hover). The colour-scale choices every attention figure offers (``SCALES``, ``PALETTES``,
``RANGES``; :mod:`visattn.figures.colour` builds them). The grids: the values a slider can take that
an in-figure slider precomputes (:mod:`visattn.figures.live` draws them; a lesson computes its steps
on them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # display reads a model's config; it imports no model at run time
    from .models.causal import Decoder
    from .models.encoder import BertEncoder

# A figure's text on a projector: the presenter's font size (ui.frame.font_size), and the smallest
# any text may shrink to there (cell numbers, smaller panels) and elsewhere.
PRESENTER_FONT, PRESENTER_MIN_TEXT, MIN_TEXT = 20, 18, 9

MAX_TEXT_CELLS = 24  # above this many rows or columns, numbers are in the hover only
SCALES = ("linear", "log", "power")  # how a value maps to a colour
PALETTES = ("Blues", "Viridis", "Greys")  # Viridis: colour-blind safe; Greys: print
RANGES = ("unit", "max")  # 0…1, or 0…the largest value drawn
DEFAULT_GAMMA = 0.5  # the power scale's γ
GAMMA_RANGE = (0.1, 3.0, 0.05)  # the γ control: lowest, highest, step


def with_value(grid: Sequence[float], value: float) -> tuple[tuple[float, ...], int]:
    """The grid, sorted, with ``value`` in it exactly (inserted when no grid value equals it), and
    its index."""
    values = sorted({float(v) for v in grid} | {float(value)})
    return tuple(values), values.index(float(value))


def even_grid(lo: float, hi: float, step: float, most: int = 101) -> tuple[float, ...]:
    """At most ``most`` values from ``lo`` to ``hi`` (both included), each a multiple of ``step``
    from ``lo`` — values a Streamlit slider with that range and step can take, spread evenly."""
    if hi <= lo or step <= 0:
        return (float(lo),)
    n = int(np.floor((hi - lo) / step + 1e-9))  # steps from lo to hi
    picks = np.unique(np.round(np.linspace(0, n, min(n + 1, most))).astype(int))
    return tuple(sorted({short(lo + k * step) for k in picks} | {float(hi)}))


def log_grid(lo: float, hi: float, step: float, most: int = 41) -> tuple[float, ...]:
    """At most ``most`` values from ``lo`` to ``hi``, spaced evenly on a log scale (for a bandwidth
    or a scale) and rounded to multiples of ``step``; duplicates after rounding are dropped."""
    if hi <= lo or lo <= 0 or step <= 0:
        return (float(lo),)
    raw = np.geomspace(lo, hi, most)
    return tuple(sorted({short(round(v / step) * step) for v in raw if round(v / step) > 0}))


def percent(share: float) -> str:
    """A share (0 … 1) as a whole percentage, "42 %"; a dash where there is none (NaN)."""
    return "—" if math.isnan(share) else f"{100 * share:.0f} %"


def short(v: float) -> float:
    """``v`` without the float noise of a sum of steps (0.15000000000000002 → 0.15): what a slider
    shows."""
    return float(f"{v:.12g}")


BYTE_UNITS = ((10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB"))  # decimal: 1 MB = 10⁶ B


def byte_size(n: int, digits: int = 3) -> str:
    """``n`` bytes in decimal units (1 kB = 10³ B, 1 MB = 10⁶ B, 1 GB = 10⁹ B, as disk makers and
    SI count, not 2¹⁰ …) with ``digits`` significant digits: 4 718 592 → "4.72 MB"."""
    n = int(n)
    for size, unit in BYTE_UNITS:
        value = float(f"{n / size:.{digits}g}")  # rounded first: 999 999 B is "1.00 MB"
        if value >= 1:
            decimals = max(digits - 1 - int(np.floor(np.log10(value))), 0)
            return f"{value:,.{decimals}f} {unit}"
    return f"{n} B"


# What a family adds to attention that changes its maps, named as a decoder's config names it
# (``LlamaConfig.mechanisms``; "rope_<kind>" is RoPE scaling of that kind): the pages say each of
# these in one sentence. The others (fused projections, post-norm blocks, no output head) leave the
# maps' formula as it is.
MAP_MECHANISMS = (
    "qk_norm_head",
    "qk_norm_whole",
    "qk_norm",
    "rope_scaling",
    "partial_rotary",
    "sliding_window",
    "window",
    "softcap",
    "sinks",
    "local_rope_base",
)


def map_mechanisms(names: Sequence[str]) -> list[tuple[str, str]]:
    """(mechanism, its kind) for each of ``names`` that changes the maps, in order: a RoPE
    scaling "rope_yarn" is ("rope_scaling", "yarn"); the kind of the others is ""."""
    found = []
    if "local_global" in names:  # windows on some layers only: "window", not "sliding_window"
        names = ["window" if n == "sliding_window" else n for n in names if n != "local_global"]
    for name in names:
        if name.startswith("rope_"):
            found.append(("rope_scaling", name.removeprefix("rope_")))
        elif name in MAP_MECHANISMS:
            found.append((name, ""))
    return found


# What changes one layer's maps (the label table "models.layer_mechanisms"): a layer without RoPE,
# a windowed layer, soft-capped scores, learned sinks.
LAYER_MECHANISMS = ("no_rope", "window", "softcap", "sinks")


def layer_mechanisms(model: Decoder | BertEncoder, layer: int) -> list[tuple[str, dict[str, str]]]:
    """(mechanism, its numbers as text) for what changes layer ``layer``'s maps in ``model``: no
    RoPE there (its config's ``rope_layers``), and what its ``attention_args(layer)`` passes to
    the attention (``window``, ``softcap``, ``sinks``; a model without that method: nothing)."""
    found: list[tuple[str, dict[str, str]]] = []
    rope_layers = getattr(getattr(model, "config", None), "rope_layers", ())
    if layer < len(rope_layers) and not rope_layers[layer]:
        found.append(("no_rope", {}))
    attention_args = getattr(model, "attention_args", None)
    args = attention_args(layer) if callable(attention_args) else {}
    if args.get("window") is not None:
        found.append(("window", {"window": f"{int(args['window']):,}"}))
    if args.get("softcap") is not None:
        found.append(("softcap", {"cap": f"{float(args['softcap']):g}"}))
    if args.get("sinks") is not None:
        found.append(("sinks", {}))
    return found


# --- a model's layers and heads as the pages name and lay them out (counted from 1) ---------------
def layer_name(layer: int) -> str:
    """A layer as the page names it, counted from 1: ``layer_name(3)`` is "L4"."""
    return f"L{layer + 1}"


def head_label(head: int) -> str:
    """A head within its layer, counted from 1: ``head_label(1)`` is "H2"."""
    return f"H{head + 1}"


def head_name(layer: int, head: int) -> str:
    """A head as the page names it, counted from 1: ``head_name(3, 1)`` is "L4·H2"."""
    return f"L{layer + 1}·H{head + 1}"


def paper_name(layer: int, head: int) -> str:
    """The same head as papers name it, layers and heads counted from 0 ("layer.head", as Olsson
    et al. 2022 and Wang et al. 2023 write GPT-2's heads): ``paper_name(3, 1)`` is "3.1", the
    page's "L4·H2"."""
    return f"{layer}.{head}"


def grid_rows(n: int) -> int:
    """Rows of a grid of n cells: the largest divisor of n up to √n (12 → 3 × 4, 6 → 2 × 3)."""
    return max(d for d in range(1, int(np.sqrt(n)) + 1) if n % d == 0)

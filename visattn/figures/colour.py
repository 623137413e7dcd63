"""Colour scales for every attention figure: linear, log or power γ; Blues, Viridis or Greys; 0…1
or 0…the largest value. :func:`colour_scale` returns the keyword arguments the heatmap and grid
builders take, so one choice colours every figure of a page alike."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from plotly.colors import sample_colorscale

from ..checks import as_array, positive_float
from ..display import DEFAULT_GAMMA, PALETTES, RANGES, SCALES
from ..errors import InputError
from ..reading import _choice
from .core import _scale

STOPS = 32  # colour stops of a warped scale
DEFAULT_DECADES = 3.0  # log scale: values below max·10^−decades get the lowest colour


def colour_scale(
    values: ArrayLike | None = None,
    *,
    scale: str = "linear",
    palette: str = "Blues",
    value_range: str = "unit",
    gamma: float = DEFAULT_GAMMA,
    decades: float = DEFAULT_DECADES,
) -> dict:
    """Keyword arguments for :func:`heatmap` and :func:`head_grid`: ``colorscale``, plus ``zmin`` =
    0 and ``zmax`` for ``value_range="max"`` (with "unit" both builders keep their own 0…1).

    ``scale``: "linear"; "power" — a value at fraction u of the range gets the palette's colour at
    u^γ (γ < 1 brightens small weights); "log" — colour at 1 + log10(u) / decades (values more than
    ``decades`` orders of magnitude below the top get the lowest colour). The data are not
    transformed: the scale itself is warped (many stops), so hovers and the colour bar show true
    values. ``palette``: "Blues", "Viridis" (colour-blind safe), "Greys" (print). ``value_range``:
    "unit" (0…1, the weights' scale) or "max" (0…the largest of ``values``, for readings whose
    entries are small or above 1)."""
    scale = _choice(scale, "scale", SCALES)
    palette = _choice(palette, "palette", PALETTES)
    value_range = _choice(value_range, "value_range", RANGES)
    zmax = 1.0
    if value_range == "max":
        if values is None:
            raise InputError(
                "reading_values", "value_range='max' needs the view's values to find its maximum."
            )
        top = float(np.max(as_array(values, "values")))
        zmax = top if top > 0 else 1.0
    v = np.linspace(0.0, 1.0, STOPS + 1)  # colour fractions, evenly spaced
    if scale == "linear":
        u = v
    elif scale == "power":
        g = positive_float(gamma, "gamma")
        u = v ** (1.0 / g)
    else:
        d = positive_float(decades, "decades")
        u = np.concatenate([[0.0, 10.0**-d], 10.0 ** (d * (v[1:] - 1.0))])
        v = np.concatenate([[0.0, 0.0], v[1:]])  # below 10^−d of the top: the lowest colour
    colours = sample_colorscale(_scale(palette), list(v))
    stops, last = [], -1.0
    for pos, colour in zip(u, colours, strict=True):
        pos = float(pos)
        if pos > last:  # positions must increase (powers may round together)
            stops.append([pos, colour])
            last = pos
    stops[0][0], stops[-1][0] = 0.0, 1.0
    if (
        value_range == "unit"
    ):  # the builders' own 0…1 (heatmap then keeps writing weights with fixed decimals)
        return {"colorscale": stops}
    return {"colorscale": stops, "zmin": 0.0, "zmax": zmax}

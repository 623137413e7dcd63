"""Validation at the public boundary.

Every public function of :mod:`visattn` turns its inputs into float arrays here, so that a bad input
becomes one ``ValueError`` whose message names the argument, what is wrong and how to fix it.
Inner helpers trust their callers.
"""

from __future__ import annotations

import numpy as np

MAX_MAGNITUDE = 1e12  # products of four such matrices over thousands of columns stay far below float64's 1e308


def as_array(x, name: str, ndim: int | None = None) -> np.ndarray:
    """``x`` as a finite float64 array of ``ndim`` dimensions, or a ValueError that says why not."""
    try:
        a = np.asarray(x)
        # float32 stays float32 (the app sends float32 and the model runs in it); everything else becomes float64
        a = a if a.dtype == np.float32 else np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must contain numbers only ({exc}); replace any text or empty cell with a number.") from None
    if ndim is not None and a.ndim != ndim:
        want = {1: "a vector", 2: "a matrix", 3: "a 3-D array"}.get(ndim, f"{ndim}-D")
        raise ValueError(f"{name} must be {want} ({ndim}-D) but has shape {a.shape}.")
    if a.size == 0:
        raise ValueError(f"{name} is empty (shape {a.shape}); give it at least one row and one column.")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinity; every entry must be a finite number.")
    if max(a.max(), -a.min()) > MAX_MAGNITUDE:
        raise ValueError(f"{name} has an entry of magnitude {max(a.max(), -a.min()):.3g}; keep entries within ±{MAX_MAGNITUDE:.0e} "
                         "so that the products attention takes stay finite.")
    return a


def positive_int(n, name: str, *, maximum: int | None = None) -> int:
    """``n`` as an int ≥ 1 (and ≤ maximum), or a ValueError."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        if isinstance(n, float) and n.is_integer():
            n = int(n)
        else:
            raise ValueError(f"{name} must be a whole number, got {n!r}.")
    n = int(n)
    if n < 1:
        raise ValueError(f"{name} must be at least 1, got {n}.")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name}={n} is too large; the limit is {maximum}.")
    return n


def positive_float(x, name: str) -> float:
    """``x`` as a finite float > 0, or a ValueError."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {x!r}.") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number greater than 0, got {v}.")
    return v

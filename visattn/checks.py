"""Validation at the public boundary.

Every public function of :mod:`visattn` turns its inputs into float arrays here, so that a bad input
becomes one :class:`~visattn.errors.InputError` whose message names the argument, what is wrong and
how to fix it. Inner helpers trust their callers."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .errors import InputError

# products of four such matrices over thousands of columns stay far below float64's 1e308
MAX_MAGNITUDE = 1e12


def as_array(x: ArrayLike, name: str, ndim: int | None = None) -> np.ndarray:
    """``x`` as a finite float array (float32 stays float32, anything else becomes float64) of
    ``ndim`` dimensions, or an InputError that says why not."""
    try:
        a = np.asarray(x)
        # float32 stays float32 (the app sends float32 and the model runs in it); everything else
        # becomes float64
        a = a if a.dtype == np.float32 else np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            "not_numbers",
            f"{name} must contain numbers only ({exc}); replace any text or empty cell with a "
            "number.",
            name=name,
        ) from None
    if ndim is not None and a.ndim != ndim:
        want = {1: "a vector", 2: "a matrix", 3: "a 3-D array"}.get(ndim, f"{ndim}-D")
        raise InputError(
            "wrong_ndim",
            f"{name} must be {want} ({ndim}-D) but has shape {a.shape}.",
            name=name,
            ndim=ndim,
            shape=" × ".join(map(str, a.shape)) or "()",
        )
    if a.size == 0:
        raise InputError(
            "empty_array",
            f"{name} is empty (shape {a.shape}); give it at least one row and one column.",
            name=name,
        )
    if not np.isfinite(a).all():
        raise InputError(
            "not_finite",
            f"{name} contains NaN or infinity; every entry must be a finite number.",
            name=name,
        )
    if max(a.max(), -a.min()) > MAX_MAGNITUDE:
        big = f"{max(a.max(), -a.min()):.3g}"
        raise InputError(
            "magnitude",
            f"{name} has an entry of magnitude {big}; keep entries within ±{MAX_MAGNITUDE:.0e} "
            "so that the products attention takes stay finite.",
            name=name,
            value=big,
            limit=f"{MAX_MAGNITUDE:.0e}",
        )
    return a


def positive_int(n: object, name: str, *, maximum: int | None = None) -> int:
    """``n`` as an int ≥ 1 (and ≤ maximum), or an InputError."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        if isinstance(n, float) and n.is_integer():
            n = int(n)
        else:
            raise InputError(
                "not_whole",
                f"{name} must be a whole number, got {n!r}.",
                name=name,
                value=str(n)[:20],
            )
    n = int(n)
    if n < 1:
        raise InputError(
            "too_small", f"{name} must be at least 1, got {n}.", name=name, value=n, minimum=1
        )
    if maximum is not None and n > maximum:
        raise InputError(
            "too_large",
            f"{name}={n} is too large; the limit is {maximum}.",
            name=name,
            value=n,
            maximum=maximum,
        )
    return n


def positive_float(x: object, name: str) -> float:
    """``x`` as a finite float > 0, or an InputError."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise InputError(
            "not_number", f"{name} must be a number, got {x!r}.", name=name, value=str(x)[:20]
        ) from None
    if not np.isfinite(v) or v <= 0:
        raise InputError(
            "not_positive",
            f"{name} must be a finite number greater than 0, got {v}.",
            name=name,
            value=f"{v:g}",
        )
    return v

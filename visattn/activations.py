"""Row normalisations used by attention: softmax (with a mask) and LayerNorm."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .checks import as_array
from .errors import InputError


def softmax(x: ArrayLike, axis: int = -1, mask: ArrayLike | None = None) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    ``mask`` is boolean, broadcastable to ``x``, with **True = may attend** (as in torch's
    ``scaled_dot_product_attention``). Masked entries get weight exactly 0. A row whose entries are
    all masked has no distribution, so it is a ``ValueError`` rather than a row of NaN.
    Scores of any finite size are fine: the row maximum is subtracted before ``exp``.
    """
    x = np.asarray(x)
    if x.dtype != np.float32:
        x = x.astype(np.float64)
    if x.size == 0:
        raise InputError("softmax_empty", f"softmax needs at least one score, got shape {x.shape}.")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise InputError(
                "mask_dtype", f"mask must be boolean (True = may attend), got dtype {mask.dtype}."
            )
        try:
            mask = np.broadcast_to(mask, x.shape)
        except ValueError:
            raise InputError(
                "mask_broadcast",
                f"mask of shape {mask.shape} does not broadcast to scores of shape {x.shape}.",
            ) from None
        if not mask.any(axis=axis).all():
            raise InputError(
                "mask_empty_row",
                "mask leaves a row with no allowed position; every query must be allowed to attend "
                "to at least one key.",
            )
        x = np.where(mask, x, -np.inf)
    row_max = x.max(axis=axis, keepdims=True)
    if not np.isfinite(row_max).all():
        if np.isnan(row_max).any():
            raise InputError(
                "softmax_nan", "softmax got NaN scores; check the inputs that produced them."
            )
        if np.isposinf(x).any():
            raise InputError("softmax_inf", "softmax got an infinite score; scale the inputs down.")
        # a masked (-inf) entry is the row maximum only when the whole row is -inf
        row_max = np.max(np.where(np.isfinite(x), x, -np.inf), axis=axis, keepdims=True)
        if not np.isfinite(row_max).all():
            raise InputError("softmax_no_finite", "softmax got a row with no finite score.")
    e = x - row_max
    np.exp(e, out=e)  # the largest entry is exp(0) = 1: no overflow
    e /= e.sum(axis=axis, keepdims=True)
    return e


def layer_norm(
    x: ArrayLike, gamma: ArrayLike | None = None, beta: ArrayLike | None = None, eps: float = 1e-5
) -> np.ndarray:
    """Normalise each row of ``x`` [T, D] to mean 0 and variance 1, then scale by gamma and shift by
    beta."""
    x = as_array(x, "x")
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * np.asarray(gamma, dtype=np.float64)
    if beta is not None:
        y = y + np.asarray(beta, dtype=np.float64)
    return y

"""Weights a layer computes from others: weight normalisation, as data and its arithmetic.

torch's ``parametrizations.weight_norm`` keeps g (``original0``) and v (``original1``) and
computes the layer's weight in a module call of its own; torch's legacy ``weight_norm`` and
paddle's keep ``weight_g`` and ``weight_v``. The weight is ``g * v / |v|``, the norm taken over
the axes where g has size 1. Against a library that holds the plain weight, v pairs with the
weight (same shape) and g is set from it: ``g = |v|`` makes the computed weight v itself.
Gradients compare through ``dL/dW = (|v| / g) dL/dv + dL/dg v / |v|``.
"""

from __future__ import annotations

import numpy as np

from ._knowledge import WEIGHT_NORM

__all__ = ["G_SKIPPED", "magnitude_of", "norm_like", "set_from_weight", "weight_from", "weight_grad_from"]

# the reason a weight map gives for a g it leaves unpaired beside a v paired with a plain weight
G_SKIPPED = "weight-norm g beside a v paired with a plain weight: the weight is g * v / |v|, compared as such"


def set_from_weight(side: str, name: str, skipped: list[tuple[str, str, str]]) -> str | None:
    """The g to set (or read) beside ``name`` on ``side`` when the weight map left it unpaired
    as a weight-norm g (None: ``name`` stands for itself)."""
    g = magnitude_of(name)
    # also skipped by a mapping file: a weightmap.json handed back as --mapping lists it so
    return g if g is not None and any(s == side and n == g for s, n, _ in skipped) else None


def magnitude_of(name: str) -> str | None:
    """The full name of g beside the v named ``name`` (None: ``name`` is no weight-norm v)."""
    owner, _, local = name.rpartition(".")
    g = WEIGHT_NORM.get(local)
    return None if g is None else (f"{owner}.{g}" if owner else g)


def _axes(v: np.ndarray, g_shape: tuple[int, ...]) -> tuple[int, ...]:
    if len(g_shape) != v.ndim:  # g stored without its size-1 axes: torch's legacy dim=None is a scalar
        return tuple(range(v.ndim))
    return tuple(k for k, n in enumerate(g_shape) if n == 1 and v.shape[k] != 1)


def norm_like(v: np.ndarray, g_shape: tuple[int, ...]) -> np.ndarray:
    """|v| over the axes where g has size 1, in g's shape (the g that makes the weight v)."""
    n = np.sqrt(np.sum(np.square(v, dtype=np.float64), axis=_axes(v, g_shape), keepdims=True))
    return n.reshape(g_shape)


def weight_from(g: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The weight ``g * v / |v|`` (float64)."""
    v64 = np.asarray(v, np.float64)
    n = norm_like(v64, g.shape).reshape(_keep(v64, g.shape))
    return np.asarray(g, np.float64).reshape(n.shape) * v64 / n


def weight_grad_from(g: np.ndarray, v: np.ndarray, dg: np.ndarray, dv: np.ndarray) -> np.ndarray:
    """dL/dW from the gradients of g and v: ``(|v| / g) dL/dv + dL/dg v / |v|`` (float64)."""
    v64 = np.asarray(v, np.float64)
    shape = _keep(v64, g.shape)
    n = norm_like(v64, g.shape).reshape(shape)
    g64 = np.asarray(g, np.float64).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (n / g64) * np.asarray(dv, np.float64) + np.asarray(dg, np.float64).reshape(shape) * v64 / n


def _keep(v: np.ndarray, g_shape: tuple[int, ...]) -> tuple[int, ...]:
    axes = set(_axes(v, g_shape))
    return tuple(1 if k in axes else n for k, n in enumerate(v.shape))

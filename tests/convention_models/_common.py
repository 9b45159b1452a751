"""Shared inputs of the convention pairs: the same numpy arrays on both sides."""
import os

import numpy as np

B, S, D, V = 2, 8, 16, 50


def bug() -> str:
    return os.environ.get("PADIFF_BUG", "")


def ids() -> np.ndarray:
    return np.random.default_rng(0).integers(1, V, size=(B, S)).astype("int64")


def mask() -> np.ndarray:
    m = np.ones((B, S), "int64")
    m[1, 5:] = 0
    return m


def image() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype("float32")


def hidden() -> np.ndarray:
    """Hidden states [B, S, D] for the feed-forward pairs (held_*, upcast_*)."""
    return np.random.default_rng(0).standard_normal((B, S, D)).astype("float32")


SENSORS, STEPS = 6, 7  # the plane pairs' grid (plane_*, planeln_*)


def grid() -> np.ndarray:
    """A sensor grid [4, sensors, steps] for the plane pairs."""
    return np.random.default_rng(0).standard_normal((4, SENSORS, STEPS)).astype("float32")

"""Shared data of the training pairs: the same numpy arrays and settings on both sides.

PADIFF_OPT picks the optimizer (adamw, adam, sgd, momentum, nesterov, adamax, rmsprop,
adagrad); PADIFF_BUG plants one porter's bug on the paddle side (see each spec); PADIFF_DROP
(default 1): dropout on. Weights come from the other side (run replays them), so only the
data and the hyperparameters are shared here."""
import os

import numpy as np

B, D_IN, D, D_OUT = 4, 8, 16, 4
LR = 0.01


def bug() -> str:
    return os.environ.get("PADIFF_BUG", "")


def opt_name() -> str:
    return os.environ.get("PADIFF_OPT", "adamw")


def dropout_on() -> bool:
    return os.environ.get("PADIFF_DROP", "1") == "1"


def data() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((B, D_IN)).astype("float32")


def target() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((B, D_OUT)).astype("float32")

"""Shared data of the training pairs: the same numpy arrays and settings on both sides.

PADIFF_OPT picks the optimizer (adamw, adam, sgd, momentum, nesterov, adamax, rmsprop,
adagrad, paramdecay: decay on the weights themselves in paddle, a group in torch; l1loss: an L1
decay in paddle's optimizer, a penalty in torch's loss); PADIFF_BUG plants one porter's bug on the paddle side (see each spec); PADIFF_DROP
(default 1): dropout on. Weights come from the other side (run replays them), so only the
data and the hyperparameters are shared here."""
import os

import numpy as np

B, D_IN, D, D_OUT = 4, 8, 16, 4
LR = 0.01
L1 = 5e-3  # l1loss: the L1 decay (paddle's optimizer) or penalty (torch's loss) of the weights


def bug() -> str:
    return os.environ.get("PADIFF_BUG", "")


def opt_name() -> str:
    return os.environ.get("PADIFF_OPT", "adamw")


def dropout_on() -> bool:
    return os.environ.get("PADIFF_DROP", "1") == "1"


def data(step: int = 0) -> np.ndarray:
    """Step 0's batch; with PADIFF_DATA=1 a loader of 3 batches, one per step (see batch_of)."""
    return np.random.default_rng(10 * (step % 3)).standard_normal((B, D_IN)).astype("float32")


def per_step_data() -> bool:
    return os.environ.get("PADIFF_DATA", "") == "1"


def batch_of(step: int, port: bool) -> np.ndarray:
    """The batch a loader yields at ``step``; the port's loader with PADIFF_BUG=order visits
    the batches 0, 2, 1 and with PADIFF_BUG=shuffle shuffles the samples of step 1."""
    if not port:
        return data(step)
    if bug() == "order":
        return data([0, 2, 1][step % 3])
    if bug() == "shuffle" and step == 1:
        return data(step)[[2, 0, 3, 1]]
    return data(step)


def target() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((B, D_OUT)).astype("float32")

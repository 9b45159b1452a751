"""BatchNorm calibration shared by the vision specs.

A randomly initialised CNN in eval mode has running stats (0, 1): its BatchNorms are
near-identities and the signal shrinks or explodes with depth (paddle's MobileNetV3-Small
gives logits ~1e-7). Each spec therefore sets every BatchNorm's running stats to the batch
statistics of one calibration batch (CALIB_SHAPE, np.random.default_rng(1)), like a model
after some training: one forward in train mode, no grad, with the momentum set so that the
running stats become the batch stats, then eval. Only this side's framework is imported.

Paddle stores the biased batch variance, torch the unbiased one (factor n/(n-1), n = N*H*W
per channel): the two sides' own calibrations differ slightly, but the pairs copy paddle's
running stats into torch, so the compared models are identical.
"""
import numpy as np

CALIB_SHAPE = (8, 3, 64, 64)


def calib_array(shape=CALIB_SHAPE):
    return np.random.default_rng(1).standard_normal(shape).astype("float32")


def calibrate_paddle(m, shape=CALIB_SHAPE):
    import paddle

    bns = [bn for bn in m.sublayers(include_self=True) if hasattr(bn, "_momentum") and hasattr(bn, "_variance")]
    saved = [bn._momentum for bn in bns]
    for bn in bns:
        bn._momentum = 0.0  # paddle: running = momentum * running + (1 - momentum) * batch
    m.train()
    with paddle.no_grad():
        m(paddle.to_tensor(calib_array(shape)))
    for bn, mom in zip(bns, saved):
        bn._momentum = mom
    m.eval()
    return m


def calibrate_torch(m, shape=CALIB_SHAPE):
    import torch

    bns = [bn for bn in m.modules() if isinstance(bn, torch.nn.modules.batchnorm._BatchNorm)]
    saved = [bn.momentum for bn in bns]
    for bn in bns:
        bn.momentum = 1.0  # torch: running = (1 - momentum) * running + momentum * batch
    m.train()
    with torch.no_grad():
        m(torch.from_numpy(calib_array(shape)))
    for bn, mom in zip(bns, saved):
        bn.momentum = mom
        bn.num_batches_tracked.zero_()
    m.eval()
    return m

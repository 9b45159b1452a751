"""BiT (ResNet-v2 with weight-standardised convs and GroupNorm), paddlenlp side: tiny random
config, no download.

PADIFF_BUG=paddle_ws_unbiased plants this side's bug (see bit_truth.json).
PADIFF_BUG=paddle_gn_groups (this side): the first bottleneck's norm3 (GroupNorm + ReLU over 8
channels) normalises in 2 groups instead of config.num_groups = 4.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import BitConfig, BitModel

CONFIG = dict(
    num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[1, 2], layer_type="preactivation",
    hidden_act="relu", global_padding=None, num_groups=4, drop_path_rate=0.0,
    embedding_dynamic_padding=False, output_stride=32, width_factor=1,
)


def model():
    paddle.seed(0)
    m = BitModel(BitConfig(**CONFIG))
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_ws_unbiased":
        conv = m.encoder.stages[1].layers[1].conv3
        object.__setattr__(conv, "forward", _ws_forward_unbiased(conv))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_gn_groups":
        m.encoder.stages[0].layers[0].norm3._num_groups = 2  # the bug: config.num_groups is 4
    return m


def _ws_forward_unbiased(conv):
    """WeightStandardizedConv2D.forward with paddle.var's default unbiased=True: the weight is
    standardised with the sample (n-1) variance instead of the population variance that HF's
    batch_norm-based standardisation uses (n = 8 weights per output channel here)."""
    import paddle.nn.functional as F

    def forward(hidden_state):
        w = conv.weight
        v, mu = paddle.var(w, axis=[1, 2, 3], keepdim=True), paddle.mean(w, axis=[1, 2, 3], keepdim=True)
        w = (w - mu) / paddle.sqrt(v + conv.epsilon)
        return F.conv2d(hidden_state, w, conv.bias, conv._stride, conv._padding, conv._dilation, conv._groups,
                        conv._data_format)
    return forward


def _perturb(m):
    """paddlenlp's init leaves every GroupNorm at (1, 0): give them random values (fixed numpy
    rng) so that a norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if "norm" in name and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))
        elif "norm" in name and name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.1, p.shape).astype("float32"))


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    # BaseModelOutputWithPoolingAndNoAttention: last_hidden_state [2, 32, 4, 4] ends in
    # GroupNorm + ReLU (not a constant mean of squares), pooler_output [2, 32, 1, 1]
    return (output.last_hidden_state**2).mean() + (output.pooler_output**2).mean()

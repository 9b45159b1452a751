"""BiT (ResNet-v2 with weight-standardised convs and GroupNorm), HF transformers side: tiny
random config, no download.

Planted bugs (PADIFF_BUG): see bit_truth.json.
  torch_stride_conv1 -> the downsampling bottleneck of stage 1 puts its stride 2 on the 1x1 conv1
                        instead of the 3x3 conv2 (ResNet v1 vs v1.5/BiT stride placement)
"""
import os

import numpy as np
import torch
from transformers import BitConfig, BitModel

CONFIG = dict(
    num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[1, 2], layer_type="preactivation",
    hidden_act="relu", global_padding=None, num_groups=4, drop_path_rate=0.0,
    embedding_dynamic_padding=False, output_stride=32, width_factor=1,
)


def model():
    torch.manual_seed(0)
    m = BitModel(BitConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "stem_pad":
        # stem pad before the max-pool: TF-"SAME"-style asymmetric (0, 1, 0, 1) instead of (1, 1, 1, 1)
        m.embedder.pad.padding = (0, 1, 0, 1)
    elif os.environ.get("PADIFF_BUG", "") == "torch_stride_conv1":
        layer = m.encoder.stages[1].layers[0]
        layer.conv1.stride, layer.conv2.stride = (2, 2), (1, 1)  # padding stays 1 for the 3x3 (same for both strides)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    # BaseModelOutputWithPoolingAndNoAttention: last_hidden_state [2, 32, 4, 4] ends in
    # GroupNorm + ReLU (not a constant mean of squares), pooler_output [2, 32, 1, 1]
    return (output.last_hidden_state**2).mean() + (output.pooler_output**2).mean()

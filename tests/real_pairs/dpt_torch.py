"""DPT (its ViT backbone: DPTModel, non-hybrid), HF transformers side: tiny random config, no
download.

Planted bugs (PADIFF_BUG): see dpt_truth.json.
  torch_gelu_tanh -> layer 1's intermediate activation is the tanh approximation of gelu
                     (nn.GELU(approximate="tanh"), i.e. "gelu_new") instead of exact erf gelu
"""
import os

import numpy as np
import torch
from transformers import DPTConfig, DPTModel

CONFIG = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12, image_size=32,
    patch_size=8, num_channels=3, is_hybrid=False, qkv_bias=True, backbone_out_indices=[0, 1],
    initializer_range=0.1,
)


def model():
    torch.manual_seed(0)
    m = DPTModel._from_config(DPTConfig(**CONFIG), attn_implementation="eager").eval()
    if os.environ.get("PADIFF_BUG", "") == "head_split":
        sa = m.encoder.layer[0].attention.attention
        sa.forward = _self_attention_interleaved_heads(sa)
    elif os.environ.get("PADIFF_BUG", "") == "torch_gelu_tanh":
        m.encoder.layer[1].intermediate.intermediate_act_fn = torch.nn.GELU(approximate="tanh")
    return m


def _self_attention_interleaved_heads(sa):
    """DPTSelfAttention.forward (eager, no head mask) that splits q/k/v into heads as
    [B, S, head_size, heads] (features interleaved across heads) instead of [B, S, heads, head_size];
    the heads are merged back the usual way."""
    def forward(hidden_states, head_mask=None):
        b, n, _ = hidden_states.shape

        def heads(x):
            return x.view(b, n, sa.attention_head_size, sa.num_attention_heads).permute(0, 3, 1, 2)

        q, k, v = heads(sa.query(hidden_states)), heads(sa.key(hidden_states)), heads(sa.value(hidden_states))
        probs = torch.softmax((q @ k.transpose(-1, -2)) * sa.scaling, dim=-1)
        ctx = (probs @ v).transpose(1, 2).reshape(b, n, sa.all_head_size)
        return ctx, probs
    return forward


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    # BaseModelOutputWithPoolingAndIntermediateActivations: last_hidden_state [2, 17, 32] ends in a
    # LayerNorm (the mean of ALL its squared features is ~constant), so take half of the features
    return (output.last_hidden_state[..., :16] ** 2).mean() + (output.pooler_output**2).mean()

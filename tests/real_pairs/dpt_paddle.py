"""DPT (its ViT backbone: DPTModel, non-hybrid), paddlenlp side: tiny random config, no download.

PADIFF_BUG=paddle_preln_residual plants this side's bug (see dpt_truth.json).
PADIFF_BUG=paddle_pos_offset (this side): the embeddings give the 16 patch tokens
position_embeddings[:, 0:16] instead of [:, 1:17] (the +1 offset of the CLS slot missed).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import DPTConfig, DPTModel

CONFIG = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12, image_size=32,
    patch_size=8, num_channels=3, is_hybrid=False, qkv_bias=True, backbone_out_indices=[0, 1],
    initializer_range=0.1,
)


def model():
    paddle.seed(0)
    m = DPTModel(DPTConfig(**CONFIG))
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_preln_residual":
        layer = m.encoder.layer[1]
        object.__setattr__(layer, "forward", _layer_forward_residual_from_norm(layer))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_pos_offset":
        emb = m.embeddings
        object.__setattr__(emb, "forward", _embeddings_forward_pos_offset(emb))
    return m


def _embeddings_forward_pos_offset(emb):
    """DPTViTEmbeddings.forward where the position embeddings are added to CLS and patches
    separately and the patches' slice starts at 0 instead of 1: patch i gets the position
    embedding of slot i, not i + 1."""
    def forward(pixel_values, return_dict=False):
        p = emb.config.patch_size
        pos = emb._resize_pos_embed(emb.position_embeddings, pixel_values.shape[2] // p, pixel_values.shape[3] // p)
        patches = emb.patch_embeddings(pixel_values)
        n = patches.shape[1]
        cls = emb.cls_token.expand([patches.shape[0], -1, -1]) + pos[:, :1]
        patches = patches + pos[:, 0:n]  # the bug: should be pos[:, 1:n + 1]
        embeddings = emb.dropout(paddle.concat((cls, patches), axis=1))
        if not return_dict:
            return (embeddings,)
        from paddlenlp.transformers.dpt.modeling import BaseModelOutputWithIntermediateActivations

        return BaseModelOutputWithIntermediateActivations(last_hidden_states=embeddings)
    return forward


def _layer_forward_residual_from_norm(layer):
    """DPTViTLayer.forward whose first residual adds the LayerNorm'd input (the attention's input)
    instead of the raw hidden states: a pre-LN residual ported wrongly."""
    def forward(hidden_states, output_attentions=False):
        normed = layer.layernorm_before(hidden_states)
        self_attention_outputs = layer.attention(normed, output_attentions=output_attentions)
        hidden_states = self_attention_outputs[0] + normed  # the bug: should be + hidden_states
        layer_output = layer.intermediate(layer.layernorm_after(hidden_states))
        layer_output = layer.output(layer_output, hidden_states)
        return (layer_output,) + self_attention_outputs[1:]
    return forward


def _perturb(m):
    """paddlenlp leaves cls_token and position_embeddings at 0 (plain parameters, not touched by
    _init_weights), every bias at 0 and every LayerNorm at (1, 0): give them random values (fixed
    numpy rng) so that any of them ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif "layernorm" in name and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))
        elif name in ("embeddings.cls_token", "embeddings.position_embeddings"):
            p.set_value(rng.normal(0.0, 0.5, p.shape).astype("float32"))


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    # BaseModelOutputWithPoolingAndIntermediateActivations: last_hidden_state [2, 17, 32] ends in a
    # LayerNorm (the mean of ALL its squared features is ~constant), so take half of the features
    return (output.last_hidden_state[..., :16] ** 2).mean() + (output.pooler_output**2).mean()

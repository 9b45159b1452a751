"""CLIP (text + ViT vision towers), paddlenlp side: tiny random config, no download.

PADIFF_BUG=paddle_patch_flatten plants this side's bug (see clip_truth.json).
PADIFF_BUG=paddle_attn_scale (this side): vision layer 1's self-attention scales its scores by
embed_dim**-0.5 (1/sqrt(32)) instead of head_dim**-0.5 (1/sqrt(8)).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import CLIPConfig, CLIPModel
from paddlenlp.transformers.model_outputs import BaseModelOutputWithPooling

TEXT = dict(
    vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
    max_position_embeddings=16, hidden_act="quick_gelu", layer_norm_eps=1e-5, dropout=0.0,
    attention_dropout=0.0, pad_token_id=1, bos_token_id=98, eos_token_id=99,
)
VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_channels=3,
    image_size=32, patch_size=8, hidden_act="quick_gelu", layer_norm_eps=1e-5, dropout=0.0,
    attention_dropout=0.0,
)


def model():
    paddle.seed(0)
    m = CLIPModel(CLIPConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16))
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_patch_flatten":
        vm = m.vision_model
        object.__setattr__(vm, "forward", _vision_forward_flatten_bug(vm))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_attn_scale":
        sa = m.vision_model.transformer.layers[1].self_attn
        object.__setattr__(sa, "forward", _attention_forward_embed_dim_scale(sa))
    return m


def _attention_forward_embed_dim_scale(sa):
    """nn.MultiHeadAttention.forward (self-attention, no cache, no weights) whose scores are scaled
    by embed_dim**-0.5 instead of head_dim**-0.5: the scale taken from the wrong dim."""
    import paddle.nn.functional as F

    def forward(query, key=None, value=None, attn_mask=None, cache=None):
        key = query if key is None else key
        value = query if value is None else value
        q, k, v = sa._prepare_qkv(query, key, value, None)
        product = paddle.matmul(x=q * (sa.embed_dim**-0.5), y=k, transpose_y=True)  # the bug: head_dim
        if attn_mask is not None:
            product = product + attn_mask.cast(product.dtype)
        out = paddle.matmul(F.softmax(product), v)
        out = out.transpose([0, 2, 1, 3])
        out = out.reshape([0, 0, out.shape[2] * out.shape[3]])
        return sa.out_proj(out)
    return forward


def _perturb(m):
    """paddlenlp's init leaves every bias 0 and every LayerNorm at (1, 0): give them random
    values (fixed numpy rng) so that a bias or norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif (".norm" in name or ".ln_" in name) and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def _vision_forward_flatten_bug(vm):
    """CLIPVisionTransformer.forward (no attentions / hidden states) where the conv feature map
    [B, C, H, W] is turned into patch tokens with one reshape to [B, H*W, C] instead of
    reshape to [B, C, H*W] + transpose: a layout slip; the channel and patch axes get mixed."""
    def forward(pixel_values=None, output_attentions=None, output_hidden_states=None, return_dict=None):
        x = vm.conv1(pixel_values.cast(vm.conv1.weight.dtype))
        x = x.reshape((x.shape[0], -1, x.shape[1]))  # the bug: no transpose
        emb = paddle.concat([vm.class_embedding.unsqueeze([0, 1]).expand([x.shape[0], -1, -1]), x], axis=1)
        h = vm.ln_pre(emb + vm.positional_embedding.weight)
        out = vm.transformer(h, output_attentions=output_attentions,
                             output_hidden_states=output_hidden_states, return_dict=return_dict)
        last = out if isinstance(out, paddle.Tensor) else out[0]
        return BaseModelOutputWithPooling(last_hidden_state=last, pooler_output=vm.ln_post(last[:, 0]))
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 98, size=(2, 12)).astype("int64")  # no pad (1), bos (98) or eos (99) in the body
    ids[:, 0] = 98  # bos
    ids[0, 11] = 99  # eos closes sample 0
    ids[1, 8] = 99  # sample 1: eos after 8 tokens, then 3 masked positions (ordinary ids, not the pad id)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0
    pixels = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    return ids, mask, pixels


def inputs():
    ids, mask, pixels = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "pixel_values": paddle.to_tensor(pixels),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # CLIPOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()

"""BLIP (BlipModel: BERT-style text tower + ViT vision tower with a fused qkv), paddlenlp side:
tiny random config, no download.

PADIFF_BUG=paddle_attn_scale plants this side's bug (see blip_truth.json).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import BlipConfig, BlipModel
from paddlenlp.transformers.model_outputs import BaseModelOutputWithPooling

TEXT = dict(
    vocab_size=100, hidden_size=32, encoder_hidden_size=32, intermediate_size=64, num_hidden_layers=2,
    num_attention_heads=4, max_position_embeddings=16, hidden_act="gelu", layer_norm_eps=1e-12,
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=0, bos_token_id=98,
    eos_token_id=2, sep_token_id=99,
)
# layer_norm_eps pinned: its default differs (paddlenlp BlipVisionConfig 1e-6, HF 1e-5)
VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
    patch_size=8, hidden_act="gelu", layer_norm_eps=1e-5, attention_dropout=0.0,
)


def model():
    paddle.seed(0)
    m = BlipModel(BlipConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16))
    m.eval()
    _perturb(m)
    vm = m.vision_model
    object.__setattr__(vm, "forward", _vision_forward_hf_pooling(vm))
    if os.environ.get("PADIFF_BUG", "") == "paddle_attn_scale":
        # vision layer 1's attention scale ported with the text tower's convention: the text
        # self-attention DIVIDES by sqrt(head_dim), the vision BlipAttention MULTIPLIES by
        # self.scale, which must be head_dim**-0.5; here it is head_dim**0.5
        attn = m.vision_model.encoder.layers[1].self_attn
        attn.scale = attn.head_dim**0.5
    return m


def _perturb(m):
    """paddlenlp's init leaves every bias 0, every LayerNorm at (1, 0), and the vision class /
    position embeddings at trunc_normal(std=1e-10), i.e. ~0: give them random values (fixed numpy
    rng) so that a bias, norm or embedding ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif ("LayerNorm" in name or "layer_norm" in name or "layernorm" in name) and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))
        elif name.endswith("class_embedding") or name.endswith("embeddings.position_embedding"):
            p.set_value(rng.normal(0.0, 0.2, p.shape).astype("float32"))


def _vision_forward_hf_pooling(vm):
    """BlipVisionModel.forward as in HF transformers: the library difference this works around is
    that HF applies post_layernorm a SECOND time to the pooled CLS token
    (pooled = post_layernorm(post_layernorm(h)[:, 0])), while paddlenlp 2.8.1 pools
    post_layernorm(h)[:, 0] only. The clean pair follows HF (the reference); otherwise the pair
    differs by 0.3 in logits_per_image. Same calls as paddlenlp's forward plus the second
    post_layernorm call, as in HF."""
    def forward(pixel_values=None, output_attentions=None, output_hidden_states=None, return_dict=None):
        hidden_states = vm.embeddings(pixel_values)
        enc = vm.encoder(inputs_embeds=hidden_states, output_attentions=output_attentions,
                         output_hidden_states=output_hidden_states, return_dict=True)
        last = vm.post_layernorm(enc[0])
        pooled = vm.post_layernorm(last[:, 0, :])
        return BaseModelOutputWithPooling(last_hidden_state=last, pooler_output=pooled,
                                          hidden_states=enc.hidden_states, attentions=enc.attentions)
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 98, size=(2, 12)).astype("int64")  # no pad (0), eos (2), bos (98), sep (99)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens (ordinary ids there, not the pad id)
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
    # BlipOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()

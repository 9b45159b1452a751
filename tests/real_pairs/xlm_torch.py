"""XLM pair, torch side: HF transformers XLMWithLMHeadModel (tiny random config, fp32).

Twin of xlm_paddle.py (paddlenlp XLMWithLMHeadModel). Ground truth: xlm_truth.json.
PADIFF_BUG (torch side):
  padding_mask -> layer 0 attention ignores the padding mask (attends to padded keys)
  lang_zero    -> the base model embeds every token as language 0: its forward drops the `langs` it
                  is given and looks the language embedding up with default all-zero ids
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, emb_dim=32, n_layers=2, n_heads=4, dropout=0.0, attention_dropout=0.0,
    gelu_activation=True, sinusoidal_embeddings=True, causal=False, asm=False,
    n_langs=2, use_lang_emb=True, max_position_embeddings=64, embed_init_std=0.1, init_std=0.1,
    layer_norm_eps=1e-12, bos_index=0, eos_index=1, pad_index=2, unk_index=3, mask_index=5,
    is_encoder=True, pad_token_id=2, bos_token_id=0,
)


def model():
    from transformers import XLMConfig, XLMWithLMHeadModel

    torch.manual_seed(0)
    m = XLMWithLMHeadModel(XLMConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "padding_mask":
        attn = m.transformer.attentions[0]
        orig = attn.forward

        def forward(input, mask, *args, **kwargs):
            # the hooks on the module still see the real mask
            return orig(input, torch.ones_like(mask), *args, **kwargs)

        attn.forward = forward
    elif bug == "lang_zero":
        base = m.transformer
        orig_base = base.forward

        def base_forward(input_ids=None, *args, langs=None, **kwargs):
            # the port's `if langs is None: langs = zeros` lost its condition
            langs = torch.zeros_like(input_ids)
            return orig_base(input_ids, *args, langs=langs, **kwargs)

        base.forward = base_forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(6, 1000, size=(2, 12)).astype("int64")  # no special ids (pad = 2)
    langs = np.zeros((2, 12), "int64")
    langs[1] = 1  # second sample in language 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, langs, mask


def inputs():
    ids, langs, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "langs": torch.from_numpy(langs),
                "attention_mask": torch.from_numpy(mask)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

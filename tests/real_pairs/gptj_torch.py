"""GPT-J pair, torch side: HF transformers GPTJForCausalLM (tiny random config, fp32, eager attention).

Twin of gptj_paddle.py (paddlenlp GPTJForCausalLM). Ground truth: gptj_truth.json.
PADIFF_BUG (torch side):
  rope_base -> layer 1 attention's sinusoidal table (embed_positions) built with base 500000 instead of 10000
  act       -> layer 0 MLP activation is ReLU instead of tanh GELU (gelu_new)
  scale     -> layer 1 attention divides the scores by head_dim (8) instead of sqrt(head_dim)
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, n_positions=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=64,
    activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    layer_norm_epsilon=1e-5, initializer_range=0.1, use_cache=False, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


def _table(num_pos, dim, base):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim))
    sinusoid = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.int64).float(), inv_freq).float()
    return torch.cat((torch.sin(sinusoid), torch.cos(sinusoid)), dim=1)


def model():
    from transformers import GPTJConfig, GPTJForCausalLM

    torch.manual_seed(0)
    m = GPTJForCausalLM(GPTJConfig(**CONFIG, attn_implementation="eager")).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "rope_base":
        m.transformer.h[1].attn.embed_positions = _table(CONFIG["n_positions"], CONFIG["rotary_dim"], 500000.0)
    elif bug == "act":
        m.transformer.h[0].mlp.act = torch.nn.ReLU()
    elif bug == "scale":
        attn = m.transformer.h[1].attn
        attn.scale_attn = torch.tensor(float(attn.head_dim))  # should be sqrt(head_dim)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos ids
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask),
                "use_cache": False}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

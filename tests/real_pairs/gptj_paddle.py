"""GPT-J pair, paddle side: paddlenlp GPTJForCausalLM (tiny random config, fp32, no downloads).

Twin of gptj_torch.py (HF GPTJForCausalLM). Ground truth: gptj_truth.json.
PADIFF_BUG (paddle side):
  paddle_rotary_dim -> layer 0 attention rotates the whole head (8 dims) instead of rotary_dim=4
"""
import os

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, n_positions=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=64,
    activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    layer_norm_epsilon=1e-5, initializer_range=0.1, use_cache=False, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


def _randomize_small(m):
    """Biases ~ N(0, 0.1), LayerNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 0 / 1), so a
    swapped or missing bias / norm tensor is visible. Matrices keep the N(0, initializer_range) init."""
    paddle.seed(1)
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 0.0 if name.endswith("bias") else 1.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    from paddlenlp.transformers import GPTJConfig, GPTJForCausalLM

    paddle.seed(0)
    m = GPTJForCausalLM(GPTJConfig(**CONFIG, dtype="float32"))
    _randomize_small(m)
    # paddlenlp 2.8.1 keeps the causal mask `attn.bias` as a float32 tril and calls
    # paddle.where(bias, ...); paddle 3.x requires a bool condition -> store it as bool
    # (same values; the buffer stays registered under the same name).
    for block in m.transformer.h:
        block.attn.bias = block.attn.bias.astype("bool")
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_rotary_dim":
        m.transformer.h[0].attn.rotary_dim = None  # None = rotate the full head_dim
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos ids
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask),
                "use_cache": False}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

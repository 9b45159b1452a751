"""CodeGen pair, paddle side: paddlenlp CodeGenForCausalLM (tiny random config, fp32, no downloads).

Twin of codegen_torch.py (HF CodeGenForCausalLM). Ground truth: codegen_truth.json.
PADIFF_BUG (paddle side):
  paddle_scale -> layer 1 attention scores not divided by sqrt(head_dim) (attn.scale_attn = 1)
"""
import os

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, n_positions=64, n_ctx=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=64,
    activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    layer_norm_epsilon=1e-5, initializer_range=0.1, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


def _randomize_small(m):
    """Biases ~ N(0, 0.1), LayerNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 0 / 1)."""
    paddle.seed(1)
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 0.0 if name.endswith("bias") else 1.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    from paddlenlp.transformers import CodeGenConfig, CodeGenForCausalLM

    paddle.seed(0)
    m = CodeGenForCausalLM(CodeGenConfig(**CONFIG))
    _randomize_small(m)
    # paddlenlp 2.8.1 keeps the causal mask `attn.causal_mask` as a float32 tril and calls
    # paddle.where(causal_mask, ...); paddle 3.x requires a bool condition -> store it as bool.
    for block in m.transformer.h:
        block.attn.causal_mask = block.attn.causal_mask.astype("bool")
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_scale":
        m.transformer.h[1].attn.scale_attn = paddle.to_tensor(1.0, dtype="float32")
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

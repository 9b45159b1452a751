"""Qwen (v1) pair, paddle side: paddlenlp QWenModel (tiny random config, fp32, no downloads).

Twin of qwen_torch.py (HF transformers Qwen2Model). Ground truth: qwen_truth.json.
Qwen v1 and Qwen2 are the same math when configured alike: paddlenlp's fused `c_attn` (with bias)
is HF's q_proj/k_proj/v_proj (with bias), paddlenlp's `w2` is HF's gate_proj (the silu branch),
`w1` is up_proj, and paddlenlp's `intermediate_size` is TWICE the MLP width (QWenMLP uses
intermediate_size // 2), so paddle 128 <-> HF 64. The logn scaling and dynamic NTK of Qwen v1 stay
on (the Qwen defaults) but have no effect: the sequence (12) is far below seq_length (2048).

PADIFF_BUG (this side only):
  paddle_mlp_gate_swap -> layer 1's MLP applies silu to the w1 branch instead of the w2 branch
                          (w1/w2 roles swapped: Qwen v1 names w1 "up" and w2 "gate", the opposite of
                          what the names suggest); inline in QWenMLP.forward
  paddle_causal_off_by_one -> layer 0's attention uses a causal mask shifted by one: every query
                          also sees the NEXT token (tril(diagonal=1), the triu(..., 1) / triu(..., 2)
                          slip), padding kept; h.0.attn.forward wrapped, the mask is applied inline
                          in QWenAttention._attn
Other qwen bugs (softmax_half) are planted on the torch side.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from _decoders_common import randomize_paddle

VOCAB, HIDDEN, LAYERS, HEADS, FFN, SEQ_LENGTH = 1000, 32, 2, 4, 128, 2048


def _swapped_mlp(mlp):
    def forward(hidden_states):
        a1 = mlp.w1(hidden_states)
        a2 = mlp.w2(hidden_states)
        return mlp.c_proj(F.silu(a1) * a2)
    return forward


def model():
    from paddlenlp.transformers import QWenConfig, QWenModel

    paddle.seed(0)
    cfg = QWenConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        kv_channels=HIDDEN // HEADS, intermediate_size=FFN, layer_norm_epsilon=1e-6,
        rotary_emb_base=10000, rotary_pct=1.0, max_position_embeddings=SEQ_LENGTH, seq_length=SEQ_LENGTH,
        use_dynamic_ntk=True, use_logn_attn=True, use_flash_attention=False, use_fused_rms_norm=False,
        use_fused_rope=False, no_bias=True, emb_dropout_prob=0.0, attn_dropout_prob=0.0,
        use_cache=False, tie_word_embeddings=False, dtype="float32",
    )
    m = QWenModel(cfg)
    # paddlenlp leaves biases 0 and norms 1: draw every tensor so that each one matters
    randomize_paddle(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_mlp_gate_swap":
        mlp = m.h[1].mlp
        object.__setattr__(mlp, "forward", _swapped_mlp(mlp))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_causal_off_by_one":
        attn = m.h[0].attn
        object.__setattr__(attn, "forward", _off_by_one_mask_attention(attn))
    return m


def _off_by_one_mask_attention(attn):
    orig = attn.forward

    def forward(hidden_states, layer_past=None, attention_mask=None, **kwargs):
        # attention_mask: additive [B, 1, T, T] (0 keep, float32 min masked), causal & padding.
        # The last query row holds the padding of every key: keep that, but build the causal
        # part with diagonal=1 (query i also attends to key i + 1)
        t = attention_mask.shape[-1]
        pad_keep = attention_mask[:, :, t - 1 : t, :] == 0
        causal = paddle.tril(paddle.ones([t, t], dtype="bool"), diagonal=1)  # should be diagonal=0
        keep = paddle.logical_and(causal[None, None], pad_keep)
        mask = paddle.where(keep, paddle.zeros_like(attention_mask),
                            paddle.full_like(attention_mask, paddle.finfo(attention_mask.dtype).min))
        return orig(hidden_states, layer_past=layer_past, attention_mask=mask, **kwargs)
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, VOCAB, size=(2, 12)).astype("int64")  # pad id 0 kept out
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sequence right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask)}


_W = np.random.default_rng(1).normal(size=(HIDDEN,)).astype("float32")


def loss(output):
    h = output if isinstance(output, paddle.Tensor) else output[0]
    # the output ends in an RMS norm (mean of squares ~ weight**2): weighted sum of the features
    return (h * paddle.to_tensor(_W)).mean()

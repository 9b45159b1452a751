"""Mixtral pair, paddle side: paddlenlp MixtralForCausalLM (tiny random config, fp32, no downloads).

Twin of mixtral_torch.py (HF MixtralForCausalLM). Ground truth: mixtral_truth.json.
PADIFF_BUG (paddle side):
  paddle_expert_swap -> layer 0 expert 2 applies SiLU to w3 (up) instead of w1 (gate): act(w3 x) * w1 x
(top_k, rms_eps and topk_no_renorm are planted on the torch side.)

Compatibility: paddlenlp 2.8.1's MixtralSparseMoeBlock does `idx, top_x = paddle.where(mask)` and
expects paddle 2.x results ([N, 1] index tensors); paddle 3.x returns [N]. The spec gives that one
module (paddlenlp.transformers.mixtral.modeling) a `paddle` proxy whose one-argument `where`
unsqueezes its results to [N, 1]; every other attribute is the real paddle.
"""
import os

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, hidden_size=32, intermediate_size=64, max_position_embeddings=64, seq_length=64,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_act="silu",
    initializer_range=0.1, rms_norm_eps=1e-5, rope_theta=10000.0, num_local_experts=4,
    num_experts_per_tok=2, tie_word_embeddings=False, attention_dropout=0.0, use_cache=False,
    use_flash_attention=False, pad_token_id=0, bos_token_id=1, eos_token_id=2,
)


class _PaddleWhere2x:
    """`paddle` for paddlenlp's mixtral module: one-argument where() returns [N, 1] like paddle 2.x."""

    def __getattr__(self, name):
        return getattr(paddle, name)

    @staticmethod
    def where(condition, x=None, y=None, name=None):
        if x is None and y is None:
            return tuple(t.unsqueeze(-1) for t in paddle.nonzero(condition, as_tuple=True))
        return paddle.where(condition, x, y, name=name)


def _patch_where():
    import paddlenlp.transformers.mixtral.modeling as mm

    if not isinstance(mm.paddle, _PaddleWhere2x):
        mm.paddle = _PaddleWhere2x()


def _randomize_small(m):
    """RMSNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 1). Matrices keep N(0, initializer_range)."""
    paddle.seed(1)
    for _name, p in m.named_parameters():
        if p.ndim == 1:
            p.set_value((1.0 + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    from paddlenlp.transformers import MixtralConfig, MixtralForCausalLM

    _patch_where()
    paddle.seed(0)
    m = MixtralForCausalLM(MixtralConfig(**CONFIG, dtype="float32"))
    _randomize_small(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_expert_swap":
        expert = m.mixtral.layers[0].block_sparse_moe.experts[2]

        def forward(x):
            return expert.w2(expert.act_fn(expert.w3(x)) * expert.w1(x))

        expert.forward = forward
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

"""Mixtral pair, torch side: HF transformers MixtralForCausalLM (tiny random config, fp32, eager attention).

Twin of mixtral_paddle.py (paddlenlp MixtralForCausalLM). Ground truth: mixtral_truth.json.
PADIFF_BUG (torch side):
  top_k   -> layer 1 MoE routes every token to 1 expert instead of num_experts_per_tok=2
  rms_eps -> layer 0 input RMSNorm eps 1e-3 instead of 1e-5
  topk_no_renorm -> layer 0 MoE does not renormalize its top-2 routing weights to sum 1 (uses the
                    raw softmax probabilities of the two chosen experts)
(paddle_expert_swap is planted on the paddle side.)
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, hidden_size=32, intermediate_size=64, max_position_embeddings=64,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_act="silu",
    initializer_range=0.1, rms_norm_eps=1e-5, rope_theta=10000.0, num_local_experts=4,
    num_experts_per_tok=2, tie_word_embeddings=False, attention_dropout=0.0, use_cache=False,
    router_jitter_noise=0.0, sliding_window=None, pad_token_id=0, bos_token_id=1, eos_token_id=2,
)


def model():
    from transformers import MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    m = MixtralForCausalLM(MixtralConfig(**CONFIG, attn_implementation="eager")).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "top_k":
        m.model.layers[1].block_sparse_moe.top_k = 1
    elif bug == "rms_eps":
        m.model.layers[0].input_layernorm.variance_epsilon = 1e-3
    elif bug == "topk_no_renorm":
        moe = m.model.layers[0].block_sparse_moe
        moe.forward = _moe_forward_no_renorm(moe)
    return m


def _moe_forward_no_renorm(moe):
    """MixtralSparseMoeBlock.forward (eval, no jitter) without `routing_weights /= sum`."""
    import torch.nn.functional as F

    def forward(hidden_states):
        b, s, h = hidden_states.shape
        x = hidden_states.view(-1, h)
        router_logits = moe.gate(x)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected = torch.topk(routing_weights, moe.top_k, dim=-1)
        # the bug: routing_weights /= routing_weights.sum(dim=-1, keepdim=True) left out
        routing_weights = routing_weights.to(x.dtype)
        final = torch.zeros((b * s, h), dtype=x.dtype, device=x.device)
        expert_mask = F.one_hot(selected, num_classes=moe.num_experts).permute(2, 1, 0)
        for e in torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero():
            idx, top_x = torch.where(expert_mask[e].squeeze(0))
            out = moe.experts[e](x[None, top_x].reshape(-1, h)) * routing_weights[top_x, idx, None]
            final.index_add_(0, top_x, out.to(x.dtype))
        return final.reshape(b, s, h), router_logits
    return forward


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

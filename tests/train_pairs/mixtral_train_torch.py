"""Mixtral (sparse MoE) causal LM in TRAINING mode, HF transformers side: MixtralForCausalLM,
tiny random config (no download), eager attention, attention dropout 0.1, router_jitter_noise 0,
model.train(). The loss is the library's own: labels = input_ids (HF shifts them inside) and,
with output_router_logits=True, the router load-balancing auxiliary loss added with
router_aux_loss_coef 0.02 (`outputs.loss` = cross-entropy + 0.02 * aux_loss). AdamW (lr 1e-3,
betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on the matrices, two parameter groups).
Twin: mixtral_train_paddle.py. Ground truth: mixtral_train_truth.json.

PADIFF_BUG (this side only):
  aux_coef_default -> router_aux_loss_coef not carried over: output_router_logits=True is set
                      but the coefficient stays at the config default 0.001 instead of 0.02, so
                      the torch loss weights the load-balancing loss 20 times less
"""
import torch
from _train_common import bug, token_ids, torch_adamw

BUGS = {"aux_coef_default"} | {"paddle_dropout_key", "paddle_decay_fn_names"}  # the paddle side's, ignored here
VOCAB = 1000
CONFIG = dict(
    vocab_size=VOCAB, hidden_size=32, intermediate_size=64, max_position_embeddings=64,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_act="silu",
    initializer_range=0.1, rms_norm_eps=1e-5, rope_theta=10000.0, num_local_experts=4,
    num_experts_per_tok=2, tie_word_embeddings=False, attention_dropout=0.1, use_cache=False,
    router_jitter_noise=0.0, sliding_window=None, pad_token_id=0, bos_token_id=1, eos_token_id=2,
    output_router_logits=True,
)


def model():
    from transformers import MixtralConfig, MixtralForCausalLM

    b = bug(BUGS)
    torch.manual_seed(0)
    coef = {} if b == "aux_coef_default" else {"router_aux_loss_coef": 0.02}  # HF default 0.001
    cfg = MixtralConfig(**CONFIG, **coef, attn_implementation="eager")
    m = MixtralForCausalLM(cfg)
    m.train()
    return m


def inputs():
    ids = torch.from_numpy(token_ids(VOCAB))
    return (), {"input_ids": ids, "labels": ids, "use_cache": False}


def loss(output):
    return output.loss  # cross-entropy + router_aux_loss_coef * aux_loss, computed by the model


def optimizer(model):
    return torch_adamw(model)

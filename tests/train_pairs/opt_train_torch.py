"""OPT causal LM in TRAINING mode, HF transformers side: OPTForCausalLM, tiny random config (no
download), fp32, eager attention, pre-LN, relu, model.train(); dropout: attention_dropout 0.1,
dropout 0.0, layerdrop 0.0 (see opt_train_truth.json "conventions"); untied lm_head
(paddlenlp's OPT head has its own weight); the attention key biases frozen on both sides; a NEW
batch every step (`inputs(step)`); the model's own causal-LM loss (`labels=input_ids`, shifted
inside); torch.optim.Adam (lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay, no
clipping) with `torch.optim.lr_scheduler.CosineAnnealingLR(T_max=4)` (the loop steps it once
after every optimizer step). 4 steps. Twin: opt_train_paddle.py. Ground truth:
opt_train_truth.json.

PADIFF_BUG (this side only):
  dropout_swap     -> the two dropout fields swapped when the paddle config was carried over
                      (paddle attention_probs_dropout_prob 0.1 -> HF dropout, hidden_dropout_prob
                      0.0 -> HF attention_dropout): no dropout on the attention probabilities,
                      dropout 0.1 after self-attention and after the FFN instead
  sched_early_step -> scheduler.step() called once before training (the pre-1.1 PyTorch order,
                      scheduler before optimizer): every update uses the next step's learning
                      rate (update 1 at 8.5e-4 instead of 1e-3)
"""
import torch
from _train_common import BETA1, BETA2, EPS, LR, bug, token_ids
from transformers import OPTConfig, OPTForCausalLM

BUGS = {"sched_early_step", "dropout_swap"} | {"paddle_sched_detached"}  # paddle's, ignored here
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 32, 2, 4, 64, 64
T_MAX = 4


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    cfg = OPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        ffn_dim=FFN, word_embed_proj_dim=HIDDEN, max_position_embeddings=MAX_POS, activation_function="relu",
        do_layer_norm_before=True, layerdrop=0.0,
        # paddle's attention_probs_dropout_prob -> attention_dropout, hidden_dropout_prob -> dropout
        dropout=0.1 if b == "dropout_swap" else 0.0, attention_dropout=0.0 if b == "dropout_swap" else 0.1,
        tie_word_embeddings=False, use_cache=False, attn_implementation="eager",
    )
    m = OPTForCausalLM(cfg)
    for layer in m.model.decoder.layers:  # frozen: zero gradient in exact arithmetic (softmax is shift invariant)
        layer.self_attn.k_proj.bias.requires_grad_(False)
    m.train()
    return m


def _ids(step):
    # a new batch each step, from ids 4..63 only: consecutive batches share tokens, so embedding
    # rows moved by update k are read again by step k's forward
    return token_ids(64, seed=100 + step)


def inputs(step=0):
    ids = torch.from_numpy(_ids(step))
    return (), {"input_ids": ids, "labels": ids}


def loss(output):
    return output.loss


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=LR, betas=(BETA1, BETA2), eps=EPS)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T_MAX)
    if bug(BUGS) == "sched_early_step":
        sched.step()
    return opt, sched

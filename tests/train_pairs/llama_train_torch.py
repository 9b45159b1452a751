"""LLaMA causal LM in TRAINING mode, HF transformers side: LlamaForCausalLM, tiny random config
(no download), fp32, eager attention, attention_dropout 0.0 (HF's default; paddlenlp's LLaMA
has no dropout), model.train(), next-token cross-entropy, AdamW (lr 1e-3, betas (0.9, 0.999),
eps 1e-8, weight decay 0.01 on matrices only) with clip_grad_norm_(1.0) in clip_grad().
Twin: llama_train_paddle.py (paddlenlp LlamaForCausalLM). Ground truth: llama_train_truth.json.

PADIFF_BUG (this side only):
  attn_dropout -> config attention_dropout=0.1 (the paddlenlp model has none): every
                  attention drops attention probabilities in training
  no_clip      -> clip_grad() forgets to clip (the paddle side clips by global norm 1.0)
"""
import torch
import torch.nn.functional as F
from _train_common import CLIP_NORM, bug, token_ids, torch_adamw
from transformers import LlamaConfig, LlamaForCausalLM

BUGS = {"attn_dropout", "no_clip"} | {"beta2", "paddle_wd"}  # the paddle side's, ignored here
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=MAX_POS,
        rms_norm_eps=1e-6, rope_theta=10000.0, hidden_act="silu", attention_bias=False, mlp_bias=False,
        attention_dropout=0.1 if b == "attn_dropout" else 0.0,
        tie_word_embeddings=False, use_cache=False, attn_implementation="eager",
    )
    m = LlamaForCausalLM(cfg)
    m.train()
    return m


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    labels = torch.from_numpy(token_ids(VOCAB)[:, 1:])  # next token
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels.reshape(-1))


def optimizer(model):
    return torch_adamw(model)


def clip_grad(model):
    if bug(BUGS) != "no_clip":
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)

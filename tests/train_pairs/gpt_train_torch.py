"""GPT causal LM in TRAINING mode, HF transformers side: GPT2LMHeadModel, tiny random config (no
download), fp32, eager attention, dropout 0.1 (embd, attn, resid), model.train(), next-token
cross-entropy, AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices
only) with clip_grad_norm_(1.0) in clip_grad(). Twin: gpt_train_paddle.py (paddlenlp
GPTForCausalLM). Ground truth: gpt_train_truth.json.

PADIFF_BUG (this side only):
  attn_dropout    -> layer 1's attention-probability dropout has p 0.2 instead of 0.1
  label_smoothing -> the loss uses label_smoothing=0.1 (the paddle side none)
  shift_twice     -> the labels are shifted twice: the paddle-style labels (ids shifted left,
                     -100 at the end) go through HF's own causal-LM shift (logits[:, :-1] vs
                     labels[:, 1:]), so position t is trained to predict token t + 2
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import CLIP_NORM, bug, token_ids, torch_adamw
from transformers import GPT2Config, GPT2LMHeadModel

BUGS = {"attn_dropout", "label_smoothing", "shift_twice"} | {"eps"}  # the paddle side's, ignored here
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=FFN, n_positions=MAX_POS,
        activation_function="gelu_new", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
        layer_norm_epsilon=1e-5, use_cache=False, attn_implementation="eager",
    )
    m = GPT2LMHeadModel(cfg)
    if b == "attn_dropout":
        m.transformer.h[1].attn.attn_dropout.p = 0.2
    m.train()
    return m


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    labels = torch.from_numpy(token_ids(VOCAB)[:, 1:])  # next token
    if bug(BUGS) == "shift_twice":  # paddle-style labels (already shifted), shifted again the HF way
        ids = token_ids(VOCAB)
        labels = np.full(ids.shape, -100, "int64")
        labels[:, :-1] = ids[:, 1:]
        labels = torch.from_numpy(labels)[:, 1:]
        return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)
    smoothing = 0.1 if bug(BUGS) == "label_smoothing" else 0.0
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels.reshape(-1), label_smoothing=smoothing)


def optimizer(model):
    return torch_adamw(model)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)

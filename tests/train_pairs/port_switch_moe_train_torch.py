"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_switch_moe_train_paddle.py): a tiny Switch-Transformer encoder classifier with a
top-1 routed MoE FFN whose experts are STACKED parameters, dispatched with gather + bmm.

    SwitchTransformerClassifier: registers tok_emb (Embedding 64 x 32), pos_emb (Parameter
        [1, 8, 32]), emb_drop (nn.Dropout 0.1), layers (ModuleList of 2 Block), norm_f
        (LayerNorm), head (Linear 32 -> 3)
    Block (pre-LN): norm1, attn (Attention), norm2, moe (SwitchFFN), ffn_dropout (nn.Dropout 0.2,
        on the MoE output before the residual add)
    Attention: qkv (ONE Linear 32 -> 96, no bias; rows q | k | v), attn_drop (nn.Dropout 0.1 on
        the attention probabilities), proj (Linear 32 -> 32), resid_drop (nn.Dropout 0.1 on the
        attention output)
    SwitchFFN: gate (Linear 32 -> 4, no bias, the router), stacked expert parameters
        fc1_weight [4, 32, 64], fc1_bias [4, 64], fc2_weight [4, 64, 32], fc2_bias [4, 32];
        probs = softmax(gate(x)); (prob, index) = probs.max(-1); each token gathers its expert's
        matrices (fc1_weight[index] -> [T, 32, 64]) and runs them with torch.bmm; y = prob * out
    forward(input_ids) -> dict(logits [4, 3], router_probs (per layer [32, 4]),
                               expert_index (per layer [32]))

Loss: F.cross_entropy(logits, labels) + 0.01 * sum over layers of E * (f . P), f the fraction of
tokens per expert from torch.bincount(index, minlength=E), P the mean router probability.
Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8) with two parameter groups built by NAME
(the HF Trainer way): names containing "bias" or "norm" get weight decay 0, the rest 0.01 - the
same set as the paddle side's ndim >= 2 rule (the stacked expert biases are 2-D here but are
biases); clip_grad_norm_(model.parameters(), 1.0) in clip_grad().

PADIFF_BUG (this side only):
  torch_decay_by_ndim -> the parameter groups are built by shape (p.ndim >= 2, the rule of the
                         paddle side) instead of by name: the stacked expert biases fc1_bias
                         [4, 64] and fc2_bias [4, 32] are 2-D and get weight decay
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BETA1, BETA2, CLIP_NORM, EPS, LR, WD, bug
from torch import nn

BUGS = {"torch_decay_by_ndim"} | {"paddle_moe_dropout_p", "paddle_aux_mean"}  # the paddle side's, ignored here

VOCAB, MAX_LEN, D_MODEL, N_HEADS, D_FF, N_EXPERTS, N_LAYERS, N_CLASSES = 64, 8, 32, 4, 64, 4, 2, 3
DROPOUT, ATTN_DROPOUT, EXPERT_DROPOUT = 0.1, 0.1, 0.2
ROUTER_AUX_LOSS_COEF = 0.01
BATCH, SEQ = 4, 8

_TARGETS = {}


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads = N_HEADS
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
        self.attn_drop = nn.Dropout(ATTN_DROPOUT)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.resid_drop = nn.Dropout(DROPOUT)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
        k = k.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
        v = v.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.proj(y))


class SwitchFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D_MODEL, N_EXPERTS, bias=False)
        self.fc1_weight = nn.Parameter(torch.randn(N_EXPERTS, D_MODEL, D_FF) * 0.02)
        self.fc1_bias = nn.Parameter(torch.zeros(N_EXPERTS, D_FF))
        self.fc2_weight = nn.Parameter(torch.randn(N_EXPERTS, D_FF, D_MODEL) * 0.02)
        self.fc2_bias = nn.Parameter(torch.zeros(N_EXPERTS, D_MODEL))

    def forward(self, x):
        B, T, C = x.shape
        x = x.reshape(B * T, C)
        router_probs = F.softmax(self.gate(x), dim=-1)
        prob, index = router_probs.max(dim=-1)
        h = torch.bmm(x.unsqueeze(1), self.fc1_weight[index]).squeeze(1) + self.fc1_bias[index]
        h = F.relu(h)
        out = torch.bmm(h.unsqueeze(1), self.fc2_weight[index]).squeeze(1) + self.fc2_bias[index]
        out = out * prob.unsqueeze(-1)
        return out.view(B, T, C), router_probs, index


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.attn = Attention()
        self.norm2 = nn.LayerNorm(D_MODEL)
        self.moe = SwitchFFN()
        self.ffn_dropout = nn.Dropout(EXPERT_DROPOUT)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        out, router_probs, index = self.moe(self.norm2(x))
        return x + self.ffn_dropout(out), router_probs, index


class SwitchTransformerClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos_emb = nn.Parameter(torch.zeros(1, MAX_LEN, D_MODEL))
        self.emb_drop = nn.Dropout(DROPOUT)
        self.layers = nn.ModuleList([Block() for _ in range(N_LAYERS)])
        self.norm_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, N_CLASSES)

    def forward(self, input_ids):
        x = self.emb_drop(self.tok_emb(input_ids) + self.pos_emb[:, : input_ids.size(1)])
        router_probs, expert_index = [], []
        for layer in self.layers:
            x, probs, index = layer(x)
            router_probs.append(probs)
            expert_index.append(index)
        logits = self.head(self.norm_f(x).mean(dim=1))
        return {"logits": logits, "router_probs": tuple(router_probs), "expert_index": tuple(expert_index)}


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SwitchTransformerClassifier()
    m.train()
    return m


def make_batch(step):
    rng = np.random.default_rng(5300 + step)
    ids = rng.integers(4, VOCAB, (BATCH, SEQ)).astype(np.int64)
    labels = rng.integers(0, N_CLASSES, BATCH).astype(np.int64)
    return ids, labels


def inputs(step=0):
    ids, labels = make_batch(step)
    _TARGETS["labels"] = torch.from_numpy(labels)
    return (torch.from_numpy(ids),), {}


def load_balancing_loss(router_probs, expert_index):
    total = 0.0
    for probs, index in zip(router_probs, expert_index):
        counts = torch.bincount(index.flatten(), minlength=N_EXPERTS).to(probs.dtype)
        tokens_per_expert = counts / index.numel()
        prob_per_expert = probs.mean(dim=0)
        total = total + N_EXPERTS * torch.dot(tokens_per_expert, prob_per_expert)
    return total


def loss(output):
    ce = F.cross_entropy(output["logits"], _TARGETS["labels"])
    return ce + ROUTER_AUX_LOSS_COEF * load_balancing_loss(output["router_probs"], output["expert_index"])


def optimizer(model):
    if bug(BUGS) == "torch_decay_by_ndim":
        decay = [p for p in model.parameters() if p.ndim >= 2]
        no_decay = [p for p in model.parameters() if p.ndim < 2]
    else:
        no_decay_keys = ("bias", "norm")
        decay = [p for n, p in model.named_parameters() if not any(k in n for k in no_decay_keys)]
        no_decay = [p for n, p in model.named_parameters() if any(k in n for k in no_decay_keys)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=LR, betas=(BETA1, BETA2), eps=EPS)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)

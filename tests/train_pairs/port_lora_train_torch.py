"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_lora_train_paddle.py) the loralib / peft way: the base model is built plain, then
`inject_lora` REPLACES the target Linears (query, value) by a LoRALinear WRAPPER holding the base
Linear and the adapters (lora_A [r, in], lora_B [out, r] as nn.Parameters, lora_dropout),
loralib's `mark_only_lora_as_trainable` freezes the rest, the classifier is unfrozen.

    embed_tokens Embedding(64, 32), embed_positions [8, 32] (nn.Parameter), dropout (0.1)
    layers: ModuleList of 2 EncoderLayer: attn_norm, self_attn (query, key, value, dense; 4 heads),
            dropout (0.1), ffn_norm, ffn = Sequential(Linear 32->64, GELU, Linear 64->32, Dropout 0.1)
    LoRALinear(base, r=4, lora_alpha=8, lora_dropout): base(x) + (lora_dropout(x) @ lora_A.T @ lora_B.T)
            * lora_alpha / r; own parameters lora_A, lora_B registered before base.weight/base.bias
    classifier Linear(32, 3) registered BEFORE final_norm (called after it); mean pooling
Dropout calls with p > 0 per forward: 9, same order and shapes as paddle (embeddings; per layer
query adapter, value adapter, attention residual, FFN).

Trainable (requires_grad): the 8 LoRA matrices and classifier weight/bias; the rest frozen.
Loss: cross-entropy, labels [1, 2]. Optimizer: torch.optim.AdamW(lr 1e-2, betas (0.9, 0.999),
eps 1e-8) over the trainable tensors, groups weight_decay 0.01 (ndim >= 2) / 0.0; no clipping.

PADIFF_BUG (this side only):
  lora_drop_default -> inject_lora builds LoRALinear(child, r, lora_alpha) without passing
              lora_dropout: the signature's default (loralib's) lora_dropout=0.0 applies
  bias_all  -> mark_only_lora_as_trainable(model, bias="all") (loralib's option, copied from a
              recipe) instead of bias="none": every base bias (attention, FFN, LayerNorm) trains too
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"lora_drop_default", "bias_all"} | {"paddle_adam_l2"}  # the paddle side's, ignored here
CFG = dict(vocab_size=64, max_len=8, d_model=32, n_heads=4, d_ff=64, n_layers=2, num_labels=3,
           dropout=0.1, r=4, lora_alpha=8, lora_dropout=0.1, target_modules=("query", "value"))
LR, BETAS, EPS, WD = 1e-2, (0.9, 0.999), 1e-8, 0.01

IDS = np.random.default_rng(41).integers(0, CFG["vocab_size"], (2, CFG["max_len"])).astype("int64")
LABEL_IDS = np.array([1, 2], "int64")


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=0, lora_alpha=1, lora_dropout=0.0):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(base.in_features))
        self.lora_B = nn.Parameter(torch.randn(base.out_features, r) * 0.01)
        self.lora_dropout = nn.Dropout(p=lora_dropout)
        self.scaling = lora_alpha / r

    def forward(self, x):
        return self.base(x) + (self.lora_dropout(x) @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.dense = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = (t.view(b, s, self.h, self.dh).transpose(1, 2) for t in (self.query(x), self.key(x), self.value(x)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        ctx = scores.softmax(dim=-1) @ v
        return self.dense(ctx.transpose(1, 2).reshape(b, s, d))


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.attn_norm = nn.LayerNorm(d)
        self.self_attn = Attention(d, cfg["n_heads"])
        self.dropout = nn.Dropout(cfg["dropout"])
        self.ffn_norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, cfg["d_ff"]), nn.GELU(), nn.Linear(cfg["d_ff"], d),
                                 nn.Dropout(cfg["dropout"]))

    def forward(self, x):
        x = x + self.dropout(self.self_attn(self.attn_norm(x)))
        return x + self.ffn(self.ffn_norm(x))


class TransformerForSequenceClassification(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], d)
        self.embed_positions = nn.Parameter(torch.zeros(cfg["max_len"], d))
        self.dropout = nn.Dropout(cfg["dropout"])
        self.layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg["n_layers"])])
        self.classifier = nn.Linear(d, cfg["num_labels"])
        self.final_norm = nn.LayerNorm(d)

    def forward(self, input_ids):
        x = self.dropout(self.embed_tokens(input_ids) + self.embed_positions[: input_ids.shape[1]])
        for layer in self.layers:
            x = layer(x)
        return self.classifier(self.final_norm(x).mean(dim=1))


def inject_lora(model, cfg, pass_dropout=True):
    for _, module in list(model.named_modules()):
        for name, child in list(module.named_children()):
            if name in cfg["target_modules"] and isinstance(child, nn.Linear):
                if pass_dropout:
                    wrapped = LoRALinear(child, r=cfg["r"], lora_alpha=cfg["lora_alpha"],
                                         lora_dropout=cfg["lora_dropout"])
                else:
                    wrapped = LoRALinear(child, r=cfg["r"], lora_alpha=cfg["lora_alpha"])
                setattr(module, name, wrapped)
    return model


def mark_only_lora_as_trainable(model, bias="none"):
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad = False
    if bias == "all":
        for n, p in model.named_parameters():
            if "bias" in n:
                p.requires_grad = True


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = inject_lora(TransformerForSequenceClassification(CFG), CFG, pass_dropout=b != "lora_drop_default")
    mark_only_lora_as_trainable(m, bias="all" if b == "bias_all" else "none")
    m.classifier.requires_grad_(True)
    m.train()
    return m


def inputs():
    return (torch.from_numpy(IDS),), {}


def loss(output):
    return F.cross_entropy(output, torch.from_numpy(LABEL_IDS))


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": WD},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS)

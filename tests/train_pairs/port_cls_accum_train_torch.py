"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_cls_accum_train_paddle.py), the minGPT / HF-Trainer way:

    embeddings.{tok Embedding(96, 32), pos Embedding(16, 32), drop}: tok(ids) + pos(arange(S))
    blocks = ModuleList of 2 Block (pre-LN): x = x + drop(attn(ln_1(x), mask)); x = x + mlp(ln_2(x))
      attn: ONE packed qkv = Linear(32, 96, bias=False) (rows q | k | v), view(B, S, 3, H, hd),
            masked_fill(~mask, -inf) on the scores, softmax, attn_drop nn.Dropout, proj Linear
      mlp = Sequential(Linear(32, 64), GELU(), Linear(64, 32), Dropout(p))    (mlp.0 .. mlp.3)
    ln_f -> masked mean -> head_drop nn.Dropout(classifier_dropout) -> head Linear(32, 3)
Config: a dataclass (hidden_dropout 0.1, attention_dropout 0.1, classifier_dropout 0.0).
Dropout calls per forward: 7 with p > 0 (embeddings.drop; per block attn.attn_drop, drop,
mlp.3), then head_drop with p 0.

Loss: nn.CrossEntropyLoss(label_smoothing=0.1).
Optimizer: torch.optim.AdamW with two parameter groups by name, the HF Trainer way:
no_decay = ["bias", "ln_", "embeddings."] -> weight_decay 0.0, the rest 0.1; lr 2e-3, betas
(0.9, 0.999), eps 1e-8; LambdaLR(lambda step: (step + 1) / (warmup + 1)), warmup 3: lr 5e-4,
1e-3, 1.5e-3 for updates 1..3 (paddle's LinearWarmup); clip_grad_norm_(1.0) in clip_grad().

PADIFF_BUG (this side only):
  no_label_smoothing -> nn.CrossEntropyLoss() (label_smoothing not carried over)
  hf_no_decay_names  -> no_decay = ["bias", "LayerNorm.weight", "embeddings."]: HF's list copied,
                        but this model's LayerNorms are named ln_1 / ln_2 / ln_f, so their
                        weights are decayed
"""
import math
from dataclasses import dataclass

import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"no_label_smoothing", "hf_no_decay_names"} | {"paddle_cls_drop_or"}  # the paddle side's, ignored here


@dataclass
class Config:
    vocab_size: int = 96
    n_embd: int = 32
    n_head: int = 4
    n_inner: int = 64
    n_layer: int = 2
    block_size: int = 16
    num_labels: int = 3
    hidden_dropout: float = 0.1
    attention_dropout: float = 0.1
    classifier_dropout: float | None = 0.0
    layer_norm_eps: float = 1e-5


lr, warmup_steps, weight_decay, max_grad_norm, label_smoothing = 2e-3, 3, 0.1, 1.0, 0.1

_rng = np.random.default_rng(33)
lengths = [8, 5, 6, 3]
input_ids = _rng.integers(1, 96, (4, 8)).astype("int64")
attention_mask = (np.arange(8)[None, :] < np.array(lengths)[:, None]).astype("int64")
input_ids = input_ids * attention_mask
labels = np.array([0, 2, 1, 2], dtype="int64")


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=False)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.attn_drop = nn.Dropout(cfg.attention_dropout)

    def forward(self, x, mask):
        B, S, C = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(~mask[:, None, None, :], float("-inf"))
        att = self.attn_drop(att.softmax(dim=-1))
        y = (att @ v).transpose(1, 2).reshape(B, S, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.attn = MultiHeadSelfAttention(cfg)
        self.drop = nn.Dropout(cfg.hidden_dropout)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.mlp = nn.Sequential(nn.Linear(cfg.n_embd, cfg.n_inner), nn.GELU(), nn.Linear(cfg.n_inner, cfg.n_embd),
                                 nn.Dropout(cfg.hidden_dropout))

    def forward(self, x, mask):
        x = x + self.drop(self.attn(self.ln_1(x), mask))
        return x + self.mlp(self.ln_2(x))


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.pos = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.hidden_dropout)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        return self.drop(self.tok(ids) + self.pos(pos))


class TransformerClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = Embeddings(cfg)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        p = cfg.classifier_dropout if cfg.classifier_dropout is not None else cfg.hidden_dropout
        self.head_drop = nn.Dropout(p)
        self.head = nn.Linear(cfg.n_embd, cfg.num_labels)

    def forward(self, input_ids, attention_mask):
        mask = attention_mask.bool()
        x = self.embeddings(input_ids)
        for block in self.blocks:
            x = block(x, mask)
        x = self.ln_f(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
        return self.head(self.head_drop(pooled))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = TransformerClassifier(Config())
    m.train()
    return m


def inputs():
    return (torch.from_numpy(input_ids), torch.from_numpy(attention_mask)), {}


def loss(logits):
    if bug(BUGS) == "no_label_smoothing":
        loss_fct = nn.CrossEntropyLoss()
    else:
        loss_fct = nn.CrossEntropyLoss(label_smoothing=label_smoothing)
    return loss_fct(logits, torch.from_numpy(labels))


def optimizer(model):
    if bug(BUGS) == "hf_no_decay_names":
        no_decay = ["bias", "LayerNorm.weight", "embeddings."]
    else:
        no_decay = ["bias", "ln_", "embeddings."]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: (step + 1) / (warmup_steps + 1))
    return opt, sched


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)

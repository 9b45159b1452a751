"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_sched_clip_train_paddle.py) the timm / HF-Trainer way: a tiny pre-norm transformer
text classifier, AdamW with two parameter groups, SequentialLR(LinearLR, CosineAnnealingLR),
clip_grad_norm_ and label_smoothing in F.cross_entropy.

    tok_embed = nn.Embedding(64, 32), pos_embed = nn.Embedding(8, 32) (looked up with arange(8)), pos_drop (0.1)
    blocks = nn.ModuleList([Block]) (one block): norm1, attn (qkv = ONE packed Linear(32, 96, bias=False), rows
        q | k | v; attn_drop 0.1 on the probabilities; proj; proj_drop 0.1), norm2,
        mlp = Mlp(fc1, act = nn.GELU(), fc2, drop 0.1)
    norm, mean pooling over the 8 tokens, head = nn.Linear(32, 4)
Dropout 0.1: 4 calls with p > 0 per forward (pos_drop, attn.attn_drop, attn.proj_drop, mlp.drop),
the same order and shapes as the paddle side.

Loss: F.cross_entropy(logits, labels, label_smoothing=0.1).
Optimizer: torch.optim.AdamW(lr 5e-3, betas (0.9, 0.999), eps 1e-8) with groups
[weight_decay 0.1: every name without "bias" / "norm"], [weight_decay 0.0: the rest]; schedule
SequentialLR([LinearLR(start_factor=0.1, total_iters=2), CosineAnnealingLR(T_max=2)],
milestones=[2]): lr 5e-4, 2.75e-3, 5e-3, 2.5e-3 for updates 1..4; optimizer() returns (optimizer,
scheduler); clip_grad(): torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).

PADIFF_BUG (this side only):
  decay_norm -> the no-decay list copied from the HF scripts, ["bias", "LayerNorm.weight"]: this
              model's norms are called norm1 / norm2 / norm, so their scales are decayed
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"decay_norm"} | {"paddle_no_smoothing", "paddle_warmup_short"}  # the paddle side's, ignored here
VOCAB, SEQ, DIM, HEADS, MLP_DIM, NUM_CLASSES = 64, 8, 32, 4, 64, 4
BATCH, DROP = 8, 0.1
LR, BETAS, EPS, WD, CLIP_NORM, SMOOTHING = 5e-3, (0.9, 0.999), 1e-8, 0.1, 1.0, 0.1
WARMUP_STEPS, TOTAL_STEPS = 2, 4
_LABELS = [None]


class Attention(nn.Module):
    def __init__(self, dim, num_heads, drop):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=False)  # timm's qkv_bias=False
        self.attn_drop = nn.Dropout(drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(drop)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = self.attn_drop(attn.softmax(dim=-1))
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))


class Mlp(nn.Module):
    def __init__(self, dim, hidden, drop):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.act(self.fc1(x))))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_dim, drop):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads, drop)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, mlp_dim, drop)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, DIM)
        self.pos_embed = nn.Embedding(SEQ, DIM)  # learned absolute positions, the HF way
        self.pos_drop = nn.Dropout(DROP)
        self.blocks = nn.ModuleList([Block(DIM, HEADS, MLP_DIM, DROP)])
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.pos_drop(self.tok_embed(input_ids) + self.pos_embed(positions))
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.head(x.mean(dim=1))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = Classifier()
    m.train()
    return m


def inputs(step=0):
    rng = np.random.default_rng(4610 + step)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    _LABELS[0] = rng.integers(0, NUM_CLASSES, (BATCH,)).astype("int64")
    return (torch.from_numpy(ids),), {}


def loss(output):
    return F.cross_entropy(output, torch.from_numpy(_LABELS[0]), label_smoothing=SMOOTHING)


def optimizer(model):
    no_decay = ["bias", "LayerNorm.weight"] if bug(BUGS) == "decay_norm" else ["bias", "norm"]
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [{"params": [p for n, p in named if not any(nd in n for nd in no_decay)], "weight_decay": WD},
              {"params": [p for n, p in named if any(nd in n for nd in no_decay)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS)
    sched = torch.optim.lr_scheduler.SequentialLR(
        opt, [torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=WARMUP_STEPS),
              torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=TOTAL_STEPS - WARMUP_STEPS)],
        milestones=[WARMUP_STEPS])
    return opt, sched


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)

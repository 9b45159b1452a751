"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_llrd_adamw_train_paddle.py): the encoder written out by hand, LLRD by walking modules.

    EncoderClassifier: registers embeddings (Embeddings: tok, pos, norm, drop), blocks (ModuleList of
        3 Block), pool (Sequential(Linear 32 -> 32, Tanh)), drop, out (Linear 32 -> 3)
    Block (post-norm): attn (SelfAttention: fused qkv Linear 32 -> 96, attn_drop Dropout on the
        probabilities, proj Linear 32 -> 32), ln1, fc1 (32 -> 64), fc2 (64 -> 32), ln2; the residual
        dropouts (0.1) and the gelu are inline F.dropout / F.gelu in Block.forward
    forward(ids, keep) -> logits [B, 3]; keep [B, L] bool, masked_fill(-inf) on the scores

Loss: per-example class-weighted cross entropy (reduction="none"), divided by the sum of the targets'
weights (the weighted mean), class weights [0.6, 1.0, 2.4].
Optimizer (person B walks the modules): stages [embeddings, blocks.0, blocks.1, blocks.2, head
(pool + out)], stage d gets lr 2e-3 * 0.75 ** (4 - d); inside a stage, the weights of Linear and
Embedding modules are decayed (0.01), everything else (biases, LayerNorm) is not. AdamW(betas
(0.9, 0.999), eps 1e-8). Schedule written by hand: LambdaLR with lr_lambda(s) = 0.1 + 0.9 s / W for
s < W (W = 1), then (10 - s) / (10 - W) - every group's own lr times the same factor.

PADIFF_BUG (this side only):
  torch_loss_mean -> the per-example weighted losses averaged with .mean() (divided by the batch size,
                 not by the sum of the targets' weights)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_loss_mean"} | {"paddle_norm_decayed", "paddle_act_dropout"}  # the paddle side's, ignored here
VOCAB, MAX_POS, D, HEADS, FFN, N_LAYERS, N_CLS = 60, 16, 32, 4, 64, 3, 3
BATCH, SEQ = 8, 10
P_DROP = 0.1
BASE_LR, LLRD, WD = 2e-3, 0.75, 0.01
TOTAL_STEPS, WARMUP_STEPS, WARMUP_START = 10, 1, 0.1
CLASS_WEIGHTS = [0.6, 1.0, 2.4]

_DATA = {}


def make_batch(step):
    rng = np.random.default_rng(4310 + step)
    lengths = rng.integers(5, SEQ + 1, BATCH)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype(np.int64)
    mask = np.arange(SEQ)[None, :] < lengths[:, None]
    ids[~mask] = 0
    labels = rng.integers(0, N_CLS, BATCH).astype(np.int64)
    return ids, mask, labels


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(MAX_POS, D)
        self.norm = nn.LayerNorm(D)
        self.drop = nn.Dropout(P_DROP)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.drop(self.norm(self.tok(ids) + self.pos(positions)[None]))


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.attn_drop = nn.Dropout(P_DROP)
        self.proj = nn.Linear(D, D)

    def forward(self, x, keep):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / (D // HEADS) ** 0.5
        scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
        probs = self.attn_drop(scores.softmax(-1))
        return self.proj((probs @ v).transpose(1, 2).reshape(b, n, D))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention()
        self.ln1 = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, FFN)
        self.fc2 = nn.Linear(FFN, D)
        self.ln2 = nn.LayerNorm(D)

    def forward(self, x, keep):
        x = self.ln1(x + F.dropout(self.attn(x, keep), P_DROP, self.training))
        return self.ln2(x + F.dropout(self.fc2(F.gelu(self.fc1(x))), P_DROP, self.training))


class EncoderClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.blocks = nn.ModuleList([Block() for _ in range(N_LAYERS)])
        self.pool = nn.Sequential(nn.Linear(D, D), nn.Tanh())
        self.drop = nn.Dropout(P_DROP)
        self.out = nn.Linear(D, N_CLS)

    def forward(self, ids, keep):
        h = self.embeddings(ids)
        for block in self.blocks:
            h = block(h, keep)
        return self.out(self.drop(self.pool(h[:, 0])))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = EncoderClassifier()
    m.train()
    return m


def inputs(step=0):
    ids, mask, labels = make_batch(step)
    _DATA["labels"] = torch.from_numpy(labels)
    return (torch.from_numpy(ids), torch.from_numpy(mask)), {}


def loss(logits):
    y = _DATA["labels"]
    w = torch.tensor(CLASS_WEIGHTS, dtype=logits.dtype)
    per_example = F.cross_entropy(logits, y, weight=w, reduction="none")  # w[y] * nll
    if bug(BUGS) == "torch_loss_mean":
        return per_example.mean()
    return per_example.sum() / w[y].sum()


def lr_lambda(step):
    if step < WARMUP_STEPS:
        return WARMUP_START + (1.0 - WARMUP_START) * step / WARMUP_STEPS
    return max(0.0, (TOTAL_STEPS - step) / (TOTAL_STEPS - WARMUP_STEPS))


def optimizer(model):
    stages = [model.embeddings, *model.blocks, nn.ModuleList([model.pool, model.out])]
    groups = []
    for depth, stage in enumerate(stages):
        lr = BASE_LR * LLRD ** (len(stages) - 1 - depth)
        decay, no_decay = [], []
        for mod in stage.modules():
            for pname, p in mod.named_parameters(recurse=False):
                if pname == "weight" and isinstance(mod, (nn.Linear, nn.Embedding)):
                    decay.append(p)
                else:
                    no_decay.append(p)
        groups += [{"params": decay, "lr": lr, "weight_decay": WD},
                   {"params": no_decay, "lr": lr, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=BASE_LR, betas=(0.9, 0.999), eps=1e-8)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)

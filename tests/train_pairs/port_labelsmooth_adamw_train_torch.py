"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_labelsmooth_adamw_train_paddle.py): a tiny transformer-encoder text classifier,
label-smoothed cross entropy through torch's built-in argument, AdamW with two parameter groups
(the HF Trainer way) and a LambdaLR linear warm-up, 3 steps.

    SentenceClassifier: registers tok_embed (Embedding 40 x 16), pos_embed (Parameter
        [1, 16, 16], ViT style), drop (Dropout 0.1), block (Block: attn = SelfAttention with a
        FUSED qkv Linear 16 -> 48, attn_drop Dropout on the probabilities, proj Linear,
        proj_drop Dropout; ln_1; mlp = Sequential(Linear 16 -> 32, GELU, Dropout, Linear 32 -> 16,
        Dropout) (.0-.4); ln_2; post-norm: x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))),
        head_drop (Dropout 0.1), head (Linear 16 -> 4)
    forward(input_ids, attention_mask) -> logits [B, 4]; padded keys masked with -inf before
        the softmax; masked mean over the tokens.

Loss: F.cross_entropy(logits, labels, label_smoothing=0.1).
Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8) with groups {weight_decay 0.01: the
parameters of ndim >= 2} and {weight_decay 0.0: the rest (biases, LayerNorm scales)};
LambdaLR(lambda s: min(1, (s + 1) / 4)): lr 2.5e-4, 5e-4, 7.5e-4 for updates 1..3.
Data: the same batches as the paddle side (default_rng(7810 + step), same recipe).

PADIFF_BUG (this side only):
  torch_act_dropout_none -> the FFN's inner dropout (after GELU) built with p 0: person B read
              paddle's `act_dropout=None` as "no activation dropout" (paddle: None = use `dropout`)
  torch_nodecay_names    -> the parameter groups built with the HF recipe's name list
              no_decay = ["bias", "LayerNorm.weight"]: this model's norms are called ln_1 / ln_2,
              so their weights land in the decayed group
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_act_dropout_none", "torch_nodecay_names"} | {"paddle_smooth_others"}  # paddle side's, ignored here
VOCAB, MAX_LEN, DIM, HEADS, MLP_DIM, NUM_LABELS = 40, 16, 16, 2, 32, 4
BATCH, SEQ = 4, 8
P_DROP, SMOOTHING = 0.1, 0.1
LR, WARMUP_STEPS, WEIGHT_DECAY = 1e-3, 4, 0.01

_DATA = {}


def get_batch(step):
    rng = np.random.default_rng(7810 + step)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype(np.int64)
    lengths = rng.integers(4, SEQ + 1, BATCH)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.int64)
    ids = ids * mask
    labels = rng.integers(0, NUM_LABELS, BATCH).astype(np.int64)
    return ids, mask, labels


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, p):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attn_drop = nn.Dropout(p)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(p)

    def forward(self, x, key_padding):  # key_padding [B, S] True = pad
        b, s, d = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.masked_fill(key_padding[:, None, None, :], float("-inf"))
        attn = self.attn_drop(attn.softmax(dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(b, s, d)
        return self.proj_drop(self.proj(out))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_dim, p, act_p):
        super().__init__()
        self.attn = SelfAttention(dim, heads, p)
        self.ln_1 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Dropout(act_p),
                                 nn.Linear(mlp_dim, dim), nn.Dropout(p))
        self.ln_2 = nn.LayerNorm(dim)

    def forward(self, x, key_padding):
        x = self.ln_1(x + self.attn(x, key_padding))
        return self.ln_2(x + self.mlp(x))


class SentenceClassifier(nn.Module):
    def __init__(self, act_p):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, DIM)
        self.pos_embed = nn.Parameter(torch.zeros(1, MAX_LEN, DIM))
        self.drop = nn.Dropout(P_DROP)
        self.block = Block(DIM, HEADS, MLP_DIM, P_DROP, act_p)
        self.head_drop = nn.Dropout(P_DROP)
        self.head = nn.Linear(DIM, NUM_LABELS)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def forward(self, input_ids, attention_mask):
        x = self.tok_embed(input_ids) + self.pos_embed[:, : input_ids.shape[1]]
        x = self.drop(x)
        x = self.block(x, attention_mask == 0)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        x = (x * m).sum(1) / m.sum(1)
        return self.head(self.head_drop(x))


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    act_p = 0.0 if b == "torch_act_dropout_none" else P_DROP
    m = SentenceClassifier(act_p)
    m.train()
    return m


def inputs(step=0):
    ids, mask, labels = get_batch(step)
    _DATA["labels"] = torch.from_numpy(labels)
    return (torch.from_numpy(ids), torch.from_numpy(mask)), {}


def loss(output):
    return F.cross_entropy(output, _DATA["labels"], label_smoothing=SMOOTHING)


def optimizer(model):
    if bug(BUGS) == "torch_nodecay_names":
        no_decay = ["bias", "LayerNorm.weight"]
        decay_p = [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)]
        other_p = [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)]
    else:
        decay_p = [p for p in model.parameters() if p.ndim >= 2]
        other_p = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay_p, "weight_decay": WEIGHT_DECAY}, {"params": other_p, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / WARMUP_STEPS))
    return opt, sched

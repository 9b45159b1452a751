"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_paramgroups_train_paddle.py) the timm / nanoGPT way.

    TextTransformer: registers tok_embed (nn.Embedding), pos_embed (a bare nn.Parameter [1, 12, 32]),
        emb_drop, blocks (ModuleList of 2 Block), ln_f, head = Sequential(Linear, Tanh, Dropout,
        Linear) (.0-.3)
    Block (pre-LN): ln_1, attn (Attention: q Linear, one packed kv Linear [64, 32] (k rows 0:32,
        v rows 32:64), proj; the attention-probability dropout is an inline F.dropout, no module), ln_2, mlp = Sequential(Linear, GELU, Linear)
        (.0-.2), resid_drop (one nn.Dropout used for both residual branches)
    forward(input_ids, attn_mask) -> logits [B, 5] from position 0; padding keys masked with
        masked_fill(-inf) on the scores

Dropout: hidden 0.2 (embeddings, residuals, head), attention 0.1 (inline, training=self.training).
Data: the same batches as the paddle side (default_rng(7200 + step), drawn by the same recipe).
Loss: label smoothing written by hand (timm's LabelSmoothingCrossEntropy): logp = log_softmax,
loss = (1 - eps) * nll + eps * (-logp.mean(-1)), eps 0.1, averaged over the batch (the target is
(1 - eps) on the label plus eps / K everywhere, as F.cross_entropy(label_smoothing=eps)).
Optimizer: AdamW(betas (0.9, 0.999), eps 1e-8) over four parameter groups: backbone decay /
backbone no-decay (lr 1e-3), head decay / head no-decay (lr 5e-3); weight decay 0.05 on the
"decay" groups, chosen by parameter NAME (biases, LayerNorm weights: no decay; the bare pos_embed
is decayed, as paddle's position table). Schedule: LambdaLR with a per-step factor 0.25 (warm-up
step 0), then (TOTAL - s) / (TOTAL - WARMUP) for s >= 1 (TOTAL 5): factors 0.25, 1.0, 0.75 for
updates 1..3, applied to each group's own lr; optimizer() returns (optimizer, scheduler).

PADIFF_BUG (this side only):
  torch_smooth_k_minus_1 -> the hand-written loss spreads the smoothing mass over the K - 1 OTHER
              classes (target 1 - eps, others eps / (K - 1)), the other common convention, instead
              of eps / K over all classes (what paddle's label_smoothing does)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_smooth_k_minus_1"} | {"paddle_attn_p_slip", "paddle_head_lr_abs"}  # the paddle side's, ignored here

VOCAB, MAX_POS, D_MODEL, N_HEADS, D_FF, N_LAYERS, N_CLS = 40, 12, 32, 4, 64, 2, 5
BATCH, SEQ = 8, 10
HIDDEN_DROPOUT, ATTN_DROPOUT = 0.2, 0.1
LR, HEAD_LR, WEIGHT_DECAY, SMOOTHING = 1e-3, 5e-3, 0.05, 0.1
WARMUP, TOTAL, WARMUP_FACTOR = 1, 5, 0.25

_DATA = {}


def get_batch(step):
    rng = np.random.default_rng(7200 + step)
    ids = rng.integers(4, VOCAB, (BATCH, SEQ)).astype(np.int64)
    lengths = rng.integers(6, SEQ + 1, BATCH)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.int64)
    ids = ids * mask
    ids[:, 0] = 1  # [CLS]
    labels = rng.integers(0, N_CLS, BATCH).astype(np.int64)
    return ids, mask, labels


class Attention(nn.Module):
    def __init__(self, dim, num_heads, attn_p):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)
        self.attn_p = attn_p

    def forward(self, x, key_padding):
        B, T, C = x.shape

        def heads(t):
            return t.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)

        k, v = self.kv(x).split(C, dim=-1)
        q, k, v = heads(self.q(x)), heads(k), heads(v)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(key_padding[:, None, None, :], float("-inf"))
        att = F.dropout(att.softmax(dim=-1), p=self.attn_p, training=self.training)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_dim, drop, attn_drop):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads, attn_drop)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, dim))
        self.resid_drop = nn.Dropout(drop)

    def forward(self, x, key_padding):
        x = x + self.resid_drop(self.attn(self.ln_1(x), key_padding))
        x = x + self.resid_drop(self.mlp(self.ln_2(x)))
        return x


class TextTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos_embed = nn.Parameter(torch.zeros(1, MAX_POS, D_MODEL))
        self.emb_drop = nn.Dropout(HIDDEN_DROPOUT)
        self.blocks = nn.ModuleList([Block(D_MODEL, N_HEADS, D_FF, HIDDEN_DROPOUT, ATTN_DROPOUT) for _ in range(N_LAYERS)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Sequential(nn.Linear(D_MODEL, D_MODEL), nn.Tanh(), nn.Dropout(HIDDEN_DROPOUT),
                                  nn.Linear(D_MODEL, N_CLS))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, input_ids, attn_mask):
        T = input_ids.shape[1]
        x = self.emb_drop(self.tok_embed(input_ids) + self.pos_embed[:, :T])
        key_padding = attn_mask == 0
        for blk in self.blocks:
            x = blk(x, key_padding)
        x = self.ln_f(x)
        return self.head(x[:, 0])


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = TextTransformer()
    m.train()
    return m


def inputs(step=0):
    ids, mask, labels = get_batch(step)
    _DATA["labels"] = torch.from_numpy(labels)
    return (torch.from_numpy(ids), torch.from_numpy(mask)), {}


def loss(output):
    target = _DATA["labels"]
    logprobs = F.log_softmax(output, dim=-1)
    nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1)).squeeze(1)
    if bug(BUGS) == "torch_smooth_k_minus_1":
        n = output.shape[-1]
        smooth_loss = -(logprobs.sum(dim=-1) + nll_loss) / (n - 1)  # the other K - 1 classes only
    else:
        smooth_loss = -logprobs.mean(dim=-1)
    return ((1.0 - SMOOTHING) * nll_loss + SMOOTHING * smooth_loss).mean()


def optimizer(model):
    def no_decay(name):
        return name.endswith(".bias") or name.startswith("ln_") or ".ln_" in name

    groups = {(h, d): [] for h in (False, True) for d in (True, False)}
    for name, p in model.named_parameters():
        groups[(name.startswith("head."), not no_decay(name))].append(p)
    param_groups = [
        {"params": groups[(False, True)], "lr": LR, "weight_decay": WEIGHT_DECAY},
        {"params": groups[(False, False)], "lr": LR, "weight_decay": 0.0},
        {"params": groups[(True, True)], "lr": HEAD_LR, "weight_decay": WEIGHT_DECAY},
        {"params": groups[(True, False)], "lr": HEAD_LR, "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(param_groups, betas=(0.9, 0.999), eps=1e-8)

    def lr_lambda(step):
        if step < WARMUP:
            return WARMUP_FACTOR + (1.0 - WARMUP_FACTOR) * step / WARMUP
        return max(0.0, (TOTAL - step) / (TOTAL - WARMUP))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)

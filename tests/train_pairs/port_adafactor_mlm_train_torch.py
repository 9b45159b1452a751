"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_adafactor_mlm_train_paddle.py), the HF BERT way, with the HF transformers Adafactor
algorithm written out by hand (torch ships none).

    TinyBertForMLM: registers embeddings (Embeddings: word_embeddings, position_embeddings,
        LayerNorm, dropout; non-persistent position_ids buffer), blocks (ModuleList of 2 Block),
        lm_head (LMHead: dense, act = nn.GELU module, layer_norm, decoder = Linear 32 -> 96 whose
        weight is tied to embeddings.word_embeddings.weight, bias its own)
    Block: registers attention (SelfAttention: query, key (no bias), value, out Linears and dropout, the
        attention-probability Dropout module), attention_dropout (Dropout after attention),
        attention_norm, ffn (FeedForward: fc_in, F.gelu, fc_out, its output dropout an inline
        F.dropout), ffn_norm; post-LN: norm(x + dropout(attn(x))), norm(x + ffn(x))
    forward(input_ids, attention_mask) -> logits [B, S, 96]

Padding: scores.masked_fill(~keep, finfo(dtype).min) before the softmax.
Loss: F.cross_entropy(logits.view(-1, V), labels.view(-1)) (ignore_index -100 by default: torch's
"mean" divides by the non-ignored positions).
Optimizer: Adafactor (HF transformers' algorithm) with lr 1e-3, eps (1e-30, 1e-3),
clip_threshold 1.0, decay_rate -0.8, beta1 None, weight_decay 0, scale_parameter False,
relative_step False, warmup_init False: factored second moments (exp_avg_sq_row / _col) for
tensors of 2+ dims, r_factor = rsqrt(row / mean(row)), c_factor = rsqrt(col).
Data: the same batches as the paddle side (default_rng(13400 + step), same recipe).

PADIFF_BUG (this side only):
  torch_step_off_by_one -> the optimizer state's step counter starts at 1 instead of 0, so the
                           first update already uses t = 2: beta2_t = 1 - 2^-0.8 = 0.426 instead
                           of 0 (the running second moments start from 0.574 g^2 instead of g^2)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_step_off_by_one"} | {"paddle_ce_mean_all", "paddle_act_dropout_default"}  # paddle side's, ignored
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 96, 32, 2, 4, 64, 16
PAD_ID, CLS_ID, SEP_ID, MASK_ID, FIRST_WORD = 0, 1, 2, 3, 4
HIDDEN_DROPOUT, ATTN_DROPOUT, LN_EPS = 0.1, 0.1, 1e-12
BATCH, SEQ, LENGTHS, MLM_PROB = 4, 12, (12, 12, 10, 7), 0.2

_BATCH = {}


def mlm_collate(step):
    rng = np.random.default_rng(13400 + step)
    tokens = np.zeros((BATCH, SEQ), dtype=np.int64)
    for b, length in enumerate(LENGTHS):
        body = rng.integers(FIRST_WORD, VOCAB, length - 2)
        tokens[b, :length] = np.concatenate([[CLS_ID], body, [SEP_ID]])
    special = tokens < FIRST_WORD
    prob = rng.random((BATCH, SEQ))
    masked = (prob < MLM_PROB) & ~special
    for b in range(BATCH):
        if masked[b].sum() == 0:
            prob_b = prob[b].copy()
            prob_b[special[b]] = np.inf
            masked[b, prob_b.argmin()] = True
    choice = rng.random((BATCH, SEQ))
    random_words = rng.integers(FIRST_WORD, VOCAB, (BATCH, SEQ))
    input_ids = np.where(masked & (choice < 0.8), MASK_ID, tokens)
    replace = masked & (choice >= 0.8) & (choice < 0.9)
    input_ids = np.where(replace, random_words, input_ids)
    labels = tokens.copy()
    labels[~masked] = -100
    return input_ids.astype(np.int64), (tokens != PAD_ID).astype(np.int64), labels


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)
        self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.dropout = nn.Dropout(HIDDEN_DROPOUT)
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0), persistent=False)

    def forward(self, input_ids):
        pos = self.position_ids[:, : input_ids.shape[1]]
        return self.dropout(self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(pos)))


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = HIDDEN // HEADS
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN, bias=False)  # no key bias (softmax-invariant)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.dropout = nn.Dropout(ATTN_DROPOUT)

    def forward(self, x, keep):
        b, s, _ = x.shape

        def heads(t):
            return t.view(b, s, HEADS, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~keep[:, None, None, :], torch.finfo(scores.dtype).min)
        probs = self.dropout(scores.softmax(dim=-1))
        ctx = (probs @ v).transpose(1, 2).reshape(b, s, HIDDEN)
        return self.out(ctx)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(HIDDEN, FFN)
        self.fc_out = nn.Linear(FFN, HIDDEN)
        self.p = HIDDEN_DROPOUT

    def forward(self, x):
        return F.dropout(self.fc_out(F.gelu(self.fc_in(x))), self.p, self.training)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = SelfAttention()
        self.attention_dropout = nn.Dropout(HIDDEN_DROPOUT)
        self.attention_norm = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.ffn = FeedForward()
        self.ffn_norm = nn.LayerNorm(HIDDEN, eps=LN_EPS)

    def forward(self, x, keep):
        x = self.attention_norm(x + self.attention_dropout(self.attention(x, keep)))
        return self.ffn_norm(x + self.ffn(x))


class LMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)
        self.act = nn.GELU()
        self.layer_norm = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.decoder = nn.Linear(HIDDEN, VOCAB)

    def forward(self, h):
        return self.decoder(self.layer_norm(self.act(self.dense(h))))


class TinyBertForMLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.lm_head = LMHead()
        self.lm_head.decoder.weight = self.embeddings.word_embeddings.weight  # tied

    def forward(self, input_ids, attention_mask):
        keep = attention_mask.bool()
        h = self.embeddings(input_ids)
        for block in self.blocks:
            h = block(h, keep)
        return self.lm_head(h)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = TinyBertForMLM()
    m.train()
    return m


def inputs(step=0):
    input_ids, attention_mask, labels = mlm_collate(step)
    _BATCH["labels"] = torch.from_numpy(labels)
    return (torch.from_numpy(input_ids), torch.from_numpy(attention_mask)), {}


def loss(output):
    return F.cross_entropy(output.view(-1, VOCAB), _BATCH["labels"].view(-1))


class Adafactor(torch.optim.Optimizer):
    """The HF transformers Adafactor update, re-typed (relative_step / scale_parameter /
    warmup_init off, no beta1, no weight decay)."""

    def __init__(self, params, lr=1e-3, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=-0.8):
        super().__init__(params, dict(lr=lr, eps=eps, clip_threshold=clip_threshold, decay_rate=decay_rate))

    @staticmethod
    def _rms(tensor):
        return tensor.norm(2) / (tensor.numel() ** 0.5)

    @torch.no_grad()
    def step(self, closure=None):
        first_step = 1 if bug(BUGS) == "torch_step_off_by_one" else 0
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                factored = grad.dim() >= 2
                if len(state) == 0:
                    state["step"] = first_step
                    if factored:
                        state["exp_avg_sq_row"] = torch.zeros(grad.shape[:-1], dtype=grad.dtype)
                        state["exp_avg_sq_col"] = torch.zeros(grad.shape[:-2] + grad.shape[-1:], dtype=grad.dtype)
                    else:
                        state["exp_avg_sq"] = torch.zeros_like(grad)
                state["step"] += 1
                beta2t = 1.0 - math.pow(state["step"], group["decay_rate"])
                update = grad**2 + group["eps"][0]
                if factored:
                    row, col = state["exp_avg_sq_row"], state["exp_avg_sq_col"]
                    row.mul_(beta2t).add_(update.mean(dim=-1), alpha=1.0 - beta2t)
                    col.mul_(beta2t).add_(update.mean(dim=-2), alpha=1.0 - beta2t)
                    r_factor = (row / row.mean(dim=-1, keepdim=True)).rsqrt_().unsqueeze(-1)
                    c_factor = col.unsqueeze(-2).rsqrt()
                    update = torch.mul(r_factor, c_factor) * grad
                else:
                    exp_avg_sq = state["exp_avg_sq"]
                    exp_avg_sq.mul_(beta2t).add_(update, alpha=1.0 - beta2t)
                    update = exp_avg_sq.rsqrt().mul_(grad)
                update.div_((self._rms(update) / group["clip_threshold"]).clamp_(min=1.0))
                update.mul_(group["lr"])
                p.add_(-update)


def optimizer(model):
    return Adafactor(model.parameters())

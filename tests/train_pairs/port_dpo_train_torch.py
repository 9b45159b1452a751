"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_dpo_train_paddle.py) the Hugging Face TRL DPOTrainer way.

    PreferenceModel: registers model (GPTLike, dropout 0.1) and ref_model (copy.deepcopy(model):
        the same config, kept in eval() - train() is overridden so model.train() leaves it there -
        and frozen by requires_grad_(False), no torch.no_grad()); forward(input_ids) takes the
        concatenated [chosen; rejected] batch (TRL's concatenated_inputs) and returns
        (policy_logits, reference_logits)
    GPTLike: embed_tokens, embed_positions, dropout, layers (ModuleList of Block), norm, lm_head
        (no bias)
    Block (pre-LN): registers attn, ffn, ln_1, ln_2; x = x + attn(ln_1(x)); x = x + ffn(ln_2(x))
    SelfAttention: qkv (one packed Linear H -> 3H, split q | k | v), out, attention-probability
        dropout inline (F.dropout(att, attn_pdrop, self.training)), resid_dropout (nn.Dropout)
        after out; causal mask by masked_fill(-inf)
    ffn = Sequential(Linear H -> 64, GELU, Linear 64 -> H, Dropout)

Loss (TRL, loss_type "sigmoid"): labels = input_ids with -100 outside the response;
_get_batch_logps: labels[:, 1:], logits[:, :-1], loss_mask = labels != -100, gather of log_softmax,
summed per sequence; logits = (pi_c - pi_r) - (ref_c - ref_r); loss = -logsigmoid(0.1 * logits).mean().
Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8) with two parameter groups over the
parameters that require gradients (ndim >= 2: weight decay 0.01; the rest 0).
Data: the same preference pairs as the paddle side (default_rng(2790 + step), same recipe).

PADIFF_BUG (this side only):
  torch_ref_train    -> the train() override is left out: __init__'s ref_model.eval() is undone
              by model.train(), so the reference runs with dropout (0.1 everywhere)
  torch_ref_unfrozen -> ref_model.requires_grad_(False) forgotten: the reference gets gradients
              (its forward is not under no_grad) and joins the optimizer's parameter groups
"""
import copy
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BETA1, BETA2, EPS, LR, WD, bug
from torch import nn

BUGS = {"torch_ref_train", "torch_ref_unfrozen"} | {"paddle_avg_logp"}  # the paddle side's, ignored here
VOCAB, D_MODEL, N_HEAD, D_FF, N_LAYER, N_POSITIONS, SEQ_LEN = 64, 32, 4, 64, 2, 16, 10
N_PAIRS, PAD_ID, BETA = 2, 0, 0.1
PDROP = 0.1

_STATE = {}


def make_pairs(step):
    rng = np.random.default_rng(2790 + step)
    chosen = np.full((N_PAIRS, SEQ_LEN), PAD_ID, dtype=np.int64)
    rejected = np.full((N_PAIRS, SEQ_LEN), PAD_ID, dtype=np.int64)
    chosen_labels = np.full((N_PAIRS, SEQ_LEN), -100, dtype=np.int64)
    rejected_labels = np.full((N_PAIRS, SEQ_LEN), -100, dtype=np.int64)
    for i in range(N_PAIRS):
        p_len = int(rng.integers(2, 4))
        c_len, r_len = int(rng.integers(3, 7)), int(rng.integers(3, 7))
        prompt = rng.integers(4, VOCAB, p_len)
        c_resp, r_resp = rng.integers(4, VOCAB, c_len), rng.integers(4, VOCAB, r_len)
        chosen[i, :p_len + c_len] = np.concatenate([prompt, c_resp])
        rejected[i, :p_len + r_len] = np.concatenate([prompt, r_resp])
        chosen_labels[i, p_len:p_len + c_len] = c_resp
        rejected_labels[i, p_len:p_len + r_len] = r_resp
    return chosen, rejected, chosen_labels, rejected_labels


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_head, attn_pdrop, resid_pdrop):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.attn_pdrop = attn_pdrop
        self.resid_dropout = nn.Dropout(resid_pdrop)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        att = att.masked_fill(~causal, float("-inf"))
        att = F.dropout(F.softmax(att, dim=-1), self.attn_pdrop, self.training)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.out(y))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention(D_MODEL, N_HEAD, PDROP, PDROP)
        self.ffn = nn.Sequential(nn.Linear(D_MODEL, D_FF), nn.GELU(), nn.Linear(D_FF, D_MODEL), nn.Dropout(PDROP))
        self.ln_1 = nn.LayerNorm(D_MODEL)
        self.ln_2 = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.ffn(self.ln_2(x))


class GPTLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, D_MODEL)
        self.embed_positions = nn.Embedding(N_POSITIONS, D_MODEL)
        self.dropout = nn.Dropout(PDROP)
        self.layers = nn.ModuleList([Block() for _ in range(N_LAYER)])
        self.norm = nn.LayerNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        h = self.dropout(self.embed_tokens(input_ids) + self.embed_positions(positions)[None])
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm(h))


class PreferenceModel(nn.Module):
    def __init__(self, frozen_ref=True):
        super().__init__()
        self.model = GPTLike()
        self.ref_model = copy.deepcopy(self.model)
        self.ref_model.eval()
        if frozen_ref:
            self.ref_model.requires_grad_(False)

    def train(self, mode=True):
        super().train(mode)
        if bug(BUGS) != "torch_ref_train":
            self.ref_model.eval()  # the reference never drops anything
        return self

    def forward(self, input_ids):
        return self.model(input_ids), self.ref_model(input_ids)


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = PreferenceModel(frozen_ref=b != "torch_ref_unfrozen")
    m.train()
    return m


def inputs(step=0):
    chosen, rejected, chosen_labels, rejected_labels = make_pairs(step)
    _STATE["labels"] = torch.from_numpy(np.concatenate([chosen_labels, rejected_labels]))
    return (torch.from_numpy(np.concatenate([chosen, rejected])),), {}


def _get_batch_logps(logits, labels):
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    loss_mask = labels != -100
    labels[labels == -100] = 0
    per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
    return (per_token_logps * loss_mask).sum(-1)


def loss(output):
    policy_logits, ref_logits = output
    labels = _STATE["labels"]
    policy_logps = _get_batch_logps(policy_logits, labels)
    ref_logps = _get_batch_logps(ref_logits, labels)
    pi_logratios = policy_logps[:N_PAIRS] - policy_logps[N_PAIRS:]
    ref_logratios = ref_logps[:N_PAIRS] - ref_logps[N_PAIRS:]
    logits = pi_logratios - ref_logratios
    return (-F.logsigmoid(BETA * logits)).mean()


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": WD},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=WD)

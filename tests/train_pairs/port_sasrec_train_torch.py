"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_sasrec_train_paddle.py) in the layout of pmixer/SASRec.pytorch: parallel
ModuleLists instead of block modules, Conv1d point-wise feed-forward, a hand-written causal
attention with a fused key/value projection.

    SASRecModel: registers item_emb (Embedding 51 x 16, padding_idx 0), pos_emb (Embedding 8 x 16,
        looked up with the positions expanded to [B, L]), emb_dropout (Dropout 0.2), attention_layernorms,
        attention_layers (CausalSelfAttention), forward_layernorms, forward_layers
        (PointWiseFeedForward) - ModuleLists of 2 - and last_layernorm (LayerNorm eps 1e-8)
    CausalSelfAttention: query (Linear 16 -> 16), key_value (Linear 16 -> 32: keys rows 0:16,
        values rows 16:32), out (Linear 16 -> 16), attn_dropout (Dropout 0.2 on the attention
        probabilities [B, 2, L, L]); scores / sqrt(8), masked_fill(~tril, -inf), softmax
    PointWiseFeedForward: conv1, dropout1, relu, conv2, dropout2 (Conv1d 16 -> 16, kernel 1, on
        the transposed [B, 16, L] input) + residual
    forward(log_seqs, pos_seqs, neg_seqs) -> (pos_logits [B, L], neg_logits [B, L])

Data: the same histories as the paddle side (default_rng(5600 + step), the same recipe).
Loss (pmixer): indices = np.where(pos_seqs != 0); BCEWithLogitsLoss(pos_logits[indices], 1) +
BCEWithLogitsLoss(neg_logits[indices], 0) (each a mean over the real positions).
Optimizer: torch.optim.NAdam(lr 1e-3, betas (0.9, 0.98), eps 1e-8, momentum_decay 4e-3), no
weight decay.

PADIFF_BUG (this side only):
  bce_no_pad_mask -> the BCE taken over every position, padding included (the index mask
              forgotten): padded positions add log 2 each and dilute the mean
  adam_not_nadam  -> torch.optim.Adam(lr 1e-3, betas (0.9, 0.98), eps 1e-8), what pmixer's
              main.py uses, instead of the paddle original's NAdam
"""
import math

import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"bce_no_pad_mask", "adam_not_nadam"} | {"paddle_mha_no_dropout"}  # the paddle side's, ignored here
ITEM_NUM, MAXLEN, HIDDEN, HEADS, NUM_BLOCKS, USERS, DROPOUT = 50, 8, 16, 2, 2, 4, 0.2

_POS = {}


def sample_batch(step):
    rng = np.random.default_rng(5600 + step)
    seq = np.zeros((USERS, MAXLEN), dtype=np.int64)
    pos = np.zeros_like(seq)
    neg = np.zeros_like(seq)
    for u in range(USERS):
        n = int(rng.integers(3, MAXLEN + 1))
        items = rng.choice(np.arange(1, ITEM_NUM + 1), n + 1, replace=False)
        not_rated = np.setdiff1d(np.arange(1, ITEM_NUM + 1), items)
        seq[u, -n:] = items[:-1]
        pos[u, -n:] = items[1:]
        neg[u, -n:] = rng.choice(not_rated, n)
    return seq, pos, neg


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key_value = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.attn_dropout = nn.Dropout(DROPOUT)

    def forward(self, queries, keys, attention_mask):
        b, t, _ = queries.shape
        hd = HIDDEN // HEADS
        q = self.query(queries).view(b, t, HEADS, hd).transpose(1, 2)
        k, v = self.key_value(keys).split(HIDDEN, dim=-1)
        k = k.view(b, t, HEADS, hd).transpose(1, 2)
        v = v.view(b, t, HEADS, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        att = att.masked_fill(attention_mask, float("-inf")).softmax(dim=-1)
        y = self.attn_dropout(att) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, HIDDEN))


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super().__init__()
        self.conv1 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = nn.Dropout(p=dropout_rate)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = self.dropout2(self.conv2(self.relu(self.dropout1(self.conv1(inputs.transpose(-1, -2))))))
        outputs = outputs.transpose(-1, -2)
        return outputs + inputs


class SASRecModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.item_emb = nn.Embedding(ITEM_NUM + 1, HIDDEN, padding_idx=0)
        self.pos_emb = nn.Embedding(MAXLEN, HIDDEN)
        self.emb_dropout = nn.Dropout(p=DROPOUT)
        self.attention_layernorms = nn.ModuleList()
        self.attention_layers = nn.ModuleList()
        self.forward_layernorms = nn.ModuleList()
        self.forward_layers = nn.ModuleList()
        for _ in range(NUM_BLOCKS):
            self.attention_layernorms.append(nn.LayerNorm(HIDDEN, eps=1e-8))
            self.attention_layers.append(CausalSelfAttention())
            self.forward_layernorms.append(nn.LayerNorm(HIDDEN, eps=1e-8))
            self.forward_layers.append(PointWiseFeedForward(HIDDEN, DROPOUT))
        self.last_layernorm = nn.LayerNorm(HIDDEN, eps=1e-8)

    def log2feats(self, log_seqs):
        seqs = self.item_emb(log_seqs) * self.item_emb.embedding_dim ** 0.5
        positions = torch.arange(log_seqs.shape[1]).unsqueeze(0).expand_as(log_seqs)
        seqs = seqs + self.pos_emb(positions)
        seqs = self.emb_dropout(seqs)
        timeline_mask = (log_seqs == 0).unsqueeze(-1)
        seqs = seqs * ~timeline_mask
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool))
        for i in range(len(self.attention_layers)):
            Q = self.attention_layernorms[i](seqs)
            seqs = Q + self.attention_layers[i](Q, seqs, attention_mask)
            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
            seqs = seqs * ~timeline_mask
        return self.last_layernorm(seqs)

    def forward(self, log_seqs, pos_seqs, neg_seqs):
        log_feats = self.log2feats(log_seqs)
        pos_logits = (log_feats * self.item_emb(pos_seqs)).sum(dim=-1)
        neg_logits = (log_feats * self.item_emb(neg_seqs)).sum(dim=-1)
        return pos_logits, neg_logits


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SASRecModel()
    m.train()
    return m


def inputs(step=0):
    seq, pos, neg = sample_batch(step)
    _POS["pos"] = pos
    return (torch.from_numpy(seq), torch.from_numpy(pos), torch.from_numpy(neg)), {}


def loss(output):
    pos_logits, neg_logits = output
    bce = nn.BCEWithLogitsLoss()
    if bug(BUGS) == "bce_no_pad_mask":
        return bce(pos_logits, torch.ones_like(pos_logits)) + bce(neg_logits, torch.zeros_like(neg_logits))
    indices = np.where(_POS["pos"] != 0)
    pos_labels = torch.ones_like(pos_logits)
    neg_labels = torch.zeros_like(neg_logits)
    return bce(pos_logits[indices], pos_labels[indices]) + bce(neg_logits[indices], neg_labels[indices])


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    if bug(BUGS) == "adam_not_nadam":
        return torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.98), eps=1e-8)
    return torch.optim.NAdam(params, lr=1e-3, betas=(0.9, 0.98), eps=1e-8, momentum_decay=4e-3)

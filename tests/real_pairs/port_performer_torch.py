"""Hand-written port, torch side: a small Performer (FAVOR+ linear attention) text classifier (written by "person B").

The same math as port_performer_paddle.py, re-implemented by hand in the style of lucidrains'
performer-pytorch: inputs `input_ids` [2, 16] and `attention_mask` [2, 16] (positional, int64),
vocab 64, width 32, 2 heads of 16, 24 random features, FFN 64 (exact GELU), 2 pre-norm blocks,
final LayerNorm, masked mean pooling, Linear(32, 5): logits [2, 5].

FAVOR+ features, written inline (module-level helper `softmax_kernel`, no module):
  data_dash = (d^-1/4 x) @ proj                   proj [d, m] = [16, 24]
  diag      = |d^-1/4 x|^2 / 2
  queries: ratio * exp(data_dash - diag - amax(data_dash, dim=-1))   (per-token max of the
           projection only, as performer-pytorch)
  keys:    ratio * exp(data_dash - diag - amax(data_dash))           (ONE max over the whole
           key tensor, all samples / heads / tokens)
Both maxima cancel between numerator and denominator, so this equals the paddle side's
stabilisation. performer-pytorch's kernel_epsilon is left out on purpose (it would not cancel).

Torch idioms on this side:
- root `Performer` registers the buffer `projection_matrices` [n_layers, d, m] = [2, 16, 24]
  FIRST (ONE stacked tensor for all layers, [d, m] layout), then `token_emb`, `pos_emb`
  (nn.Embedding(16, 32)), `blocks` (ModuleList of `Block`), `norm`, `to_logits`. Each block is
  called as block(x, mask, projection_matrices[i]).
- `Block`: `attn_norm`, `attn` (`FavorPlusAttention`), `ff_norm`, `ff` = nn.Sequential(
  Linear(32, 64), nn.GELU(), Linear(64, 32)).
- `FavorPlusAttention`: separate `to_q`, `to_k`, `to_v`, `to_out` Linears; the features,
  the key mask (masked_fill on the key features) and the linear attention are inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_key_stab_per_token -> the keys are stabilised like the queries, with a per-token
                              amax(data_dash, dim=-1), which does NOT cancel across keys
  torch_ff_relu            -> the feed-forward Sequential is built with nn.ReLU() instead of
                              nn.GELU()
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB, MAX_LEN, DIM, HEADS, NB_FEATURES, FF_DIM, DEPTH, NUM_CLASSES = 64, 16, 32, 2, 24, 64, 2, 5
DIM_HEAD = DIM // HEADS
BATCH, SEQ, N_PAD = 2, 16, 5
OWN_BUGS = {"torch_key_stab_per_token", "torch_ff_relu"}
OTHER_BUGS = {"paddle_kernel_eps", "paddle_mask_values"}


def softmax_kernel(data, projection_matrix, is_query, per_token_key_stab=False):
    data_normalizer = data.shape[-1] ** -0.25
    ratio = projection_matrix.shape[-1] ** -0.5
    data_dash = torch.einsum("bhnd,dm->bhnm", data_normalizer * data, projection_matrix)
    diag_data = (data**2).sum(dim=-1, keepdim=True) * (data_normalizer**2) / 2.0
    if is_query or per_token_key_stab:
        stab = torch.amax(data_dash, dim=-1, keepdim=True)
    else:
        stab = torch.amax(data_dash)
    return ratio * torch.exp(data_dash - diag_data - stab)


class FavorPlusAttention(nn.Module):
    def __init__(self, per_token_key_stab=False):
        super().__init__()
        self.per_token_key_stab = per_token_key_stab
        self.to_q = nn.Linear(DIM, DIM)
        self.to_k = nn.Linear(DIM, DIM)
        self.to_v = nn.Linear(DIM, DIM)
        self.to_out = nn.Linear(DIM, DIM)

    def forward(self, x, mask, proj):
        b, n, _ = x.shape

        def split_heads(t):
            return t.view(b, n, HEADS, DIM_HEAD).transpose(1, 2)

        q, k, v = split_heads(self.to_q(x)), split_heads(self.to_k(x)), split_heads(self.to_v(x))
        q = softmax_kernel(q, proj, is_query=True)
        k = softmax_kernel(k, proj, is_query=False, per_token_key_stab=self.per_token_key_stab)
        k = k.masked_fill(~mask[:, None, :, None].bool(), 0.0)
        context = torch.einsum("bhnm,bhne->bhme", k, v)
        d_inv = 1.0 / torch.einsum("bhnm,bhm->bhn", q, k.sum(dim=-2))
        out = torch.einsum("bhme,bhnm,bhn->bhne", context, q, d_inv)
        out = out.transpose(1, 2).reshape(b, n, DIM)
        return self.to_out(out)


class Block(nn.Module):
    def __init__(self, per_token_key_stab=False, ff_relu=False):
        super().__init__()
        self.attn_norm = nn.LayerNorm(DIM)
        self.attn = FavorPlusAttention(per_token_key_stab)
        self.ff_norm = nn.LayerNorm(DIM)
        self.ff = nn.Sequential(nn.Linear(DIM, FF_DIM), nn.ReLU() if ff_relu else nn.GELU(), nn.Linear(FF_DIM, DIM))

    def forward(self, x, mask, proj):
        x = self.attn(self.attn_norm(x), mask, proj) + x
        x = self.ff(self.ff_norm(x)) + x
        return x


class Performer(nn.Module):
    def __init__(self, per_token_key_stab=False, ff_relu=False):
        super().__init__()
        self.register_buffer("projection_matrices", torch.randn(DEPTH, DIM_HEAD, NB_FEATURES))
        self.token_emb = nn.Embedding(VOCAB, DIM)
        self.pos_emb = nn.Embedding(MAX_LEN, DIM)
        self.blocks = nn.ModuleList([Block(per_token_key_stab, ff_relu) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM)
        self.to_logits = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, input_ids, attention_mask):
        n = input_ids.shape[1]
        x = self.token_emb(input_ids) + self.pos_emb(torch.arange(n, device=input_ids.device))
        for i, block in enumerate(self.blocks):
            x = block(x, attention_mask, self.projection_matrices[i])
        x = self.norm(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
        return self.to_logits(pooled)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_performer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Performer(per_token_key_stab=bug == "torch_key_stab_per_token", ff_relu=bug == "torch_ff_relu")
    return m.eval()


def _arrays():
    rng = np.random.default_rng(31)
    ids = rng.integers(1, VOCAB, size=(BATCH, SEQ)).astype("int64")
    mask = np.ones((BATCH, SEQ), dtype="int64")
    mask[1, SEQ - N_PAD:] = 0
    ids[mask == 0] = 0
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (torch.from_numpy(ids), torch.from_numpy(mask)), {}


def loss(output):
    # class logits [2, 5]
    return (output**2).mean()

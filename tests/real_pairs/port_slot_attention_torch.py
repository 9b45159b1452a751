"""Hand-written port, torch side: Slot Attention (Locatello et al. 2020) over a tiny CNN feature map (written by "person B").

The same math as port_slot_attention_paddle.py, re-implemented by hand: inputs `image`
[2, 3, 16, 16] and `noise` [2, 4, 16] (positional; the slot-initialisation draw), a 2-conv CNN
with a soft position embedding, LayerNorm + MLP over the 256 flattened positions, 3 Slot
Attention iterations over 4 slots of 16, and a per-slot Linear(16, 8) predictor: [2, 4, 8].

Torch idioms on this side:
- root `SlotAttentionNet`: `encoder` (`Encoder`), `mlp` (nn.Sequential of LayerNorm, Linear,
  ReLU, Linear: the input norm lives INSIDE the Sequential), `slot_attention`
  (`SlotAttention`), `predictor` nn.Linear(16, 8).
- `Encoder`: registers a non-persistent `grid` buffer [1, 256, 4] (the (y, x, 1 - y, 1 - x)
  grid, row index first, already flattened) first, then `convs` (nn.Sequential of Conv2d, ReLU,
  Conv2d, ReLU) and `pos_proj` nn.Linear(4, 16). The feature map is flattened to [B, 256, 16]
  FIRST and the projected grid is added afterwards, inline in the encoder's forward.
- `SlotAttention` registers the slot parameters `slots_mu`, `slots_logsigma` first, then
  `norm_input`, ONE fused `to_kv` nn.Linear(16, 32, bias=False) (rows 0:16 = k, 16:32 = v), and
  `step` (`SlotAttentionStep`), the iteration as a module of its own, CALLED THREE TIMES with
  (slots, k, v).
- `SlotAttentionStep` registers `to_q`, `norm_slots`, the hand-written GRU's `gru_x`
  nn.Linear(16, 48) and `gru_h` nn.Linear(16, 48) (both with bias; gate chunks in z | r | n
  order, "update gate first" as written in the paper), `norm_ff`, `ff` (nn.Sequential of Linear,
  ReLU, Linear). The attention is computed inputs-major: logits [B, 256, 4], softmax over the
  last (slots) dim, + 1e-8, renormalised over dim 1 (inputs), then einsum to [B, 4, 16]. The GRU
  update is inline: z = sigmoid(xz + hz), r = sigmoid(xr + hr), n = tanh(xn + r * hn),
  slots = (1 - z) * n + z * prev, on [B, 4, 16] directly.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gru_blend_flipped -> the hand-written GRU blends z * n + (1 - z) * prev instead of
                             (1 - z) * n + z * prev (the update-gate convention of the paper
                             vs the cuDNN / framework convention mixed up)
  torch_pos_grid_xy       -> the encoder's `grid` buffer is built with
                             torch.meshgrid(..., indexing="xy"), so the (y, x) channels of the
                             grid are the transposed positions
"""
import os

import numpy as np
import torch
from torch import nn

RES, CHANNELS, HIDDEN = 16, 3, 16
N_SLOTS, D_SLOT, FF_HIDDEN, N_ITERS = 4, 16, 32, 3
N_PROPS = 8
EPS = 1e-8
BATCH = 2
OWN_BUGS = {"torch_gru_blend_flipped", "torch_pos_grid_xy"}
OTHER_BUGS = {"paddle_softmax_over_inputs", "paddle_mlp_norm_tf_eps"}


def make_grid(res, indexing="ij"):
    r = torch.linspace(0.0, 1.0, res)
    a, b = torch.meshgrid(r, r, indexing=indexing)
    grid = torch.stack([a, b], dim=-1).reshape(1, res * res, 2)
    return torch.cat([grid, 1.0 - grid], dim=-1)  # [1, H*W, 4]


class Encoder(nn.Module):
    def __init__(self, grid_indexing="ij"):
        super().__init__()
        self.register_buffer("grid", make_grid(RES, grid_indexing), persistent=False)
        self.convs = nn.Sequential(
            nn.Conv2d(CHANNELS, HIDDEN, 5, padding=2),
            nn.ReLU(),
            nn.Conv2d(HIDDEN, HIDDEN, 5, padding=2),
            nn.ReLU(),
        )
        self.pos_proj = nn.Linear(4, HIDDEN)

    def forward(self, image):
        x = self.convs(image).flatten(2).transpose(1, 2)  # [B, H*W, C]
        return x + self.pos_proj(self.grid)


class SlotAttentionStep(nn.Module):
    def __init__(self, dim, hidden, blend_flipped=False):
        super().__init__()
        self.scale = dim**-0.5
        self.blend_flipped = blend_flipped
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.norm_slots = nn.LayerNorm(dim)
        self.gru_x = nn.Linear(dim, 3 * dim)
        self.gru_h = nn.Linear(dim, 3 * dim)
        self.norm_ff = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, dim))

    def forward(self, slots, k, v):
        prev = slots
        q = self.to_q(self.norm_slots(slots))
        logits = torch.einsum("bnd,bkd->bnk", k, q) * self.scale  # [B, N, K]
        attn = logits.softmax(dim=-1) + EPS  # competition between the slots
        attn = attn / attn.sum(dim=1, keepdim=True)
        updates = torch.einsum("bnk,bnd->bkd", attn, v)  # [B, K, D]
        # GRU, by hand
        xz, xr, xn = self.gru_x(updates).chunk(3, dim=-1)
        hz, hr, hn = self.gru_h(prev).chunk(3, dim=-1)
        z = torch.sigmoid(xz + hz)
        r = torch.sigmoid(xr + hr)
        n = torch.tanh(xn + r * hn)
        if self.blend_flipped:
            slots = z * n + (1.0 - z) * prev
        else:
            slots = (1.0 - z) * n + z * prev
        return slots + self.ff(self.norm_ff(slots))


class SlotAttention(nn.Module):
    def __init__(self, num_slots, dim, iters, hidden, blend_flipped=False):
        super().__init__()
        self.num_slots, self.dim, self.iters = num_slots, dim, iters
        self.slots_mu = nn.Parameter(torch.randn(1, 1, dim))
        self.slots_logsigma = nn.Parameter(torch.zeros(1, 1, dim))
        self.norm_input = nn.LayerNorm(dim)
        self.to_kv = nn.Linear(dim, 2 * dim, bias=False)
        self.step = SlotAttentionStep(dim, hidden, blend_flipped)

    def forward(self, inputs, noise):
        inputs = self.norm_input(inputs)
        k, v = self.to_kv(inputs).chunk(2, dim=-1)
        slots = self.slots_mu + self.slots_logsigma.exp() * noise
        for _ in range(self.iters):
            slots = self.step(slots, k, v)
        return slots


class SlotAttentionNet(nn.Module):
    def __init__(self, grid_indexing="ij", blend_flipped=False):
        super().__init__()
        self.encoder = Encoder(grid_indexing)
        self.mlp = nn.Sequential(nn.LayerNorm(HIDDEN), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, D_SLOT))
        self.slot_attention = SlotAttention(N_SLOTS, D_SLOT, N_ITERS, FF_HIDDEN, blend_flipped)
        self.predictor = nn.Linear(D_SLOT, N_PROPS)

    def forward(self, image, noise):
        feats = self.mlp(self.encoder(image))
        slots = self.slot_attention(feats, noise)
        return self.predictor(slots)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_slot_attention torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SlotAttentionNet(
        grid_indexing="xy" if bug == "torch_pos_grid_xy" else "ij",
        blend_flipped=bug == "torch_gru_blend_flipped",
    )
    return m.eval()


def _arrays():
    image = np.random.default_rng(31).standard_normal((BATCH, CHANNELS, RES, RES)).astype("float32")
    noise = np.random.default_rng(32).standard_normal((BATCH, N_SLOTS, D_SLOT)).astype("float32")
    return image, noise


def inputs():
    return tuple(torch.from_numpy(a) for a in _arrays()), {}


def loss(output):
    # per-slot property predictions [2, 4, 8]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny class-conditional Diffusion Transformer (DiT) (written by "person B").

The same math as port_dit_paddle.py, re-implemented by hand in the style of the reference
facebookresearch/DiT models.py. Sizes: latent [2, 4, 8, 8], patch 2, width 32, 2 blocks, 4 heads,
MLP ratio 4 with tanh-GELU, frequency embedding 32, 10 classes + a null row, 8 output channels.

Torch idioms on this side:
- root `DiT` registers `x_embedder` (a `PatchEmbed` holding `proj` nn.Conv2d(4, 32, 2, 2); the
  flatten is inline in PatchEmbed.forward), `t_embedder`, `y_embedder`, then `pos_embed` as a
  FROZEN nn.Parameter [1, 16, 32] (requires_grad=False, as the reference does) filled with a 2-D
  sin-cos table computed in TORCH (float64 then cast), `blocks` (ModuleList), `final_layer`.
- `TimestepEmbedder`: a static `timestep_embedding` (frequencies computed in forward with
  torch.arange, cat([cos, sin])) and `mlp` = nn.Sequential(Linear, SiLU, Linear).
- `LabelEmbedder`: `embedding_table` nn.Embedding(11, 32) (the last row is the null class).
- `DiTBlock`: `norm1`, `attn` = nn.MultiheadAttention(32, 4, batch_first=True) (packed
  in_proj_weight [96, 32], out_proj), `norm2`, `mlp` = nn.Sequential(Linear, GELU(tanh), Linear),
  `adaLN_modulation` = nn.Sequential(SiLU, Linear(32, 192)) registered LAST; SiLU(c) is
  recomputed by every block's own adaLN_modulation.0; the 6 vectors come from .chunk(6, dim=1).
- `FinalLayer`: `norm_final`, `linear`, `adaLN_modulation` = nn.Sequential(SiLU, Linear(32, 64)).
- unpatchify with torch.einsum("nhwpqc->nchpwq").

PADIFF_BUG names planted on this side:
  torch_modulate_no_one          -> modulate() is written x * scale + shift (the "1 +" dropped);
                                    used by both blocks and the final layer
  torch_final_shift_scale_swapped -> the final layer unpacks `scale, shift = ...chunk(2)` instead
                                    of `shift, scale` (the reference's order)
The paddle side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import torch
from torch import nn

IN_CH, INPUT_SIZE, PATCH = 4, 8, 2
HIDDEN, HEADS, DEPTH, MLP_RATIO = 32, 4, 2, 4
FREQ_DIM, NUM_CLASSES = 32, 10
OUT_CH = 2 * IN_CH
GRID = INPUT_SIZE // PATCH
OWN_BUGS = {"torch_modulate_no_one", "torch_final_shift_scale_swapped"}
OTHER_BUGS = {"paddle_tfreq_sin_first", "paddle_attn_merge_no_transpose"}


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def modulate_no_one(x, shift, scale):  # the planted torch_modulate_no_one version
    return x * scale.unsqueeze(1) + shift.unsqueeze(1)


def sincos_2d(dim, grid):
    """2-D sin-cos table [grid * grid, dim]: first half from the row index, second from the column."""
    coords = torch.arange(grid, dtype=torch.float64)
    gy, gx = torch.meshgrid(coords, coords, indexing="ij")  # gy: row, gx: column
    omega = 1.0 / 10000 ** (torch.arange(dim // 4, dtype=torch.float64) / (dim / 4))

    def one(pos):
        out = torch.outer(pos.flatten(), omega)
        return torch.cat([out.sin(), out.cos()], dim=1)

    # the reference meshgrids (w, h) and embeds grid[0] (= column index) first
    return torch.cat([one(gx), one(gy)], dim=1)


class PatchEmbed(nn.Module):
    def __init__(self, patch, in_ch, dim):
        super().__init__()
        self.proj = nn.Conv2d(in_ch, dim, patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class TimestepEmbedder(nn.Module):
    def __init__(self, hidden, freq_dim=FREQ_DIM):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(freq_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.freq_dim = freq_dim

    @staticmethod
    def timestep_embedding(t, dim, max_period=10000):
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(self, t):
        return self.mlp(self.timestep_embedding(t, self.freq_dim))


class LabelEmbedder(nn.Module):
    def __init__(self, num_classes, hidden):
        super().__init__()
        self.embedding_table = nn.Embedding(num_classes + 1, hidden)  # + the null class
        self.num_classes = num_classes

    def forward(self, labels):
        return self.embedding_table(labels)


class DiTBlock(nn.Module):
    def __init__(self, hidden, heads, mlp_ratio, modulate_fn=modulate):
        super().__init__()
        self.modulate = modulate_fn
        self.norm1 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(hidden, hidden * mlp_ratio), nn.GELU(approximate="tanh"), nn.Linear(hidden * mlp_ratio, hidden)
        )
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 6 * hidden))

    def forward(self, x, c):
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=1)
        h = self.modulate(self.norm1(x), shift_msa, scale_msa)
        x = x + gate_msa.unsqueeze(1) * self.attn(h, h, h, need_weights=False)[0]
        x = x + gate_mlp.unsqueeze(1) * self.mlp(self.modulate(self.norm2(x), shift_mlp, scale_mlp))
        return x


class FinalLayer(nn.Module):
    def __init__(self, hidden, patch, out_ch, swap=False, modulate_fn=modulate):
        super().__init__()
        self.swap = swap
        self.modulate = modulate_fn
        self.norm_final = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.linear = nn.Linear(hidden, patch * patch * out_ch)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 2 * hidden))

    def forward(self, x, c):
        if self.swap:
            scale, shift = self.adaLN_modulation(c).chunk(2, dim=1)
        else:
            shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
        return self.linear(self.modulate(self.norm_final(x), shift, scale))


class DiT(nn.Module):
    def __init__(self, final_swap=False, no_one=False):
        super().__init__()
        mod = modulate_no_one if no_one else modulate
        self.out_channels = OUT_CH
        self.patch_size = PATCH
        self.x_embedder = PatchEmbed(PATCH, IN_CH, HIDDEN)
        self.t_embedder = TimestepEmbedder(HIDDEN)
        self.y_embedder = LabelEmbedder(NUM_CLASSES, HIDDEN)
        self.pos_embed = nn.Parameter(torch.zeros(1, GRID * GRID, HIDDEN), requires_grad=False)
        self.blocks = nn.ModuleList([DiTBlock(HIDDEN, HEADS, MLP_RATIO, mod) for _ in range(DEPTH)])
        self.final_layer = FinalLayer(HIDDEN, PATCH, OUT_CH, swap=final_swap, modulate_fn=mod)
        with torch.no_grad():
            self.pos_embed.copy_(sincos_2d(HIDDEN, GRID).float().unsqueeze(0))

    def unpatchify(self, x):
        c, p = self.out_channels, self.patch_size
        h = w = int(x.shape[1] ** 0.5)
        x = x.reshape(x.shape[0], h, w, p, p, c)
        x = torch.einsum("nhwpqc->nchpwq", x)
        return x.reshape(x.shape[0], c, h * p, w * p)

    def forward(self, x, t, y):
        x = self.x_embedder(x) + self.pos_embed
        c = self.t_embedder(t) + self.y_embedder(y)
        for block in self.blocks:
            x = block(x, c)
        x = self.final_layer(x, c)
        return self.unpatchify(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DiT(final_swap=bug == "torch_final_shift_scale_swapped", no_one=bug == "torch_modulate_no_one")
    return m.eval()


def _inputs_np():
    rng = np.random.default_rng(45)
    x = rng.standard_normal((2, IN_CH, INPUT_SIZE, INPUT_SIZE)).astype("float32")
    t = np.array([37, 812], dtype="int64")
    y = np.array([3, NUM_CLASSES], dtype="int64")
    return x, t, y


def inputs():
    x, t, y = _inputs_np()
    return (torch.from_numpy(x), torch.from_numpy(t), torch.from_numpy(y)), {}


def loss(output):
    # predicted noise and sigma [2, 8, 8, 8]
    return (output**2).mean()

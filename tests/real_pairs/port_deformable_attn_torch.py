"""Hand-written port, torch side: a tiny Deformable-DETR encoder over two feature levels (written by "person B").

The same math as port_deformable_attn_paddle.py, re-implemented by hand (HF-transformers-like
naming, but its own code): inputs feat0 [2, 16, 6, 8] and feat1 [2, 24, 3, 4] (positional),
width 32, 4 heads of 8, 2 levels, 3 points, FFN 64 with exact GELU, 2 post-norm encoder
blocks; output the encoder memory [2, 60, 32].

Torch idioms on this side:
- root `DeformableEncoderStack` registers `level_embed` (nn.Parameter [2, 32]) FIRST, then
  `input_convs` (ModuleList of 1x1 Conv2d) and `input_norms` (ModuleList of GroupNorm(8, 32)) as
  two separate lists, `pos_encoder` (SinePositionEmbedding, called once per level with a long
  pixel mask, returning CHANNEL-FIRST [B, 32, H, W]) and `layers` (ModuleList of EncoderBlock).
  The reference points (pixel centres, no valid ratios: nothing is padded) are computed in a
  static method of the root and expanded over the levels.
- `EncoderBlock` registers `ffn` (nn.Sequential(Linear, nn.GELU(), Linear)) and `ffn_norm`
  BEFORE `attn` and `attn_norm`; the position embedding is added INSIDE the attention (the
  block passes it along).
- `MultiScaleDeformableAttention` registers `value_proj`, then ONE packed `sampling_proj`
  Linear(32, 72): outputs 0:48 are the offsets ordered [heads, POINTS, LEVELS, xy], outputs
  48:72 the attention logits ordered [heads, POINTS, LEVELS]; then `value_split`
  (ValueLevelSplit, a module: the projected value [B, S, 4, 8] -> one [B*4, 8, H_l, W_l] map per
  level, returned as a tuple) and `out_proj`. Sampling calls F.grid_sample with
  align_corners=TRUE, so the [0, 1] locations (pixel centres at (i + 0.5) / size) are converted
  by `_align_corners_grid`: pixel = loc * size - 0.5, grid = pixel / (size - 1) * 2 - 1.
  The softmax runs over the 6 (point, level) logits of each head.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_grid_no_rescale    -> `_align_corners_grid` returns the plain 2 * loc - 1 (the
                              align_corners=False formula) although grid_sample is called with
                              align_corners=True: every sample moves towards the map centre
  torch_split_no_transpose -> ValueLevelSplit reshapes the flattened [B, H*W, nH*c] level value
                              straight to [B*nH, c, H, W] without first transposing it to
                              [B, nH*c, H*W]
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HIDDEN, HEADS, LEVELS, POINTS, FFN_DIM, NUM_BLOCKS = 32, 4, 2, 3, 64, 2
IN_CHANNELS = (16, 24)
FEAT_SHAPES = ((6, 8), (3, 4))
BATCH = 2
OWN_BUGS = {"torch_grid_no_rescale", "torch_split_no_transpose"}
OTHER_BUGS = {"paddle_pos_no_half_offset", "paddle_ffn_gelu_tanh"}


def _align_corners_grid(loc, height, width, rescale=True):
    """[0, 1] sampling locations (x, y), pixel centres at (i + 0.5) / size -> a grid for
    F.grid_sample(..., align_corners=True), where -1 / +1 are the CENTRES of the corner pixels."""
    if not rescale:
        return 2 * loc - 1
    size = loc.new_tensor([width, height])
    pixel = loc * size - 0.5
    return pixel / (size - 1) * 2 - 1


class SinePositionEmbedding(nn.Module):
    def __init__(self, embedding_dim=16, temperature=10000, scale=2 * math.pi):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.temperature = temperature
        self.scale = scale

    def forward(self, pixel_mask):
        # pixel_mask [B, H, W] long, 1 = valid
        y_embed = pixel_mask.cumsum(1, dtype=torch.float32)
        x_embed = pixel_mask.cumsum(2, dtype=torch.float32)
        eps = 1e-6
        y_embed = (y_embed - 0.5) / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = (x_embed - 0.5) / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.embedding_dim, dtype=torch.float32, device=pixel_mask.device)
        dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / self.embedding_dim)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)  # [B, C, H, W]


class ValueLevelSplit(nn.Module):
    def __init__(self, num_heads, transpose=True):
        super().__init__()
        self.num_heads = num_heads
        self.transpose = transpose

    def forward(self, value, spatial_shapes):
        # value [B, S, nH, c], spatial_shapes long [L, 2] (h, w) -> tuple of [B*nH, c, H_l, W_l]
        batch, _, num_heads, head_dim = value.shape
        shapes = [(int(h), int(w)) for h, w in spatial_shapes.tolist()]
        chunks = value.split([h * w for h, w in shapes], dim=1)
        maps = []
        for chunk, (h, w) in zip(chunks, shapes):
            flat = chunk.flatten(2)  # [B, H*W, nH*c]
            if self.transpose:
                flat = flat.transpose(1, 2)  # [B, nH*c, H*W]
            maps.append(flat.reshape(batch * num_heads, head_dim, h, w))
        return tuple(maps)


class MultiScaleDeformableAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, n_levels, n_points, split_transpose=True, grid_rescale=True):
        super().__init__()
        self.grid_rescale = grid_rescale
        self.num_heads, self.n_levels, self.n_points = num_heads, n_levels, n_points
        self.head_dim = embed_dim // num_heads
        self.value_proj = nn.Linear(embed_dim, embed_dim)
        self.sampling_proj = nn.Linear(embed_dim, num_heads * n_points * n_levels * 3)
        self.value_split = ValueLevelSplit(num_heads, transpose=split_transpose)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_states, position_embeddings, reference_points, spatial_shapes):
        # hidden_states / position_embeddings [B, Q, C]; reference_points [B, Q, L, 2] (x, y)
        query = hidden_states + position_embeddings
        batch, num_queries, _ = query.shape
        nh, npt, nlv = self.num_heads, self.n_points, self.n_levels
        value = self.value_proj(hidden_states).view(batch, -1, nh, self.head_dim)
        packed = self.sampling_proj(query)
        n_off = nh * npt * nlv * 2
        offsets = packed[..., :n_off].view(batch, num_queries, nh, npt, nlv, 2)
        weights = packed[..., n_off:].view(batch, num_queries, nh, npt * nlv).softmax(-1)
        weights = weights.view(batch, num_queries, nh, npt, nlv)
        normalizer = torch.stack([spatial_shapes[..., 1], spatial_shapes[..., 0]], -1).to(query.dtype)  # (w, h)
        locations = reference_points[:, :, None, None, :, :] + offsets / normalizer[None, None, None, None, :, :]
        value_maps = self.value_split(value, spatial_shapes)
        sampled = []
        for lvl, (h, w) in enumerate(spatial_shapes.tolist()):
            grid = _align_corners_grid(locations[:, :, :, :, lvl], h, w, self.grid_rescale)  # [B, Q, nH, P, 2]
            grid = grid.permute(0, 2, 1, 3, 4).reshape(batch * nh, num_queries, npt, 2)
            sampled.append(F.grid_sample(value_maps[lvl], grid, mode="bilinear", padding_mode="zeros",
                                         align_corners=True))  # [B*nH, c, Q, P]
        sampled = torch.stack(sampled, dim=-1)  # [B*nH, c, Q, P, L]
        weights = weights.permute(0, 2, 1, 3, 4).reshape(batch * nh, 1, num_queries, npt, nlv)
        out = (sampled * weights).sum(dim=(-1, -2))  # [B*nH, c, Q]
        out = out.view(batch, nh * self.head_dim, num_queries).transpose(1, 2)
        return self.out_proj(out)


class EncoderBlock(nn.Module):
    def __init__(self, split_transpose=True, grid_rescale=True):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN_DIM), nn.GELU(), nn.Linear(FFN_DIM, HIDDEN))
        self.ffn_norm = nn.LayerNorm(HIDDEN)
        self.attn = MultiScaleDeformableAttention(HIDDEN, HEADS, LEVELS, POINTS, split_transpose, grid_rescale)
        self.attn_norm = nn.LayerNorm(HIDDEN)

    def forward(self, x, pos, reference_points, spatial_shapes):
        x = self.attn_norm(x + self.attn(x, pos, reference_points, spatial_shapes))
        return self.ffn_norm(x + self.ffn(x))


class DeformableEncoderStack(nn.Module):
    def __init__(self, split_transpose=True, grid_rescale=True):
        super().__init__()
        self.level_embed = nn.Parameter(torch.randn(LEVELS, HIDDEN))
        self.input_convs = nn.ModuleList([nn.Conv2d(c, HIDDEN, kernel_size=1) for c in IN_CHANNELS])
        self.input_norms = nn.ModuleList([nn.GroupNorm(8, HIDDEN) for _ in IN_CHANNELS])
        self.pos_encoder = SinePositionEmbedding(HIDDEN // 2)
        self.layers = nn.ModuleList([EncoderBlock(split_transpose, grid_rescale) for _ in range(NUM_BLOCKS)])

    @staticmethod
    def _reference_points(shapes, batch):
        refs = []
        for h, w in shapes:
            ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32) + 0.5,
                                    torch.arange(w, dtype=torch.float32) + 0.5, indexing="ij")
            refs.append(torch.stack((xs.reshape(-1) / w, ys.reshape(-1) / h), -1))
        ref = torch.cat(refs, 0)  # [S, 2]
        return ref[None, :, None, :].expand(batch, -1, len(shapes), -1)  # [B, S, L, 2]

    def forward(self, feat0, feat1):
        tokens, pos_list, shapes = [], [], []
        for lvl, feat in enumerate((feat0, feat1)):
            x = self.input_norms[lvl](self.input_convs[lvl](feat))
            batch, _, h, w = x.shape
            pixel_mask = torch.ones(batch, h, w, dtype=torch.long, device=x.device)
            pos = self.pos_encoder(pixel_mask).flatten(2).transpose(1, 2)  # [B, H*W, C]
            pos_list.append(pos + self.level_embed[lvl].view(1, 1, -1))
            tokens.append(x.flatten(2).transpose(1, 2))
            shapes.append((h, w))
        spatial_shapes = torch.as_tensor(shapes, dtype=torch.long, device=feat0.device)
        reference_points = self._reference_points(shapes, batch)
        hidden = torch.cat(tokens, 1)
        pos = torch.cat(pos_list, 1)
        for block in self.layers:
            hidden = block(hidden, pos, reference_points, spatial_shapes)
        return hidden


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deformable_attn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DeformableEncoderStack(split_transpose=bug != "torch_split_no_transpose",
                               grid_rescale=bug != "torch_grid_no_rescale")
    return m.eval()


def _feats():
    rng = np.random.default_rng(11)
    return [rng.standard_normal((BATCH, c, h, w)).astype("float32") for c, (h, w) in zip(IN_CHANNELS, FEAT_SHAPES)]


def inputs():
    return tuple(torch.from_numpy(a) for a in _feats()), {}


def loss(output):
    # encoder memory [2, 60, 32]
    return (output**2).mean()

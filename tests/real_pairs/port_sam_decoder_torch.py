"""Hand-written port, torch side: a tiny Segment-Anything mask decoder (written by "person B").

The same math as port_sam_decoder_paddle.py, re-implemented by hand: inputs image_embeddings
[2, 32, 8, 8], image_pe [1, 32, 8, 8], sparse_prompt_embeddings [2, 3, 32],
dense_prompt_embeddings [2, 32, 8, 8] (positional); output (masks [2, 3, 32, 32],
iou_pred [2, 3]) in multimask mode. Width 32, two-way transformer of depth 2 with 4 heads,
MLP 64, cross attentions downsampled to 16 channels, 4 mask tokens + 1 IoU token.

Torch idioms on this side:
- root `SAMMaskDecoder` registers `output_tokens` = ONE nn.Embedding(5, 32) first (row 0: the IoU
  token, rows 1..4: the mask tokens; only its .weight is read), then `iou_head` (nn.Sequential of
  Linear, ReLU, Linear, ReLU, Linear), `hypernet` (`BatchedHyperMLP`), `upscaler`
  (`MaskUpscaler`) and `transformer` last.
- `BatchedHyperMLP`: the 4 per-token 3-layer MLPs as ONE batched weight per layer, `w1` [4, 32,
  32], `b1` [4, 32], `w2` [4, 32, 32], `b2` [4, 32], `w3` [4, 4, 32], `b3` [4, 4] (weights
  [token, out, in]); one call with all mask tokens, einsum per layer, F.relu between.
- `MaskUpscaler`: `deconv1` ConvTranspose2d(32, 8, 2, 2), `norm` (`LayerNorm2d`, hand-written
  channel-first: mean / biased variance over dim 1, own `weight` / `bias`), `deconv2`
  ConvTranspose2d(8, 4, 2, 2); both GELUs are F.gelu inline.
- `TwoWayTransformer` takes the image in NCHW and flattens it itself (SAM's original);
  `blocks` (ModuleList of `TwoWayBlock`), `final_attn`, `final_norm`.
- `TwoWayBlock` registers `self_attn`, `norm1`, `cross_t2i`, `norm2`, `mlp` (`MLPBlock`: `lin1`,
  `act` nn.ReLU, `lin2`), `norm3`, `cross_i2t`, `norm4`.
- `PackedAttention`: ONE `in_proj_weight` [3 * d, 32] / `in_proj_bias` [3 * d] (q | k | v rows,
  nn.MultiheadAttention style, applied with F.linear on slices) and `out_proj`; the attention
  itself is F.scaled_dot_product_attention (its default scale 1/sqrt(head dim)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_final_attn_no_pe  -> the transformer's final token->image attention takes the image
                             tokens WITHOUT the image positional encoding as its keys
  torch_ln2d_unbiased_var -> LayerNorm2d computes the variance with x.var(dim=1) (unbiased,
                             divides by C - 1 = 7) instead of the biased mean of squares
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DIM, NUM_HEADS, MLP_HIDDEN, NUM_BLOCKS, ATTN_DOWNSAMPLE = 32, 4, 64, 2, 2
NUM_MASKS = 4
IOU_HIDDEN_DIM = 32
GRID, N_SPARSE, BATCH = 8, 3, 2
OWN_BUGS = {"torch_final_attn_no_pe", "torch_ln2d_unbiased_var"}
OTHER_BUGS = {"paddle_cross_attn_scale", "paddle_gelu_tanh"}


class PackedAttention(nn.Module):
    def __init__(self, dim, heads, downsample=1):
        super().__init__()
        self.inner = dim // downsample
        self.heads = heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * self.inner, dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * self.inner))
        self.out_proj = nn.Linear(self.inner, dim)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def _heads(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.heads, self.inner // self.heads).transpose(1, 2)

    def forward(self, q, k, v):
        w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)
        q = self._heads(F.linear(q, w_q, b_q))
        k = self._heads(F.linear(k, w_k, b_k))
        v = self._heads(F.linear(v, w_v, b_v))
        out = F.scaled_dot_product_attention(q, k, v)
        b, h, n, d = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, n, h * d))


class MLPBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.lin1 = nn.Linear(dim, hidden)
        self.act = nn.ReLU()
        self.lin2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.lin2(self.act(self.lin1(x)))


class TwoWayBlock(nn.Module):
    def __init__(self, dim, heads, mlp_hidden, downsample, first):
        super().__init__()
        self.first = first
        self.self_attn = PackedAttention(dim, heads)
        self.norm1 = nn.LayerNorm(dim)
        self.cross_t2i = PackedAttention(dim, heads, downsample)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MLPBlock(dim, mlp_hidden)
        self.norm3 = nn.LayerNorm(dim)
        self.cross_i2t = PackedAttention(dim, heads, downsample)
        self.norm4 = nn.LayerNorm(dim)

    def forward(self, tokens, image, token_pe, image_pe):
        if self.first:
            tokens = self.self_attn(tokens, tokens, tokens)
        else:
            t = tokens + token_pe
            tokens = tokens + self.self_attn(t, t, tokens)
        tokens = self.norm1(tokens)

        tokens = tokens + self.cross_t2i(tokens + token_pe, image + image_pe, image)
        tokens = self.norm2(tokens)

        tokens = self.norm3(tokens + self.mlp(tokens))

        image = image + self.cross_i2t(image + image_pe, tokens + token_pe, tokens)
        image = self.norm4(image)
        return tokens, image


class TwoWayTransformer(nn.Module):
    def __init__(self, final_no_pe=False):
        super().__init__()
        self.final_no_pe = final_no_pe
        self.blocks = nn.ModuleList(
            [TwoWayBlock(DIM, NUM_HEADS, MLP_HIDDEN, ATTN_DOWNSAMPLE, i == 0) for i in range(NUM_BLOCKS)])
        self.final_attn = PackedAttention(DIM, NUM_HEADS, ATTN_DOWNSAMPLE)
        self.final_norm = nn.LayerNorm(DIM)

    def forward(self, image_embedding, image_pe, point_embedding):
        # image_embedding, image_pe: [B, C, H, W] -> [B, HW, C]
        image = image_embedding.flatten(2).permute(0, 2, 1)
        image_pe = image_pe.flatten(2).permute(0, 2, 1)
        tokens = point_embedding
        for blk in self.blocks:
            tokens, image = blk(tokens, image, point_embedding, image_pe)
        keys = image if self.final_no_pe else image + image_pe
        tokens = self.final_norm(tokens + self.final_attn(tokens + point_embedding, keys, image))
        return tokens, image


class LayerNorm2d(nn.Module):
    def __init__(self, num_channels, eps=1e-6, unbiased=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.eps = eps
        self.unbiased = unbiased

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        if self.unbiased:
            s = x.var(1, keepdim=True)
        else:
            s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class MaskUpscaler(nn.Module):
    def __init__(self, dim, unbiased=False):
        super().__init__()
        self.deconv1 = nn.ConvTranspose2d(dim, dim // 4, kernel_size=2, stride=2)
        self.norm = LayerNorm2d(dim // 4, unbiased=unbiased)
        self.deconv2 = nn.ConvTranspose2d(dim // 4, dim // 8, kernel_size=2, stride=2)

    def forward(self, x):
        x = F.gelu(self.norm(self.deconv1(x)))
        return F.gelu(self.deconv2(x))


class BatchedHyperMLP(nn.Module):
    """num_tokens independent 3-layer MLPs, one per mask token, as batched weights."""

    def __init__(self, num_tokens, dim, out_dim):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(num_tokens, dim, dim))
        self.b1 = nn.Parameter(torch.zeros(num_tokens, dim))
        self.w2 = nn.Parameter(torch.empty(num_tokens, dim, dim))
        self.b2 = nn.Parameter(torch.zeros(num_tokens, dim))
        self.w3 = nn.Parameter(torch.empty(num_tokens, out_dim, dim))
        self.b3 = nn.Parameter(torch.zeros(num_tokens, out_dim))
        for w in (self.w1, self.w2, self.w3):
            nn.init.kaiming_uniform_(w, a=math.sqrt(5))

    def forward(self, x):  # x: [B, T, dim]
        x = F.relu(torch.einsum("bti,toi->bto", x, self.w1) + self.b1)
        x = F.relu(torch.einsum("bti,toi->bto", x, self.w2) + self.b2)
        return torch.einsum("bti,toi->bto", x, self.w3) + self.b3


class SAMMaskDecoder(nn.Module):
    def __init__(self, final_no_pe=False, unbiased=False):
        super().__init__()
        self.output_tokens = nn.Embedding(1 + NUM_MASKS, DIM)
        self.iou_head = nn.Sequential(
            nn.Linear(DIM, IOU_HIDDEN_DIM), nn.ReLU(),
            nn.Linear(IOU_HIDDEN_DIM, IOU_HIDDEN_DIM), nn.ReLU(),
            nn.Linear(IOU_HIDDEN_DIM, NUM_MASKS),
        )
        self.hypernet = BatchedHyperMLP(NUM_MASKS, DIM, DIM // 8)
        self.upscaler = MaskUpscaler(DIM, unbiased)
        self.transformer = TwoWayTransformer(final_no_pe)

    def forward(self, image_embeddings, image_pe, sparse_prompt_embeddings, dense_prompt_embeddings):
        bs = sparse_prompt_embeddings.size(0)
        out_tokens = self.output_tokens.weight.unsqueeze(0).expand(bs, -1, -1)
        tokens = torch.cat((out_tokens, sparse_prompt_embeddings), dim=1)

        src = image_embeddings + dense_prompt_embeddings
        pos_src = torch.repeat_interleave(image_pe, bs, dim=0)
        b, c, h, w = src.shape
        hs, src = self.transformer(src, pos_src, tokens)

        iou_token_out = hs[:, 0]
        mask_tokens_out = hs[:, 1:1 + NUM_MASKS]
        src = src.transpose(1, 2).reshape(b, c, h, w)
        upscaled = self.upscaler(src)
        hyper_in = self.hypernet(mask_tokens_out)  # [B, 4, 4]
        b, c, h, w = upscaled.shape
        masks = (hyper_in @ upscaled.view(b, c, h * w)).view(b, -1, h, w)
        iou_pred = self.iou_head(iou_token_out)
        # multimask output: drop the single-mask token
        return masks[:, 1:], iou_pred[:, 1:]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_sam_decoder torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SAMMaskDecoder(final_no_pe=bug == "torch_final_attn_no_pe", unbiased=bug == "torch_ln2d_unbiased_var")
    return m.eval()


def _arrays():
    rng = np.random.default_rng(31)
    image = rng.standard_normal((BATCH, DIM, GRID, GRID)).astype("float32")
    gauss = rng.standard_normal((2, DIM // 2))
    coords = (np.arange(GRID) + 0.5) / GRID
    yy, xx = np.meshgrid(coords, coords, indexing="ij")
    grid = np.stack([xx, yy], axis=-1) * 2 - 1
    proj = 2 * np.pi * grid @ gauss
    pe = np.concatenate([np.sin(proj), np.cos(proj)], axis=-1).transpose(2, 0, 1)[None].astype("float32")
    sparse = rng.standard_normal((BATCH, N_SPARSE, DIM)).astype("float32")
    dense = (0.3 * rng.standard_normal((BATCH, DIM, GRID, GRID))).astype("float32")
    return image, pe, sparse, dense


def inputs():
    return tuple(torch.from_numpy(a) for a in _arrays()), {}


def loss(output):
    masks, iou_pred = output
    return (masks**2).mean() + (iou_pred**2).mean()

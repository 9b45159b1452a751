"""Hand-written port, torch side: a tiny DETR-style detector (written by "person B").

The same math as port_detr_paddle.py, re-implemented by hand. Sizes: 32x32 RGB, batch 2; a
2-conv backbone (3 -> 16 -> 32, stride 4 overall -> 8x8), 1x1 projection to d_model 32, a fixed
2-D sine position embedding, 1 encoder layer + 2 decoder layers (4 heads of 8, FFN 64, ReLU,
post-norm, LayerNorm eps 1e-5), 6 object queries, 4 + 1 classes. Eval mode, fp32.

Output: ONE tensor [2, 6, 9] = concat([class logits (5), sigmoid boxes (4)], -1).

Torch idioms on this side:
- `body` = nn.Sequential(Conv2d, BatchNorm2d, ReLU, Conv2d, BatchNorm2d, ReLU); `proj`
  nn.Conv2d(32, 32, 1).
- the sine position embedding is a plain function (`sine_position_embedding`) called inline in
  the root forward; it returns [HW, 32] (no batch dim) with the same DETR formula (normalized
  cumsum * 2 pi, temperature 10000, sin / cos interleaved, y features first).
- `query_embed` is a raw nn.Parameter [6, 32] (expanded over the batch).
- `encoder_layers` (ModuleList of 1 `DetrEncoderLayer`: `attn`, `ffn` = nn.Sequential(Linear,
  ReLU, Linear), `norm1`, `norm2`), `decoder_layers` (ModuleList of 2 `DetrDecoderLayer`:
  `self_attn`, `cross_attn`, `ffn`, `ln1`, `ln2`, `ln3`), `decoder_norm`. The attentions are
  torch.nn.MultiheadAttention(batch_first=True): ONE packed in_proj_weight [96, 32] (rows
  q | k | v) and in_proj_bias; their `out_proj` is never called as a module. Positions are
  added the DETR way: to queries and keys, never to values.
- heads: `box_head` = nn.Sequential(Linear, ReLU, Linear, ReLU, Linear, Sigmoid) registered
  BEFORE `cls_head` Linear(32, 5).

Planted bugs (PADIFF_BUG), see port_detr_truth.json; the paddle side's bug name is accepted and
ignored, any other name raises:
  box_no_sigmoid  -> the box head is built without its final nn.Sigmoid (raw box logits)
  backbone_bn_eps -> both backbone BatchNorms are nn.BatchNorm2d(c, eps=1e-3) (an eps copied
                     from a TF-converted backbone config) instead of the default 1e-5
"""
import math
import os

import numpy as np
import torch
from torch import nn

BATCH, IN_CHANS, IMG = 2, 3, 32
D_MODEL, HEADS, FFN, ENC_LAYERS, DEC_LAYERS, QUERIES, CLASSES = 32, 4, 64, 1, 2, 6, 4
OWN_BUGS = {"box_no_sigmoid", "backbone_bn_eps"}
OTHER_BUGS = {"paddle_pos_on_values"}


def sine_position_embedding(h, w, dim=D_MODEL, temperature=10000.0, device=None):
    """DETR's normalized sine embedding for an unmasked h x w map -> [h * w, dim]."""
    npf = dim // 2
    scale, eps = 2 * math.pi, 1e-6
    y = torch.arange(1, h + 1, dtype=torch.float32, device=device)
    x = torch.arange(1, w + 1, dtype=torch.float32, device=device)
    y = y / (h + eps) * scale
    x = x / (w + eps) * scale
    dim_t = torch.arange(npf, dtype=torch.float32, device=device)
    dim_t = temperature ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / npf)
    py = y[:, None] / dim_t  # [h, npf]
    px = x[:, None] / dim_t  # [w, npf]
    py = torch.stack((py[:, 0::2].sin(), py[:, 1::2].cos()), dim=-1).flatten(1)
    px = torch.stack((px[:, 0::2].sin(), px[:, 1::2].cos()), dim=-1).flatten(1)
    pos = torch.cat([py[:, None, :].expand(h, w, npf), px[None, :, :].expand(h, w, npf)], dim=-1)
    return pos.reshape(h * w, dim)


class DetrEncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(D_MODEL, FFN), nn.ReLU(), nn.Linear(FFN, D_MODEL))
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)

    def forward(self, x, pos):
        qk = x + pos
        x = self.norm1(x + self.attn(qk, qk, x, need_weights=False)[0])
        return self.norm2(x + self.ffn(x))


class DetrDecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(D_MODEL, FFN), nn.ReLU(), nn.Linear(FFN, D_MODEL))
        self.ln1 = nn.LayerNorm(D_MODEL)
        self.ln2 = nn.LayerNorm(D_MODEL)
        self.ln3 = nn.LayerNorm(D_MODEL)

    def forward(self, tgt, memory, pos, query_pos):
        qk = tgt + query_pos
        tgt = self.ln1(tgt + self.self_attn(qk, qk, tgt, need_weights=False)[0])
        attn = self.cross_attn(tgt + query_pos, memory + pos, memory, need_weights=False)[0]
        tgt = self.ln2(tgt + attn)
        return self.ln3(tgt + self.ffn(tgt))


class DetrTiny(nn.Module):
    def __init__(self, bn_eps=1e-5, box_sigmoid=True):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(IN_CHANS, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16, eps=bn_eps), nn.ReLU(),
            nn.Conv2d(16, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32, eps=bn_eps), nn.ReLU())
        self.proj = nn.Conv2d(32, D_MODEL, 1)
        self.query_embed = nn.Parameter(torch.randn(QUERIES, D_MODEL))
        self.encoder_layers = nn.ModuleList([DetrEncoderLayer() for _ in range(ENC_LAYERS)])
        self.decoder_layers = nn.ModuleList([DetrDecoderLayer() for _ in range(DEC_LAYERS)])
        self.decoder_norm = nn.LayerNorm(D_MODEL)
        box = [nn.Linear(D_MODEL, D_MODEL), nn.ReLU(), nn.Linear(D_MODEL, D_MODEL), nn.ReLU(), nn.Linear(D_MODEL, 4)]
        if box_sigmoid:
            box.append(nn.Sigmoid())
        self.box_head = nn.Sequential(*box)
        self.cls_head = nn.Linear(D_MODEL, CLASSES + 1)

    def forward(self, images):
        feat = self.body(images)
        b, _c, h, w = feat.shape
        src = self.proj(feat).flatten(2).transpose(1, 2)  # [B, HW, C]
        pos = sine_position_embedding(h, w, device=images.device).unsqueeze(0)  # [1, HW, C]
        memory = src
        for layer in self.encoder_layers:
            memory = layer(memory, pos)
        query_pos = self.query_embed.unsqueeze(0).expand(b, -1, -1)
        tgt = torch.zeros_like(query_pos)
        for layer in self.decoder_layers:
            tgt = layer(tgt, memory, pos, query_pos)
        hs = self.decoder_norm(tgt)
        return torch.cat([self.cls_head(hs), self.box_head(hs)], dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_detr torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DetrTiny(bn_eps=1e-3 if bug == "backbone_bn_eps" else 1e-5, box_sigmoid=bug != "box_no_sigmoid")
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(17)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # [B, 6, 9]: 5 class logits then 4 sigmoid box coordinates per query
    return (output**2).mean()

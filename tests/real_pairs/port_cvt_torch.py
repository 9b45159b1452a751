"""Hand-written port, torch side: a tiny CvT (Convolutional vision Transformer) classifier (written by "person B").

The same math as port_cvt_paddle.py, re-implemented by hand in the style of the HF CvT code:
input `pixel_values` [2, 3, 32, 32] (positional), two stages (16 channels / 1 head / 1 layer on
an 8x8 map, then 32 channels / 2 heads / 2 layers on a 4x4 map with a class token), depthwise
conv + BN projections for q (stride 1) and k / v (stride 2), LayerNorm of the final class token
and a linear classifier: logits [2, 10].

Torch idioms on this side:
- root `ConvolutionalVisionTransformer`: `encoder` (ModuleList of `CvtStage`), `final_norm`
  (LayerNorm(32)), `classifier` (Linear(32, 10)).
- `CvtStage` registers `cls_token` FIRST (last stage only), then `embedding`, then `layers`.
  It takes and returns NCHW maps: (map [B, C, H, W], class token [B, 1, C] or None). The
  NCHW -> token flatten (flatten(2).transpose(1, 2)) and the split / reshape back are inline in
  the stage.
- `CvtConvEmbedding`: `projection` Conv2d, `norm` LayerNorm applied in channels-last
  (permute(0, 2, 3, 1) -> norm -> permute(0, 3, 1, 2)); it returns an NCHW map.
- `CvtLayer`: `norm_before`, `attention`, `norm_after`, `mlp` (nn.Sequential(Linear, GELU,
  Linear)).
- `CvtAttention`: registers `dw_q`, `bn_q`, `dw_k`, `bn_k`, `dw_v`, `bn_v` (depthwise Conv2d /
  BatchNorm2d modules called INLINE, no Sequential) and ONE packed `mha` =
  nn.MultiheadAttention(C, heads, batch_first=True): q / k / v projections live in its
  `in_proj_weight` [3C, C] / `in_proj_bias` [3C], the output projection in `mha.out_proj`
  (used by the functional kernel, never called as a module). The token -> NCHW map conversion is
  done once per call and shared by the three projections.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_tokens_view -> CvtStage flattens the embedding's NCHW map to tokens with
                       x.reshape(B, H*W, C) (a plain view of NCHW memory) instead of
                       flatten(2).transpose(1, 2)
  torch_gelu_tanh   -> CvtLayer builds its MLP with nn.GELU(approximate="tanh") (copied from a
                       GPT-2 port) instead of the exact erf GELU, in every layer
"""
import os

import numpy as np
import torch
from torch import nn

NUM_CHANNELS, NUM_LABELS = 3, 10
EMBED_DIM, NUM_HEADS, DEPTH = [16, 32], [1, 2], [1, 2]
PATCH_SIZES, PATCH_STRIDES, PATCH_PADDINGS = [7, 3], [4, 2], [2, 1]
STRIDE_Q, STRIDE_KV = 1, 2
MLP_RATIO = 2.0
OWN_BUGS = {"torch_tokens_view", "torch_gelu_tanh"}
OTHER_BUGS = {"paddle_bn_args_swapped", "paddle_heads_reshape"}


class CvtConvEmbedding(nn.Module):
    def __init__(self, in_ch, dim, patch, stride, padding):
        super().__init__()
        self.projection = nn.Conv2d(in_ch, dim, kernel_size=patch, stride=stride, padding=padding)
        self.norm = nn.LayerNorm(dim)

    def forward(self, pixel_values):
        x = self.projection(pixel_values)
        x = self.norm(x.permute(0, 2, 3, 1))
        return x.permute(0, 3, 1, 2)


class CvtAttention(nn.Module):
    def __init__(self, dim, heads, with_cls_token):
        super().__init__()
        self.with_cls_token = with_cls_token
        self.dw_q = nn.Conv2d(dim, dim, 3, stride=STRIDE_Q, padding=1, groups=dim, bias=False)
        self.bn_q = nn.BatchNorm2d(dim)
        self.dw_k = nn.Conv2d(dim, dim, 3, stride=STRIDE_KV, padding=1, groups=dim, bias=False)
        self.bn_k = nn.BatchNorm2d(dim)
        self.dw_v = nn.Conv2d(dim, dim, 3, stride=STRIDE_KV, padding=1, groups=dim, bias=False)
        self.bn_v = nn.BatchNorm2d(dim)
        self.mha = nn.MultiheadAttention(dim, heads, bias=True, batch_first=True)

    def forward(self, hidden_state, height, width):
        if self.with_cls_token:
            cls_token, hidden_state = torch.split(hidden_state, [1, height * width], dim=1)
        b, _, c = hidden_state.shape
        fmap = hidden_state.permute(0, 2, 1).reshape(b, c, height, width)
        q = self.bn_q(self.dw_q(fmap)).flatten(2).permute(0, 2, 1)
        k = self.bn_k(self.dw_k(fmap)).flatten(2).permute(0, 2, 1)
        v = self.bn_v(self.dw_v(fmap)).flatten(2).permute(0, 2, 1)
        if self.with_cls_token:
            q = torch.cat((cls_token, q), dim=1)
            k = torch.cat((cls_token, k), dim=1)
            v = torch.cat((cls_token, v), dim=1)
        out, _ = self.mha(q, k, v, need_weights=False)
        return out


class CvtLayer(nn.Module):
    def __init__(self, dim, heads, with_cls_token, gelu_approx="none"):
        super().__init__()
        hidden = int(dim * MLP_RATIO)
        self.norm_before = nn.LayerNorm(dim)
        self.attention = CvtAttention(dim, heads, with_cls_token)
        self.norm_after = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(approximate=gelu_approx), nn.Linear(hidden, dim))

    def forward(self, hidden_state, height, width):
        hidden_state = hidden_state + self.attention(self.norm_before(hidden_state), height, width)
        return hidden_state + self.mlp(self.norm_after(hidden_state))


class CvtStage(nn.Module):
    def __init__(self, stage, in_ch, with_cls_token, tokens_view=False, gelu_approx="none"):
        super().__init__()
        dim = EMBED_DIM[stage]
        self.tokens_view = tokens_view
        if with_cls_token:
            self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        else:
            self.cls_token = None
        self.embedding = CvtConvEmbedding(in_ch, dim, PATCH_SIZES[stage], PATCH_STRIDES[stage],
                                          PATCH_PADDINGS[stage])
        self.layers = nn.ModuleList([CvtLayer(dim, NUM_HEADS[stage], with_cls_token, gelu_approx) for _ in range(DEPTH[stage])])

    def forward(self, hidden_state):
        hidden_state = self.embedding(hidden_state)
        b, c, h, w = hidden_state.shape
        if self.tokens_view:
            tokens = hidden_state.reshape(b, h * w, c)
        else:
            tokens = hidden_state.flatten(2).transpose(1, 2)
        cls_token = None
        if self.cls_token is not None:
            tokens = torch.cat((self.cls_token.expand(b, -1, -1), tokens), dim=1)
        for layer in self.layers:
            tokens = layer(tokens, h, w)
        if self.cls_token is not None:
            cls_token, tokens = torch.split(tokens, [1, h * w], dim=1)
        hidden_state = tokens.transpose(1, 2).reshape(b, c, h, w)
        return hidden_state, cls_token


class ConvolutionalVisionTransformer(nn.Module):
    def __init__(self, tokens_view=False, gelu_approx="none"):
        super().__init__()
        stages, in_ch = [], NUM_CHANNELS
        for i in range(len(EMBED_DIM)):
            stages.append(CvtStage(i, in_ch, i == len(EMBED_DIM) - 1, tokens_view, gelu_approx))
            in_ch = EMBED_DIM[i]
        self.encoder = nn.ModuleList(stages)
        self.final_norm = nn.LayerNorm(EMBED_DIM[-1])
        self.classifier = nn.Linear(EMBED_DIM[-1], NUM_LABELS)

    def forward(self, pixel_values):
        hidden_state, cls_token = pixel_values, None
        for stage in self.encoder:
            hidden_state, cls_token = stage(hidden_state)
        return self.classifier(self.final_norm(cls_token.squeeze(1)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cvt torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ConvolutionalVisionTransformer(tokens_view=bug == "torch_tokens_view",
                                       gelu_approx="tanh" if bug == "torch_gelu_tanh" else "none")
    return m.eval()


def _image():
    rng = np.random.default_rng(3)
    return (0.5 * rng.standard_normal((2, NUM_CHANNELS, 32, 32))).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

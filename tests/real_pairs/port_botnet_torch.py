"""Hand-written port, torch side: a tiny Bottleneck Transformer (BoTNet) classifier (written by "person B").

The same math as port_botnet_paddle.py, re-implemented by hand in the style of lucidrains'
bottleneck-transformer-pytorch (for the BoT blocks) and torchvision's ResNet (for the rest):
input `pixel_values` [2, 3, 32, 24] (positional), output class logits [2, 10]. Stem conv 3x3 s2
+ BN + ReLU + max-pool, one ResNet bottleneck (8 -> 4 -> 16), two BoT blocks (16 -> 8 -> 32 with
a 2x2 average pool after the attention, then 32 -> 8 -> 32), global average pool, Linear(32, 10).
Attention: 2 heads of 4, q scaled by dim_head ** -0.5 before both the content and the relative
logits; relative tables rel_height [2H - 1, 4], rel_width [2W - 1, 4]. BN eps 1e-3 everywhere.

Torch idioms on this side:
- root `BoTNetClassifier`: `stem` = nn.Sequential(conv, bn, ReLU, MaxPool2d), `layer1` =
  nn.Sequential(`Bottleneck`), `bot` = nn.Sequential(`BottleBlock`, `BottleBlock`), `pool`
  (nn.AdaptiveAvgPool2d(1)), `fc`.
- `Bottleneck` (torchvision style): conv1, bn1, conv2, bn2, conv3, bn3, ONE `relu` module called
  three times, `downsample` nn.Sequential(conv, bn).
- `BottleBlock` (lucidrains style): `shortcut` (nn.Sequential(conv, bn) or nn.Identity), `net` =
  nn.Sequential(conv 1x1, BN, ReLU, `Attention`, AvgPool2d(2) or nn.Identity, BN, ReLU,
  conv 1x1, BN), then `activation` (nn.ReLU) after the residual sum.
- `Attention`: ONE packed `to_qkv` nn.Conv2d(C, 3 * 8, 1, bias=False) chunked into q | k | v
  (each head-major, 'b (h d) x y'), and a `pos_emb` = `RelPosEmb` module holding `rel_height`,
  `rel_width`. RelPosEmb uses the pad / reshape `rel_to_abs` trick on [.., L, 2L - 1] logits,
  expanded over the other axis; the height logits are computed on the transposed map and
  permuted back.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_relh_no_transpose_back -> RelPosEmb permutes the HEIGHT logits back with the width
                                  line's pattern ('b h x i y j -> b h (x y) (i j)', copy-paste)
                                  instead of '(y x) (j i)': on the non-square map the query and
                                  key positions come out column-major
  torch_stem_bn_eps            -> the stem's BatchNorm2d is built with the default eps (1e-5)
                                  instead of the spec's 1e-3 (precision-level)
"""
import os

import numpy as np
import torch
from torch import nn

BATCH, IMG_H, IMG_W, NUM_CLASSES = 2, 32, 24, 10
BN_EPS = 1e-3
OWN_BUGS = {"torch_relh_no_transpose_back", "torch_stem_bn_eps"}
OTHER_BUGS = {"paddle_rel_offset_sign", "paddle_relu_before_add"}


def rel_to_abs(x):
    """[b, h, l, 2l - 1] relative logits -> [b, h, l, l] absolute (lucidrains / TF BoTNet trick)."""
    b, h, n, _ = x.shape
    x = torch.cat((x, x.new_zeros(b, h, n, 1)), dim=3)
    flat_x = x.reshape(b, h, n * 2 * n)
    flat_x = torch.cat((flat_x, x.new_zeros(b, h, n - 1)), dim=2)
    final_x = flat_x.reshape(b, h, n + 1, 2 * n - 1)
    return final_x[:, :, :n, (n - 1):]


def relative_logits_1d(q, rel_k):
    b, heads, h, w, _ = q.shape
    logits = torch.einsum("bhxyd,rd->bhxyr", q, rel_k)
    logits = logits.reshape(b, heads * h, w, 2 * w - 1)
    logits = rel_to_abs(logits)
    logits = logits.reshape(b, heads, h, w, w)
    return logits.unsqueeze(3).expand(-1, -1, -1, h, -1, -1)  # b heads x i y j


class RelPosEmb(nn.Module):
    def __init__(self, fmap_size, dim_head, no_transpose_back=False):
        super().__init__()
        height, width = fmap_size
        scale = dim_head**-0.5
        self.fmap_size = fmap_size
        self.no_transpose_back = no_transpose_back
        self.rel_height = nn.Parameter(torch.randn(height * 2 - 1, dim_head) * scale)
        self.rel_width = nn.Parameter(torch.randn(width * 2 - 1, dim_head) * scale)

    def forward(self, q):
        h, w = self.fmap_size
        b, heads, n, d = q.shape
        q = q.reshape(b, heads, h, w, d)
        rel_logits_w = relative_logits_1d(q, self.rel_width)
        # 'b h x i y j -> b h (x y) (i j)'
        rel_logits_w = rel_logits_w.permute(0, 1, 2, 4, 3, 5).reshape(b, heads, n, n)
        q = q.transpose(2, 3)  # 'b h x y d -> b h y x d'
        rel_logits_h = relative_logits_1d(q, self.rel_height)
        if self.no_transpose_back:
            rel_logits_h = rel_logits_h.permute(0, 1, 2, 4, 3, 5).reshape(b, heads, n, n)
        else:
            # 'b h x i y j -> b h (y x) (j i)'
            rel_logits_h = rel_logits_h.permute(0, 1, 4, 2, 5, 3).reshape(b, heads, n, n)
        return rel_logits_w + rel_logits_h


class Attention(nn.Module):
    def __init__(self, dim, fmap_size, heads=2, dim_head=4, no_transpose_back=False):
        super().__init__()
        self.heads, self.dim_head = heads, dim_head
        self.scale = dim_head**-0.5
        inner_dim = heads * dim_head
        self.to_qkv = nn.Conv2d(dim, inner_dim * 3, 1, bias=False)
        self.pos_emb = RelPosEmb(fmap_size, dim_head, no_transpose_back)

    def forward(self, fmap):
        b, _, x, y = fmap.shape
        q, k, v = self.to_qkv(fmap).chunk(3, dim=1)
        # 'b (h d) x y -> b h (x y) d'
        q, k, v = (t.reshape(b, self.heads, self.dim_head, x * y).transpose(-1, -2) for t in (q, k, v))
        q = q * self.scale
        sim = torch.einsum("bhid,bhjd->bhij", q, k)
        sim = sim + self.pos_emb(q)
        attn = sim.softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        # 'b h (x y) d -> b (h d) x y'
        return out.transpose(-1, -2).reshape(b, self.heads * self.dim_head, x, y)


class BottleBlock(nn.Module):
    def __init__(self, dim, fmap_size, dim_out, proj_factor, downsample, heads=2, dim_head=4,
                 no_transpose_back=False):
        super().__init__()
        if dim != dim_out or downsample:
            stride = 2 if downsample else 1
            self.shortcut = nn.Sequential(
                nn.Conv2d(dim, dim_out, 1, stride=stride, bias=False),
                nn.BatchNorm2d(dim_out, eps=BN_EPS),
            )
        else:
            self.shortcut = nn.Identity()
        attn_dim_in = dim_out // proj_factor
        attn_dim_out = heads * dim_head
        self.net = nn.Sequential(
            nn.Conv2d(dim, attn_dim_in, 1, bias=False),
            nn.BatchNorm2d(attn_dim_in, eps=BN_EPS),
            nn.ReLU(),
            Attention(attn_dim_in, fmap_size, heads, dim_head, no_transpose_back),
            nn.AvgPool2d((2, 2)) if downsample else nn.Identity(),
            nn.BatchNorm2d(attn_dim_out, eps=BN_EPS),
            nn.ReLU(),
            nn.Conv2d(attn_dim_out, dim_out, 1, bias=False),
            nn.BatchNorm2d(dim_out, eps=BN_EPS),
        )
        self.activation = nn.ReLU()

    def forward(self, x):
        shortcut = self.shortcut(x)
        x = self.net(x)
        x = x + shortcut
        return self.activation(x)


class Bottleneck(nn.Module):
    def __init__(self, inplanes, planes, outplanes):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes, eps=BN_EPS)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes, eps=BN_EPS)
        self.conv3 = nn.Conv2d(planes, outplanes, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(outplanes, eps=BN_EPS)
        self.relu = nn.ReLU()
        self.downsample = nn.Sequential(
            nn.Conv2d(inplanes, outplanes, 1, bias=False),
            nn.BatchNorm2d(outplanes, eps=BN_EPS),
        )

    def forward(self, x):
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out = out + identity
        return self.relu(out)


class BoTNetClassifier(nn.Module):
    def __init__(self, no_transpose_back=False, stem_default_eps=False):
        super().__init__()
        stem_bn = nn.BatchNorm2d(8) if stem_default_eps else nn.BatchNorm2d(8, eps=BN_EPS)
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
            stem_bn,
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        self.layer1 = nn.Sequential(Bottleneck(8, 4, 16))
        self.bot = nn.Sequential(
            BottleBlock(16, (8, 6), 32, proj_factor=4, downsample=True, no_transpose_back=no_transpose_back),
            BottleBlock(32, (4, 3), 32, proj_factor=4, downsample=False, no_transpose_back=no_transpose_back),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, NUM_CLASSES)

    def forward(self, pixel_values):
        x = self.bot(self.layer1(self.stem(pixel_values)))
        return self.fc(torch.flatten(self.pool(x), 1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_botnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = BoTNetClassifier(no_transpose_back=bug == "torch_relh_no_transpose_back",
                         stem_default_eps=bug == "torch_stem_bn_eps")
    return m.eval()


def _image():
    return np.random.default_rng(11).standard_normal((BATCH, 3, IMG_H, IMG_W)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

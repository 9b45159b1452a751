"""Hand-written port, paddle side: a tiny SegFormer (MiT encoder + all-MLP decoder), written by
"person A" the way a Paddle user would write it. Input [1, 3, 32, 32], 5 classes, logits at 1/4
resolution [1, 5, 8, 8].

    patch_embed1: OverlapPatchEmbed, Conv2D 3->32 (7x7, stride 4, pad 3) + LayerNorm   (8x8)
    block1: 2 x Block(dim 32, 1 head, sr_ratio 2, Mix-FFN hidden 128), norm1 (LayerNorm)
    patch_embed2: OverlapPatchEmbed, Conv2D 32->64 (3x3, stride 2, pad 1) + LayerNorm  (4x4)
    block2: 1 x Block(dim 64, 2 heads, sr_ratio 1, Mix-FFN hidden 256), norm2 (LayerNorm)
    head: linear_c2 / linear_c1 (1x1 Conv2D 64->32 / 32->32), c2 bilinearly resized to 8x8,
          concat [c2, c1], linear_fuse (1x1 Conv2D no bias + BatchNorm2D + ReLU), linear_pred
          (1x1 Conv2D 32->5)

Paddle idioms on this side: the feature maps between stages and between blocks are NCHW. Each
module that needs tokens flattens inline (`flatten(2).transpose([0, 2, 1])`) and reshapes back:
the patch embed returns NCHW after its LayerNorm, a Block takes and returns NCHW, and the decoder's
per-stage "MLP" is a 1x1 Conv2D on NCHW (weight [32, C, 1, 1]). The efficient self-attention is
written by hand: `q` Linear and a packed `kv` Linear ([C, 2C], k | v), keys/values taken from the
spatially reduced map (`sr` Conv2D kernel = stride = sr_ratio, then `norm` LayerNorm) when
sr_ratio > 1, explicit matmul + softmax, `proj`. Mix-FFN: fc1, (inline reshape to NCHW) dwconv
3x3 depthwise Conv2D, act nn.GELU, fc2. Block LayerNorms eps 1e-6 (the patch embeds keep 1e-5).
The decode head registers linear_c2 before linear_c1 (as the original registers c4 .. c1). Its
BatchNorm2D's running statistics are given random values; the model is in eval mode.

PADIFF_BUG=paddle_sr_stride1 plants this side's bug (see port_segformer_truth.json); the torch
side's bug names are accepted and ignored, any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, DIMS, HEADS, SR, DEPTHS, MLP_RATIO, EMBED, CLASSES = 32, (32, 64), (1, 2), (2, 1), (2, 1), 4, 32, 5

PADDLE_BUGS = ("paddle_sr_stride1",)
TORCH_BUGS = ("torch_upsample_nearest", "torch_dwconv_no_transpose")


def to_tokens(x):
    return x.flatten(2).transpose([0, 2, 1])  # [B, C, H, W] -> [B, HW, C]


def to_map(x, h, w):
    return x.transpose([0, 2, 1]).reshape([x.shape[0], -1, h, w])  # [B, HW, C] -> [B, C, H, W]


class OverlapPatchEmbed(nn.Layer):
    def __init__(self, patch_size, stride, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, patch_size, stride=stride, padding=patch_size // 2)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x)
        h, w = x.shape[2:]
        return to_map(self.norm(to_tokens(x)), h, w)


class Attention(nn.Layer):
    def __init__(self, dim, num_heads, sr_ratio, sr_stride=None):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)
        self.sr_ratio = sr_ratio
        if sr_ratio > 1:
            self.sr = nn.Conv2D(dim, dim, sr_ratio, stride=sr_stride or sr_ratio)
            self.norm = nn.LayerNorm(dim, epsilon=1e-6)

    def forward(self, x, h, w):
        b, n, c = x.shape
        hd = c // self.num_heads
        q = self.q(x).reshape([b, n, self.num_heads, hd]).transpose([0, 2, 1, 3])
        if self.sr_ratio > 1:
            x_ = self.sr(to_map(x, h, w))
            x_ = self.norm(to_tokens(x_))
        else:
            x_ = x
        kv = self.kv(x_).reshape([b, -1, 2, self.num_heads, hd]).transpose([2, 0, 3, 1, 4])
        k, v = kv[0], kv[1]
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(out)


class MixFFN(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = nn.Conv2D(hidden, hidden, 3, padding=1, groups=hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x, h, w):
        x = self.fc1(x)
        x = to_tokens(self.dwconv(to_map(x, h, w)))
        return self.fc2(self.act(x))


class Block(nn.Layer):
    def __init__(self, dim, num_heads, sr_ratio, sr_stride=None):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.attn = Attention(dim, num_heads, sr_ratio, sr_stride)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = MixFFN(dim, dim * MLP_RATIO)

    def forward(self, x):
        h, w = x.shape[2:]
        t = to_tokens(x)
        t = t + self.attn(self.norm1(t), h, w)
        t = t + self.mlp(self.norm2(t), h, w)
        return to_map(t, h, w)


class ConvBNReLU(nn.Layer):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SegFormerHead(nn.Layer):
    def __init__(self, in_channels=DIMS, embed_dim=EMBED, num_classes=CLASSES):
        super().__init__()
        self.linear_c2 = nn.Conv2D(in_channels[1], embed_dim, 1)
        self.linear_c1 = nn.Conv2D(in_channels[0], embed_dim, 1)
        self.linear_fuse = ConvBNReLU(2 * embed_dim, embed_dim)
        self.linear_pred = nn.Conv2D(embed_dim, num_classes, 1)

    def forward(self, feats):
        c1, c2 = feats
        size = c1.shape[2:]
        _c2 = F.interpolate(self.linear_c2(c2), size=size, mode="bilinear", align_corners=False)
        _c1 = self.linear_c1(c1)
        x = self.linear_fuse(paddle.concat([_c2, _c1], axis=1))
        return self.linear_pred(x)


class SegFormer(nn.Layer):
    def __init__(self, sr_stride=None):
        super().__init__()
        self.patch_embed1 = OverlapPatchEmbed(7, 4, 3, DIMS[0])
        self.patch_embed2 = OverlapPatchEmbed(3, 2, DIMS[0], DIMS[1])
        self.block1 = nn.LayerList([Block(DIMS[0], HEADS[0], SR[0], sr_stride) for _ in range(DEPTHS[0])])
        self.norm1 = nn.LayerNorm(DIMS[0], epsilon=1e-6)
        self.block2 = nn.LayerList([Block(DIMS[1], HEADS[1], SR[1]) for _ in range(DEPTHS[1])])
        self.norm2 = nn.LayerNorm(DIMS[1], epsilon=1e-6)
        self.head = SegFormerHead()

    def forward_features(self, x):
        outs = []
        for embed, blocks, norm in ((self.patch_embed1, self.block1, self.norm1),
                                    (self.patch_embed2, self.block2, self.norm2)):
            x = embed(x)
            for blk in blocks:
                x = blk(x)
            h, w = x.shape[2:]
            x = to_map(norm(to_tokens(x)), h, w)
            outs.append(x)
        return outs

    def forward(self, x):
        return self.head(self.forward_features(x))


def _perturb(m):
    """Random init leaves biases at 0, norms at (1, 0) and BN statistics at (0, 1): give them
    random values (fixed numpy rng) so that a wrongly ported one shows."""
    rng = np.random.default_rng(5)
    norms = {id(layer) for layer in m.sublayers() if isinstance(layer, (nn.LayerNorm, nn.BatchNorm2D))}
    for layer in m.sublayers():
        for pname, p in layer.named_parameters(include_sublayers=False):
            if id(layer) in norms and pname == "weight":
                p.set_value(rng.normal(1.0, 0.1, p.shape).astype("float32"))
            elif pname == "bias":
                p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        if isinstance(layer, nn.BatchNorm2D):
            layer._mean.set_value(rng.normal(0.0, 0.2, layer._mean.shape).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 1.5, layer._variance.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in PADDLE_BUGS + TORCH_BUGS:
        raise ValueError(f"port_segformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    # the bug: stage 1's spatial-reduction conv built with stride 1 (kernel 2), 7x7 keys instead of 4x4
    m = SegFormer(sr_stride=1 if bug == "paddle_sr_stride1" else None)
    _perturb(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(3).standard_normal((1, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [1, 5, 8, 8]
    return (output**2).mean()

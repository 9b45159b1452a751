"""Hand-written port, paddle side: a tiny SVTR text recognizer in PaddleOCR style (written by "person A").

Input: one text-line image batch [2, 3, 16, 64] (positional, NCHW, numpy rng seed 53, standard
normal). Output: CTC log-probabilities [2, 16, 12] (16 time steps, vocabulary of 12 incl. blank).

Architecture (shared with the torch side):
- patch embedding: conv3x3 s2 (3 -> 8, no bias) + BN + GELU, conv3x3 s2 (8 -> 16, no bias) +
  BN + GELU -> a 4 x 16 grid of 16-d tokens (N = 64); plus a learned position embedding.
- stage 1 (dim 16, 2 heads of 8, MLP 16 -> 32 -> 16): a "Local" mixing block (attention
  restricted to a 3 x 5 window around each token by an additive 0 / -inf mask) then a "Global"
  mixing block (full attention). Blocks are POST-norm (PaddleOCR's prenorm=True):
  x = LN1(x + Attn(x)); x = LN2(x + MLP(x)); LayerNorm eps 1e-6; exact (erf) GELU.
- merging: conv3x3 stride (2, 1) (16 -> 24, bias) on the token grid -> 2 x 16, then LayerNorm.
- stage 2 (dim 24, 2 heads of 12, MLP 24 -> 48 -> 24): one Global block.
- average pooling over the height (2 -> 1), Linear(24, 12) CTC head, log_softmax.

Paddle idioms on this side (PaddleOCR rec_svtrnet style):
- root `SVTRNet`: `patch_embed` (`PatchEmbed`: `proj` = nn.Sequential of two `ConvBNLayer`,
  each `conv` / `norm` / `act` (an nn.GELU LAYER)), `pos_embed` [1, 64, 16] (create_parameter,
  token-major), `blocks1` (LayerList), `sub_sample1` (`SubSample`: `conv`, `norm`; it receives
  the 4-D map, the tokens -> map reshape is inline in the root), `blocks2`, `avg_pool`
  (nn.AdaptiveAvgPool2D([1, 16])), `ctc_head` (`CTCHead`: `fc`, F.log_softmax inline).
- `Block`: `norm1`, `mixer`, `norm2`, `mlp`; the `prenorm` flag selects post-norm (True, the
  model's) or pre-norm residuals.
- `Attention`: ONE fused `qkv` Linear(dim, 3 dim), reshaped to [B, N, 3, heads, head_dim]
  (q | k | v blocks of columns); for "Local" the 0 / -inf mask is built in __init__ with the
  PaddleOCR padded-window loop and kept as a plain tensor attribute (`mask`, a buffer);
  F.softmax inline; `proj`.
- `Mlp`: `fc1`, `fc2`, with F.gelu INLINE (no activation layer).
- model() gives the BN / LayerNorm layers trained-looking affine weights (and BN running
  statistics) and the position embedding N(0, 0.1) values (seeded).

The torch side (port_svtr_torch.py) was written independently: separate q / k / v Linears and
F.scaled_dot_product_attention with a boolean-derived additive mask buffer, a [1, C, H, W]
position embedding added to the conv map, nn.Sequential MLPs with an nn.GELU module, inline
F.gelu in the stem, a merging module that takes the tokens, and an inline mean over the height.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_attn_scale_dim -> `Attention` scales q by dim ** -0.5 (the full width, 16 / 24) instead
                           of head_dim ** -0.5 (8 / 12), in every block
  paddle_prenorm_flag   -> the blocks are built with prenorm=False, i.e. PRE-norm residuals
                           x = x + Attn(LN1(x)); x = x + MLP(LN2(x)) (every block)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, VOCAB = 2, 12
IMG_H, IMG_W = 16, 64
GRID = (4, 16)
DIMS, HEADS = (16, 24), (2, 2)
LOCAL_K = (3, 5)
OWN_BUGS = {"paddle_attn_scale_dim", "paddle_prenorm_flag"}
OTHER_BUGS = {"torch_gelu_tanh", "torch_local_window_swapped"}


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c):
        super().__init__()
        self.conv = nn.Conv2D(in_c, out_c, 3, stride=2, padding=1, bias_attr=False)
        self.norm = nn.BatchNorm2D(out_c)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class PatchEmbed(nn.Layer):
    def __init__(self, in_channels=3, embed_dim=16):
        super().__init__()
        self.proj = nn.Sequential(ConvBNLayer(in_channels, embed_dim // 2), ConvBNLayer(embed_dim // 2, embed_dim))

    def forward(self, x):
        x = self.proj(x)  # [B, C, H/4, W/4]
        return x.flatten(2).transpose([0, 2, 1])  # [B, N, C]


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Attention(nn.Layer):
    def __init__(self, dim, num_heads, mixer="Global", HW=None, local_k=LOCAL_K, scale_full_dim=False):
        super().__init__()
        self.num_heads = num_heads
        self.dim = dim
        self.head_dim = dim // num_heads
        self.scale = (dim if scale_full_dim else self.head_dim) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.mixer = mixer
        if mixer == "Local":
            H, W = HW
            hk, wk = local_k
            mask = paddle.ones([H * W, H + hk - 1, W + wk - 1], dtype="float32")
            for h in range(H):
                for w in range(W):
                    mask[h * W + w, h:h + hk, w:w + wk] = 0.0
            mask_paddle = mask[:, hk // 2:H + hk // 2, wk // 2:W + wk // 2].flatten(1)
            mask_inf = paddle.full([H * W, H * W], float("-inf"), dtype="float32")
            mask = paddle.where(mask_paddle < 1, mask_paddle, mask_inf)
            self.mask = mask.unsqueeze([0, 1])

    def forward(self, x):
        qkv = self.qkv(x).reshape((0, -1, 3, self.num_heads, self.head_dim)).transpose((2, 0, 3, 1, 4))
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q.matmul(k.transpose((0, 1, 3, 2)))
        if self.mixer == "Local":
            attn = attn + self.mask
        attn = F.softmax(attn, axis=-1)
        x = attn.matmul(v).transpose((0, 2, 1, 3)).reshape((0, -1, self.dim))
        return self.proj(x)


class Block(nn.Layer):
    def __init__(self, dim, num_heads, mixer, HW, mlp_ratio=2.0, prenorm=True, scale_full_dim=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mixer = Attention(dim, num_heads, mixer, HW, scale_full_dim=scale_full_dim)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))
        self.prenorm = prenorm

    def forward(self, x):
        if self.prenorm:  # PaddleOCR's name: the norm comes AFTER the residual sum
            x = self.norm1(x + self.mixer(x))
            x = self.norm2(x + self.mlp(x))
        else:
            x = x + self.mixer(self.norm1(x))
            x = x + self.mlp(self.norm2(x))
        return x


class SubSample(nn.Layer):
    def __init__(self, in_channels, out_channels, stride=(2, 1)):
        super().__init__()
        self.conv = nn.Conv2D(in_channels, out_channels, 3, stride=list(stride), padding=1)
        self.norm = nn.LayerNorm(out_channels, epsilon=1e-6)

    def forward(self, x):
        x = self.conv(x)
        return self.norm(x.flatten(2).transpose([0, 2, 1]))


class CTCHead(nn.Layer):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.fc = nn.Linear(in_channels, out_channels)

    def forward(self, x):
        return F.log_softmax(self.fc(x), axis=-1)


class SVTRNet(nn.Layer):
    def __init__(self, prenorm=True, scale_full_dim=False):
        super().__init__()
        d1, d2 = DIMS
        H, W = GRID
        self.HW = [H, W]
        self.patch_embed = PatchEmbed(3, d1)
        self.pos_embed = self.create_parameter([1, H * W, d1], default_initializer=nn.initializer.Constant(0.0))
        self.blocks1 = nn.LayerList([
            Block(d1, HEADS[0], m, [H, W], prenorm=prenorm, scale_full_dim=scale_full_dim) for m in ("Local", "Global")
        ])
        self.sub_sample1 = SubSample(d1, d2, stride=(2, 1))
        self.blocks2 = nn.LayerList([
            Block(d2, HEADS[1], "Global", [H // 2, W], prenorm=prenorm, scale_full_dim=scale_full_dim)
        ])
        self.avg_pool = nn.AdaptiveAvgPool2D([1, W])
        self.ctc_head = CTCHead(d2, VOCAB)

    def forward(self, x):
        x = self.patch_embed(x)
        x = x + self.pos_embed
        for blk in self.blocks1:
            x = blk(x)
        H, W = self.HW
        x = self.sub_sample1(x.transpose([0, 2, 1]).reshape([0, DIMS[0], H, W]))
        for blk in self.blocks2:
            x = blk(x)
        x = x.transpose([0, 2, 1]).reshape([0, DIMS[1], H // 2, W])
        x = self.avg_pool(x).squeeze(2).transpose([0, 2, 1])  # [B, W, C]
        return self.ctc_head(x)


def _trained_look(m):
    rng = np.random.default_rng(59)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.7, 1.3, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        if isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    m.pos_embed.set_value(rng.normal(0.0, 0.1, m.pos_embed.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_svtr paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SVTRNet(prenorm=bug != "paddle_prenorm_flag", scale_full_dim=bug == "paddle_attn_scale_dim")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(53)
    return rng.standard_normal((BATCH, 3, IMG_H, IMG_W)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # CTC log-probabilities [2, 16, 12]
    return (output**2).mean()

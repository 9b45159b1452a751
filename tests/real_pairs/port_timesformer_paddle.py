"""Hand-written port, paddle side: a tiny TimeSformer with divided space-time attention (written by "person A").

Input: one positional video [2, 4, 3, 16, 16] = [B, T, C, H, W] (numpy rng seed 55, standard
normal). Output: logits [2, 10].

Shared math (facebookresearch/TimeSformer vit.py, attention_type="divided_space_time"):
  patch embed   every frame: Conv(3 -> 32, 4x4, stride 4) -> N = 16 patch tokens of dim 32
  tokens        cls token + spatial pos embed [N + 1, 32] (per frame), then a temporal embed
                [T, 32] added to every patch token of frame t; one cls token for the clip
  2 blocks      temporal attention: for every patch position, the T tokens of that patch attend
                to each other (LayerNorm, 4 heads of 8), then a `temporal_fc` Linear; added to
                the patch tokens (the cls token is left out);
                spatial attention: for every frame, [cls, N patch tokens] attend to each other
                (LayerNorm, 4 heads of 8); the cls token is copied into every frame and its T
                outputs are AVERAGED back into one cls update; residual;
                MLP: LayerNorm, Linear(32 -> 128), exact GELU, Linear(128 -> 32); residual
  head          LayerNorm (eps 1e-6 everywhere) -> cls token -> Linear(32 -> 10)

Paddle idioms on this side (close to the original code):
- tokens are PATCH-MAJOR: [B, 1 + N*T, D], token 1 + n*T + t = patch n of frame t (the
  original's 'b (h w t) m' layout); the rearranges are paddle reshape / transpose inline.
- root `TimeSformer` creates `cls_token` [1, 1, 32], `pos_embed` [1, 17, 32], `time_embed`
  [1, 4, 32] (create_parameter), then `patch_embed` (PatchEmbed: `proj` Conv2D, folds T into
  the batch), `blocks` (LayerList, iterated, each block called with (x, B, T, W)), `norm`,
  `head`.
- `Block` registers `norm1`, `attn`, `temporal_norm1`, `temporal_attn`, `temporal_fc`, `norm2`,
  `mlp` (the original's order; temporal runs first). The cls copy / average and the residuals
  are inline in the block.
- `Attention`: ONE fused `qkv` Linear(32, 96) (output columns q | k | v, head-major inside
  each), reshape [B, L, 3, heads, 8], explicit softmax(q k^T * scale) v, then `proj`.
- `Mlp`: `fc1`, `act` (nn.GELU), `fc2`.
- model() gives the LayerNorms, biases, cls / pos / time embeddings trained-looking values.

The torch side (port_timesformer_torch.py) was written independently: FRAME-MAJOR tokens,
nn.MultiheadAttention, a TemporalMixer module with its own norm / attention / fc.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_qkv_heads_first -> Attention reshapes the fused qkv output as [B, L, heads, 3, 8]
                            instead of [B, L, 3, heads, 8] (q / k / v picked from the wrong
                            columns); used by the temporal and the spatial attention
  paddle_cls_first_frame -> the block takes the cls update from frame 0's spatial attention
                            output instead of the mean over the T frames
"""

import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CHANS, FRAMES = 16, 4, 3, 4
EMBED_DIM, DEPTH, NUM_HEADS, MLP_RATIO = 32, 2, 4, 4
NUM_CLASSES = 10
LN_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_qkv_heads_first", "paddle_cls_first_frame"}
OTHER_BUGS = {"torch_gelu_tanh", "torch_temporal_patch_major"}


class PatchEmbed(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2D(IN_CHANS, EMBED_DIM, kernel_size=PATCH, stride=PATCH)

    def forward(self, x):
        b, t, c, h, w = x.shape
        x = self.proj(x.reshape([b * t, c, h, w]))
        w_out = x.shape[-1]
        x = x.flatten(2).transpose([0, 2, 1])
        return x, t, w_out


class Attention(nn.Layer):
    def __init__(self, dim, num_heads, heads_first=False):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.heads_first = heads_first
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        hd = c // self.num_heads
        if self.heads_first:
            qkv = self.qkv(x).reshape([b, n, self.num_heads, 3, hd]).transpose([3, 0, 2, 1, 4])
        else:
            qkv = self.qkv(x).reshape([b, n, 3, self.num_heads, hd]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(x)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, dim, num_heads, bug=""):
        super().__init__()
        self.cls_first_frame = bug == "paddle_cls_first_frame"
        heads_first = bug == "paddle_qkv_heads_first"
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = Attention(dim, num_heads, heads_first)
        self.temporal_norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.temporal_attn = Attention(dim, num_heads, heads_first)
        self.temporal_fc = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.mlp = Mlp(dim, dim * MLP_RATIO)

    def forward(self, x, b, t, w):
        m = x.shape[2]
        num_spatial_tokens = (x.shape[1] - 1) // t
        h = num_spatial_tokens // w
        # temporal: 'b (h w t) m -> (b h w) t m'
        xt = x[:, 1:, :].reshape([b * h * w, t, m])
        res_temporal = self.temporal_attn(self.temporal_norm1(xt))
        res_temporal = self.temporal_fc(res_temporal.reshape([b, h * w * t, m]))
        xt = x[:, 1:, :] + res_temporal
        # spatial: 'b (h w t) m -> (b t) (h w) m', cls copied into every frame
        init_cls_token = x[:, 0:1, :]
        cls_token = init_cls_token.tile([1, t, 1]).reshape([b * t, 1, m])
        xs = xt.reshape([b, h * w, t, m]).transpose([0, 2, 1, 3]).reshape([b * t, h * w, m])
        xs = paddle.concat([cls_token, xs], axis=1)
        res_spatial = self.attn(self.norm1(xs))
        cls_token = res_spatial[:, 0, :].reshape([b, t, m])
        if self.cls_first_frame:
            cls_token = cls_token[:, 0:1, :]
        else:
            cls_token = paddle.mean(cls_token, axis=1, keepdim=True)
        res_spatial = res_spatial[:, 1:, :].reshape([b, t, h * w, m]).transpose([0, 2, 1, 3])
        res_spatial = res_spatial.reshape([b, h * w * t, m])
        x = paddle.concat([init_cls_token, xt], axis=1) + paddle.concat([cls_token, res_spatial], axis=1)
        x = x + self.mlp(self.norm2(x))
        return x


class TimeSformer(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        num_patches = (IMG // PATCH) ** 2
        zeros = nn.initializer.Constant(0.0)
        self.cls_token = self.create_parameter([1, 1, EMBED_DIM], default_initializer=zeros)
        self.pos_embed = self.create_parameter([1, num_patches + 1, EMBED_DIM], default_initializer=zeros)
        self.time_embed = self.create_parameter([1, FRAMES, EMBED_DIM], default_initializer=zeros)
        self.patch_embed = PatchEmbed()
        self.blocks = nn.LayerList([Block(EMBED_DIM, NUM_HEADS, bug) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(EMBED_DIM, epsilon=LN_EPS)
        self.head = nn.Linear(EMBED_DIM, NUM_CLASSES)

    def forward(self, video):
        b = video.shape[0]
        x, t, w = self.patch_embed(video)  # [(b t), n, m]
        bt, n, m = x.shape
        cls_tokens = self.cls_token.expand([bt, -1, -1])
        x = paddle.concat([cls_tokens, x], axis=1) + self.pos_embed
        cls_tokens = x[:b, 0, :].unsqueeze(1)
        # '(b t) n m -> (b n) t m', + time embed, '(b n) t m -> b (n t) m'
        x = x[:, 1:].reshape([b, t, n, m]).transpose([0, 2, 1, 3]).reshape([b * n, t, m])
        x = x + self.time_embed
        x = x.reshape([b, n * t, m])
        x = paddle.concat([cls_tokens, x], axis=1)
        for blk in self.blocks:
            x = blk(x, b, t, w)
        x = self.norm(x)
        return self.head(x[:, 0])


def _trained_look(m):
    rng = np.random.default_rng(155)
    for p, std in ((m.cls_token, 0.5), (m.pos_embed, 0.3), (m.time_embed, 0.3)):
        p.set_value(rng.normal(0.0, std, p.shape).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_timesformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TimeSformer(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _video():
    rng = np.random.default_rng(55)
    return rng.standard_normal((BATCH, FRAMES, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_video()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

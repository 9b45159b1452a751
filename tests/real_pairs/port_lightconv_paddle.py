"""Hand-written port, paddle side: a fairseq-style LightConv / DynamicConv encoder (written by "person A").

Input: positional `src_tokens` [2, 10] int64 (numpy rng seed 37, ids 2..39). Output: the encoder
states after the final LayerNorm, [2, 10, 24], batch-major.

Model (shared with the torch side):
- vocab 40, width 24, 3 heads (8 channels per head), FFN hidden 48, two encoder layers:
  layer 0 = lightweight conv (K=3), layer 1 = dynamic conv (K=5), both centred (pad K // 2).
- x = sqrt(24) * embed(tokens) + pos_embed(positions), positions = 2..11 (fairseq's learned
  positions are offset by padding_idx + 1 = 2), dropout (off in eval).
- each layer, pre-norm:
    x = x + out_proj(conv(GLU(LN(x))))        GLU(h) = value(h) * sigmoid(gate(h))
    x = x + fc2(relu(fc1(LN(x))))
  then a final LayerNorm.
- lightweight conv: one softmax-normalised kernel per head, shared by the head's 8 contiguous
  channels (channel c uses head c // 8), weight dropout 0.1 (off in eval), a per-channel bias.
- dynamic conv: the kernel of each position and head is predicted from the position's input by a
  Linear(24, 3 * 5), softmax over the K taps, weight dropout, then applied to the K neighbours
  (channel c uses head c // 8), plus a per-channel bias.

Paddle idioms on this side:
- root `LightConvEncoder`: `embed_tokens`, `embed_positions` (nn.Embedding(18, 24)), `dropout`,
  `layers` (LayerList, iterated), `final_norm`. Batch-major [B, T, C] throughout.
- `LightConvEncoderLayer` registers `value_proj`, `gate_proj` (the GLU as TWO Linears, the
  product with F.sigmoid inline), `token_mixer`, `out_proj`, `fc1`, `ffn_act` (nn.ReLU module),
  `fc2`, and only then the two norms `conv_layer_norm`, `ffn_layer_norm`.
- `LightweightConv`: `weight` [H, 1, K] (create_parameter), `bias` [C], `weight_dropout`
  (nn.Dropout module called on the softmaxed kernel). The kernel is repeat_interleave'd to
  [C, 1, K] and applied with F.conv1d(groups=C) on [B, C, T].
- `DynamicConv`: `weight_linear` Linear(24, 15) whose output columns are head-major
  (column h * K + k), `bias` [C], `weight_dropout`; the K shifted copies of the padded input are
  stacked and contracted with the kernels by einsum.
- model() gives norms, biases, embeddings and conv kernels trained-looking seeded values.

The torch side (port_lightconv_torch.py) was written independently in fairseq's time-major style:
one fused GLU `linear1` + nn.GLU, a [H, K] lightweight kernel, a kernel-major dynamic-kernel
predictor, unfold, and a `layer_norms` ModuleList.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_glu_uses_silu      -> the layer's GLU is value * silu(gate) instead of
                               value * sigmoid(gate) (SwiGLU habit), in both layers
  paddle_dconv_kernel_bf16  -> DynamicConv rounds the predicted kernel logits to bfloat16 before
                               the softmax (a mixed-precision leftover): precision-level
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, DIM, HEADS, FFN, MAX_POS, POS_OFFSET = 40, 24, 3, 48, 16, 2
KERNELS = (3, 5)
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_glu_uses_silu", "paddle_dconv_kernel_bf16"}
OTHER_BUGS = {"torch_lconv_head_interleave", "torch_ffn_residual_after_norm"}


class LightweightConv(nn.Layer):
    def __init__(self, channels, kernel_size, num_heads, weight_dropout=0.1):
        super().__init__()
        self.channels, self.kernel_size, self.num_heads = channels, kernel_size, num_heads
        self.weight = self.create_parameter([num_heads, 1, kernel_size])
        self.bias = self.create_parameter([channels], is_bias=True)
        self.weight_dropout = nn.Dropout(weight_dropout)

    def forward(self, x):  # [B, T, C]
        w = F.softmax(self.weight, axis=-1)
        w = self.weight_dropout(w)
        w = paddle.repeat_interleave(w, self.channels // self.num_heads, axis=0)  # [C, 1, K]
        y = F.conv1d(x.transpose([0, 2, 1]), w, padding=self.kernel_size // 2, groups=self.channels)
        y = y + self.bias.reshape([1, -1, 1])
        return y.transpose([0, 2, 1])


class DynamicConv(nn.Layer):
    def __init__(self, channels, kernel_size, num_heads, weight_dropout=0.1, bf16_kernel=False):
        super().__init__()
        self.channels, self.kernel_size, self.num_heads = channels, kernel_size, num_heads
        self.bf16_kernel = bf16_kernel
        self.weight_linear = nn.Linear(channels, num_heads * kernel_size)
        self.bias = self.create_parameter([channels], is_bias=True)
        self.weight_dropout = nn.Dropout(weight_dropout)

    def forward(self, x):  # [B, T, C]
        b, t, c = x.shape
        k, h = self.kernel_size, self.num_heads
        logits = self.weight_linear(x).reshape([b, t, h, k])
        if self.bf16_kernel:
            logits = logits.astype("bfloat16").astype("float32")
        w = F.softmax(logits, axis=-1)
        w = self.weight_dropout(w)
        pad = k // 2
        xp = F.pad(x, [pad, k - 1 - pad], data_format="NLC")
        cols = paddle.stack([xp[:, i:i + t, :] for i in range(k)], axis=2)  # [B, T, K, C]
        cols = cols.reshape([b, t, k, h, c // h])
        y = paddle.einsum("btkhr,bthk->bthr", cols, w).reshape([b, t, c])
        return y + self.bias


class LightConvEncoderLayer(nn.Layer):
    def __init__(self, kernel_size, dynamic, glu_silu=False, bf16_kernel=False):
        super().__init__()
        self.glu_silu = glu_silu
        self.value_proj = nn.Linear(DIM, DIM)
        self.gate_proj = nn.Linear(DIM, DIM)
        if dynamic:
            self.token_mixer = DynamicConv(DIM, kernel_size, HEADS, bf16_kernel=bf16_kernel)
        else:
            self.token_mixer = LightweightConv(DIM, kernel_size, HEADS)
        self.out_proj = nn.Linear(DIM, DIM)
        self.fc1 = nn.Linear(DIM, FFN)
        self.ffn_act = nn.ReLU()
        self.fc2 = nn.Linear(FFN, DIM)
        self.conv_layer_norm = nn.LayerNorm(DIM)
        self.ffn_layer_norm = nn.LayerNorm(DIM)

    def forward(self, x):
        h = self.conv_layer_norm(x)
        gate = self.gate_proj(h)
        gate = F.silu(gate) if self.glu_silu else F.sigmoid(gate)
        h = self.value_proj(h) * gate
        h = self.out_proj(self.token_mixer(h))
        x = x + h
        h = self.fc2(self.ffn_act(self.fc1(self.ffn_layer_norm(x))))
        return x + h


class LightConvEncoder(nn.Layer):
    def __init__(self, glu_silu=False, bf16_kernel=False):
        super().__init__()
        self.embed_scale = math.sqrt(DIM)
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.embed_positions = nn.Embedding(MAX_POS + POS_OFFSET, DIM)
        self.dropout = nn.Dropout(0.1)
        self.layers = nn.LayerList([
            LightConvEncoderLayer(KERNELS[0], dynamic=False, glu_silu=glu_silu),
            LightConvEncoderLayer(KERNELS[1], dynamic=True, glu_silu=glu_silu, bf16_kernel=bf16_kernel),
        ])
        self.final_norm = nn.LayerNorm(DIM)

    def forward(self, src_tokens):
        t = src_tokens.shape[1]
        x = self.embed_scale * self.embed_tokens(src_tokens)
        positions = paddle.arange(t, dtype="int64") + POS_OFFSET
        x = x + self.embed_positions(positions).unsqueeze(0)
        x = self.dropout(x)
        for layer in self.layers:
            x = layer(x)
        return self.final_norm(x)


def _trained_look(m):
    rng = np.random.default_rng(23)

    def put(p, arr):
        p.set_value(arr.astype("float32").reshape(p.shape))

    put(m.embed_tokens.weight, rng.normal(0.0, DIM ** -0.5, (VOCAB, DIM)))
    put(m.embed_positions.weight, rng.normal(0.0, 0.3, (MAX_POS + POS_OFFSET, DIM)))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            put(layer.weight, rng.uniform(0.7, 1.3, DIM))
            put(layer.bias, rng.normal(0.0, 0.1, DIM))
        elif isinstance(layer, nn.Linear):
            put(layer.bias, rng.normal(0.0, 0.1, layer.bias.shape))
        elif isinstance(layer, LightweightConv):
            put(layer.weight, rng.normal(0.0, 1.0, layer.weight.shape))
            put(layer.bias, rng.normal(0.0, 0.1, DIM))
        elif isinstance(layer, DynamicConv):
            put(layer.bias, rng.normal(0.0, 0.1, DIM))
    for layer in m.layers:
        if isinstance(layer.token_mixer, DynamicConv):
            wl = layer.token_mixer.weight_linear
            put(wl.weight, rng.normal(0.0, 0.4, wl.weight.shape))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_lightconv paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = LightConvEncoder(glu_silu=bug == "paddle_glu_uses_silu", bf16_kernel=bug == "paddle_dconv_kernel_bf16")
    _trained_look(m)
    m.eval()
    return m


def _tokens():
    rng = np.random.default_rng(37)
    return rng.integers(2, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_tokens()),), {}


def loss(output):
    # encoder states [2, 10, 24]
    return (output**2).mean()

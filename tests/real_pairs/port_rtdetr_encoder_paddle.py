"""Hand-written port, paddle side: RT-DETR's hybrid encoder, tiny (written by "person A", PaddleDetection style).

Inputs: three backbone feature maps (positional, NCHW, numpy rng seed 11, standard normal)
S3 [2, 8, 16, 16], S4 [2, 16, 8, 8], S5 [2, 32, 4, 4]. Hidden width 16.
  1. input projections: per level a 1x1 conv (no bias) + BN -> 16 channels;
  2. AIFI: one post-norm transformer encoder layer (2 heads of 8, FFN 32, GELU) over the 16
     tokens of the projected S5, with a 2-D sin-cos position embedding (temperature 10000)
     added to the queries and keys (not the values);
  3. CCFM: top-down (lateral 1x1 conv+BN+SiLU on the higher map, nearest x2 upsample, concat
     [up, low], CSP-RepC3 block) twice, then bottom-up (3x3 stride-2 conv+BN+SiLU, concat
     [down, high], CSP-RepC3 block) twice.
     CSP-RepC3 (32 -> 16): x1 = conv1(x) (1x1 conv+BN+SiLU), x1 = 2 RepVGG blocks(x1),
     x2 = conv2(x) (1x1 conv+BN+SiLU), out = x1 + x2. RepVGG block: SiLU(BN(conv3x3(x)) +
     BN(conv1x1(x))).
The three output maps [2, 16, 16, 16], [2, 16, 8, 8], [2, 16, 4, 4] are flattened to tokens as
the RT-DETR decoder does (flatten(2).transpose) and concatenated: output [2, 336, 16].

Paddle idioms on this side:
- root `HybridEncoder` registers `encoder` FIRST (LayerList of `TransformerEncoder`, each with a
  `layers` LayerList of `TransformerLayer`), then `input_proj` (LayerList of nn.Sequential with
  named children ('conv', Conv2D 1x1 no bias), ('norm', BatchNorm2D)), then `lateral_convs`,
  `fpn_blocks`, `downsample_convs`, `pan_blocks`. The sin-cos embedding is a static method
  computed inline in the forward; upsampling is F.interpolate inline.
- `TransformerLayer`: `self_attn` = paddle nn.MultiHeadAttention (SEPARATE q_proj / k_proj /
  v_proj / out_proj Linears, [in, out] weights), `linear1`, `linear2`, `norm1`, `norm2`,
  dropouts; the activation is F.gelu inline (no module).
- `BaseConv` (conv, bn; SiLU inline) for the lateral / downsample / CSP 1x1 convs;
  `ConvBNLayer` (conv, bn; no activation) for the two RepVGG branches; `RepVggBlock` applies
  F.silu inline. `CSPRepLayer` has conv1, conv2, bottlenecks (nn.Sequential) and NO conv3 (the
  hidden width equals the output width, so the identity is simply left out).
- BatchNorm2D(momentum=0.9, epsilon=1e-5). model() gives every BN and LayerNorm trained-looking
  affine values and running statistics, every conv a normal(0, 1 / sqrt(fan_in)) weight, every
  Linear a bias N(0, 0.1), and the FFN's linear1 a N(0, 0.5) weight (pre-activations of a few
  units, where GELU variants differ), all seeded (rng 23).

The torch side (port_rtdetr_encoder_torch.py) was written independently in lyuwenyu's RT-DETR
PyTorch style: nn.MultiheadAttention (packed in_proj_weight), activation modules, Identity
conv3, Sequential input projections with numbered children, `norm` instead of `bn`.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_proj_bn_eps   -> the input projections' BatchNorm2D is built with epsilon=1e-3 (the
                          YOLO / PP-YOLOE habit) instead of 1e-5 (precision-level)
  paddle_value_with_pos -> the AIFI layer adds the position embedding to the values too
                          (q = k = v = src + pos)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CHANNELS = (8, 16, 32)
HIDDEN, NHEAD, FFN = 16, 2, 32
NUM_BLOCKS = 2
PE_TEMPERATURE = 10000.0
BATCH = 2
OWN_BUGS = {"paddle_proj_bn_eps", "paddle_value_with_pos"}
OTHER_BUGS = {"torch_gelu_tanh", "torch_repvgg_branch_act"}


class BaseConv(nn.Layer):
    def __init__(self, ch_in, ch_out, ksize, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, ksize, stride=stride, padding=(ksize - 1) // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(ch_out, momentum=0.9, epsilon=1e-5)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


class ConvBNLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, ksize):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, ksize, stride=1, padding=(ksize - 1) // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(ch_out, momentum=0.9, epsilon=1e-5)

    def forward(self, x):
        return self.bn(self.conv(x))


class RepVggBlock(nn.Layer):
    def __init__(self, ch_in, ch_out):
        super().__init__()
        self.conv1 = ConvBNLayer(ch_in, ch_out, 3)
        self.conv2 = ConvBNLayer(ch_in, ch_out, 1)

    def forward(self, x):
        return F.silu(self.conv1(x) + self.conv2(x))


class CSPRepLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, num_blocks):
        super().__init__()
        self.conv1 = BaseConv(ch_in, ch_out, 1)
        self.conv2 = BaseConv(ch_in, ch_out, 1)
        self.bottlenecks = nn.Sequential(*[RepVggBlock(ch_out, ch_out) for _ in range(num_blocks)])

    def forward(self, x):
        x_1 = self.bottlenecks(self.conv1(x))
        x_2 = self.conv2(x)
        return x_1 + x_2


class TransformerLayer(nn.Layer):
    def __init__(self, d_model, nhead, dim_feedforward, value_with_pos=False):
        super().__init__()
        self.value_with_pos = value_with_pos
        self.self_attn = nn.MultiHeadAttention(d_model, nhead, dropout=0.0)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(0.0, mode="upscale_in_train")
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(0.0, mode="upscale_in_train")
        self.dropout2 = nn.Dropout(0.0, mode="upscale_in_train")

    @staticmethod
    def with_pos_embed(tensor, pos_embed):
        return tensor if pos_embed is None else tensor + pos_embed

    def forward(self, src, pos_embed=None):
        residual = src
        q = k = self.with_pos_embed(src, pos_embed)
        v = q if self.value_with_pos else src
        src = self.self_attn(q, k, value=v)
        src = self.norm1(residual + self.dropout1(src))
        residual = src
        src = self.linear2(self.dropout(F.gelu(self.linear1(src))))
        return self.norm2(residual + self.dropout2(src))


class TransformerEncoder(nn.Layer):
    def __init__(self, layer_fn, num_layers):
        super().__init__()
        self.layers = nn.LayerList([layer_fn() for _ in range(num_layers)])

    def forward(self, src, pos_embed=None):
        out = src
        for layer in self.layers:
            out = layer(out, pos_embed=pos_embed)
        return out


class HybridEncoder(nn.Layer):
    def __init__(self, proj_eps=1e-5, value_with_pos=False):
        super().__init__()
        self.encoder = nn.LayerList(
            [TransformerEncoder(lambda: TransformerLayer(HIDDEN, NHEAD, FFN, value_with_pos), 1)])
        self.input_proj = nn.LayerList()
        for ch in IN_CHANNELS:
            self.input_proj.append(nn.Sequential(
                ("conv", nn.Conv2D(ch, HIDDEN, 1, bias_attr=False)),
                ("norm", nn.BatchNorm2D(HIDDEN, momentum=0.9, epsilon=proj_eps))))
        n = len(IN_CHANNELS)
        self.lateral_convs = nn.LayerList([BaseConv(HIDDEN, HIDDEN, 1) for _ in range(n - 1)])
        self.fpn_blocks = nn.LayerList([CSPRepLayer(HIDDEN * 2, HIDDEN, NUM_BLOCKS) for _ in range(n - 1)])
        self.downsample_convs = nn.LayerList([BaseConv(HIDDEN, HIDDEN, 3, stride=2) for _ in range(n - 1)])
        self.pan_blocks = nn.LayerList([CSPRepLayer(HIDDEN * 2, HIDDEN, NUM_BLOCKS) for _ in range(n - 1)])

    @staticmethod
    def build_2d_sincos_position_embedding(w, h, embed_dim=256, temperature=10000.0):
        grid_w = paddle.arange(int(w), dtype=paddle.float32)
        grid_h = paddle.arange(int(h), dtype=paddle.float32)
        grid_w, grid_h = paddle.meshgrid(grid_w, grid_h)
        pos_dim = embed_dim // 4
        omega = paddle.arange(pos_dim, dtype=paddle.float32) / pos_dim
        omega = 1.0 / (temperature**omega)
        out_w = grid_w.flatten()[..., None] @ omega[None]
        out_h = grid_h.flatten()[..., None] @ omega[None]
        return paddle.concat([paddle.sin(out_w), paddle.cos(out_w), paddle.sin(out_h), paddle.cos(out_h)],
                             axis=1)[None, :, :]

    def forward(self, s3, s4, s5):
        feats = [s3, s4, s5]
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        # AIFI on the last (smallest) level
        h, w = proj_feats[-1].shape[2:]
        src_flatten = proj_feats[-1].flatten(2).transpose([0, 2, 1])
        pos_embed = self.build_2d_sincos_position_embedding(w, h, HIDDEN, PE_TEMPERATURE)
        memory = self.encoder[0](src_flatten, pos_embed=pos_embed)
        proj_feats[-1] = memory.transpose([0, 2, 1]).reshape([-1, HIDDEN, h, w])
        # top-down
        n = len(IN_CHANNELS)
        inner_outs = [proj_feats[-1]]
        for idx in range(n - 1, 0, -1):
            feat_high = self.lateral_convs[n - 1 - idx](inner_outs[0])
            inner_outs[0] = feat_high
            upsample_feat = F.interpolate(feat_high, scale_factor=2.0, mode="nearest")
            inner_out = self.fpn_blocks[n - 1 - idx](paddle.concat([upsample_feat, proj_feats[idx - 1]], axis=1))
            inner_outs.insert(0, inner_out)
        # bottom-up
        outs = [inner_outs[0]]
        for idx in range(n - 1):
            downsample_feat = self.downsample_convs[idx](outs[-1])
            outs.append(self.pan_blocks[idx](paddle.concat([downsample_feat, inner_outs[idx + 1]], axis=1)))
        tokens = [o.flatten(2).transpose([0, 2, 1]) for o in outs]
        return paddle.concat(tokens, axis=1)  # [B, 256 + 64 + 16, 16]


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Conv2D):
            fan_in = int(np.prod(layer.weight.shape[1:]))
            layer.weight.set_value(rng.normal(0.0, fan_in**-0.5, layer.weight.shape).astype("float32"))
        elif isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        elif isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.7, 1.3, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        elif isinstance(layer, nn.Linear):
            if _name.endswith("linear1"):  # a trained FFN: pre-activations of a few units
                layer.weight.set_value(rng.normal(0.0, 0.5, layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_rtdetr_encoder paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = HybridEncoder(proj_eps=1e-3 if bug == "paddle_proj_bn_eps" else 1e-5,
                      value_with_pos=bug == "paddle_value_with_pos")
    _trained_look(m)
    m.eval()
    return m


def _feats():
    rng = np.random.default_rng(11)
    return [rng.standard_normal((BATCH, c, s, s)).astype("float32") for c, s in zip(IN_CHANNELS, (16, 8, 4))]


def inputs():
    return tuple(paddle.to_tensor(a) for a in _feats()), {}


def loss(output):
    # encoder memory tokens [2, 336, 16]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny DETR-style detector (written by "person A").

facebookresearch/detr-style code, written by hand in paddle. Sizes: 32x32 RGB images, batch 2;
a 2-conv backbone (3 -> 16 -> 32 channels, stride 2 each, stride 4 overall -> an 8x8 feature
map), a 1x1 input projection to d_model 32, a fixed 2-D sine position embedding, a 1-layer
transformer encoder and a 2-layer transformer decoder (4 heads of 8, FFN 64, ReLU, post-norm,
LayerNorm eps 1e-5, no dropout), 6 object queries, 4 + 1 classes. Eval mode, fp32.

Output: ONE tensor [2, 6, 9] = concat([class logits (5), sigmoid boxes (cx, cy, w, h)], -1).

Paddle idioms on this side:
- `backbone` (`Backbone`): `conv1`, `bn1`, `conv2`, `bn2` (paddle.nn.BatchNorm2D, default
  epsilon 1e-5, random running statistics set in model()), one shared `relu` nn.ReLU called
  twice.
- `input_proj` Conv2D(32, 32, 1); `position_embedding` = `PositionEmbeddingSine` (a layer with
  no parameters, DETR's normalize=True, scale 2*pi, temperature 10000, 16 features per axis,
  sin / cos interleaved, y features first), returning [B, 32, H, W]; both flattened to
  [B, HW, 32] in the root forward.
- `query_embed` = nn.Embedding(6, 32); its `.weight` is read directly (never called as a
  module), as DETR does. The decoder starts from tgt = zeros.
- `transformer` (`Transformer`): `encoder` (`layers` LayerList of 1 `EncoderLayer`, no final
  norm) and `decoder` (`layers` LayerList of 2 `DecoderLayer`, then `norm`). The layers are
  hand-written DETR layers around paddle.nn.MultiHeadAttention (separate q_proj / k_proj /
  v_proj / out_proj Linears, called positionally as (query, key, value)):
    encoder: q = k = src + pos, value = src (positions on queries and keys only);
             src = norm1(src + self_attn(q, k, src)); src = norm2(src + linear2(relu(linear1(src))))
    decoder: q = k = tgt + query_pos; tgt = norm1(tgt + self_attn(q, k, tgt));
             tgt = norm2(tgt + multihead_attn(tgt + query_pos, memory + pos, memory));
             tgt = norm3(tgt + linear2(relu(linear1(tgt))))
  ReLU is F.relu inline in the layers.
- heads: `class_embed` Linear(32, 5); `bbox_embed` (`MLP`: `layers` LayerList of 3 Linears,
  F.relu between, F.sigmoid inline at the end of MLP.forward).

The torch side (port_detr_torch.py) was written independently: nn.Sequential backbone, the
position embedding computed by a plain function, torch.nn.MultiheadAttention(batch_first=True)
with a packed in_proj_weight, a raw nn.Parameter for the queries, nn.Sequential box head.

PADIFF_BUG=paddle_pos_on_values plants this side's bug: the encoder self-attention also gets the
position embedding on its values (value = src + pos instead of src).
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IN_CHANS, IMG = 2, 3, 32
D_MODEL, HEADS, FFN, ENC_LAYERS, DEC_LAYERS, QUERIES, CLASSES = 32, 4, 64, 1, 2, 6, 4
OWN_BUGS = {"paddle_pos_on_values"}
OTHER_BUGS = {"box_no_sigmoid", "backbone_bn_eps"}


class Backbone(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(IN_CHANS, 16, 3, stride=2, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(16)
        self.conv2 = nn.Conv2D(16, 32, 3, stride=2, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(32)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(x)))


class PositionEmbeddingSine(nn.Layer):
    def __init__(self, num_pos_feats=D_MODEL // 2, temperature=10000, scale=2 * math.pi):
        super().__init__()
        self.num_pos_feats, self.temperature, self.scale = num_pos_feats, temperature, scale

    def forward(self, x):
        B, _C, H, W = x.shape
        not_mask = paddle.ones([B, H, W], dtype="float32")
        y_embed = not_mask.cumsum(1)
        x_embed = not_mask.cumsum(2)
        eps = 1e-6
        y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = paddle.arange(self.num_pos_feats, dtype="float32")
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed.unsqueeze(-1) / dim_t
        pos_y = y_embed.unsqueeze(-1) / dim_t
        pos_x = paddle.stack([pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()], axis=4).flatten(3)
        pos_y = paddle.stack([pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()], axis=4).flatten(3)
        return paddle.concat([pos_y, pos_x], axis=3).transpose([0, 3, 1, 2])  # [B, 2F, H, W]


class EncoderLayer(nn.Layer):
    def __init__(self, pos_on_values=False):
        super().__init__()
        self.pos_on_values = pos_on_values
        self.self_attn = nn.MultiHeadAttention(D_MODEL, HEADS)
        self.linear1 = nn.Linear(D_MODEL, FFN)
        self.linear2 = nn.Linear(FFN, D_MODEL)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)

    def forward(self, src, pos):
        q = k = src + pos
        v = src + pos if self.pos_on_values else src
        src = self.norm1(src + self.self_attn(q, k, v))
        return self.norm2(src + self.linear2(F.relu(self.linear1(src))))


class DecoderLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.self_attn = nn.MultiHeadAttention(D_MODEL, HEADS)
        self.multihead_attn = nn.MultiHeadAttention(D_MODEL, HEADS)
        self.linear1 = nn.Linear(D_MODEL, FFN)
        self.linear2 = nn.Linear(FFN, D_MODEL)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)
        self.norm3 = nn.LayerNorm(D_MODEL)

    def forward(self, tgt, memory, pos, query_pos):
        q = k = tgt + query_pos
        tgt = self.norm1(tgt + self.self_attn(q, k, tgt))
        tgt = self.norm2(tgt + self.multihead_attn(tgt + query_pos, memory + pos, memory))
        return self.norm3(tgt + self.linear2(F.relu(self.linear1(tgt))))


class TransformerEncoder(nn.Layer):
    def __init__(self, pos_on_values=False):
        super().__init__()
        self.layers = nn.LayerList([EncoderLayer(pos_on_values) for _ in range(ENC_LAYERS)])

    def forward(self, src, pos):
        for layer in self.layers:
            src = layer(src, pos)
        return src


class TransformerDecoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([DecoderLayer() for _ in range(DEC_LAYERS)])
        self.norm = nn.LayerNorm(D_MODEL)

    def forward(self, tgt, memory, pos, query_pos):
        for layer in self.layers:
            tgt = layer(tgt, memory, pos, query_pos)
        return self.norm(tgt)


class Transformer(nn.Layer):
    def __init__(self, pos_on_values=False):
        super().__init__()
        self.encoder = TransformerEncoder(pos_on_values)
        self.decoder = TransformerDecoder()

    def forward(self, src, pos, query_pos):
        memory = self.encoder(src, pos)
        tgt = paddle.zeros_like(query_pos)
        return self.decoder(tgt, memory, pos, query_pos)


class MLP(nn.Layer):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        dims = [input_dim] + [hidden_dim] * (num_layers - 1)
        self.layers = nn.LayerList([nn.Linear(a, b) for a, b in zip(dims, dims[1:] + [output_dim])])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < len(self.layers) - 1 else layer(x)
        return F.sigmoid(x)


class DETR(nn.Layer):
    def __init__(self, pos_on_values=False):
        super().__init__()
        self.backbone = Backbone()
        self.input_proj = nn.Conv2D(32, D_MODEL, 1)
        self.position_embedding = PositionEmbeddingSine()
        self.query_embed = nn.Embedding(QUERIES, D_MODEL)
        self.transformer = Transformer(pos_on_values)
        self.class_embed = nn.Linear(D_MODEL, CLASSES + 1)
        self.bbox_embed = MLP(D_MODEL, D_MODEL, 4, 3)

    def forward(self, images):
        feat = self.backbone(images)
        pos = self.position_embedding(feat).flatten(2).transpose([0, 2, 1])  # [B, HW, C]
        src = self.input_proj(feat).flatten(2).transpose([0, 2, 1])
        query_pos = self.query_embed.weight.unsqueeze(0).tile([src.shape[0], 1, 1])
        hs = self.transformer(src, pos, query_pos)  # [B, Q, C]
        return paddle.concat([self.class_embed(hs), self.bbox_embed(hs)], axis=-1)


def _randomize_bn(m):
    rng = np.random.default_rng(13)
    for bn in (m.backbone.bn1, m.backbone.bn2):
        c = bn.weight.shape[0]
        bn.weight.set_value(rng.uniform(0.5, 1.5, c).astype("float32"))
        bn.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
        bn._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        bn._variance.set_value(rng.uniform(0.5, 1.5, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_detr paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DETR(pos_on_values=bug == "paddle_pos_on_values")
    _randomize_bn(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(17)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # [B, 6, 9]: 5 class logits then 4 sigmoid box coordinates per query
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny Deformable-DETR encoder over two feature levels (written by "person A").

Inputs: two backbone maps feat0 [2, 16, 6, 8] and feat1 [2, 24, 3, 4] (positional, NCHW, numpy
rng seed 11, standard normal). The levels are NOT square, on purpose (H != W).

Model (width 32, 4 heads of 8, 2 levels, 3 sampling points per level and head, FFN 64, 2
post-norm encoder layers):
- per level: 1x1 conv to 32 channels + GroupNorm(8, 32), flattened to tokens (48 + 12 = 60);
- sine position encoding (DETR style, normalize=True, scale 2*pi, temperature 10000, 16 features
  per axis, Deformable-DETR's half-pixel offset -0.5, eps 1e-6, sin / cos interleaved, y then
  x), plus a learned level embedding;
- reference points: pixel centres ((j + 0.5) / W, (i + 0.5) / H) of each token, times the valid
  ratios (all 1 here: no padding), for every level;
- layer: src = LN1(src + MSDA(src + pos, ref, src)); src = LN2(src + W2 gelu(W1 src)) (exact
  erf GELU);
- MSDA (multi-scale deformable attention): value = value_proj(src) split in 4 heads; offsets =
  Linear(query) in PIXELS of each level, divided by (W_l, H_l) and added to the reference point;
  attention weights = Linear(query) with ONE softmax over the 2 * 3 (level, point) pairs of a
  head; bilinear sampling with zero padding at the sampling locations in every level; weighted
  sum; output_proj.
Output: the encoder memory [2, 60, 32].

Paddle idioms on this side (PaddleDetection style):
- root `DeformableEncoderNet`: `input_proj` (LayerList of Sequential(Conv2D 1x1, GroupNorm)),
  `position_embedding` (PositionEmbedding, called once per level with a bool mask [B, H, W]; it
  returns CHANNEL-LAST [B, H, W, 32]), `level_embed` (nn.Embedding(2, 32), its weight indexed,
  never called), `encoder` (DeformableTransformerEncoder, which computes the reference points in
  a static method and iterates its LayerList `layers`).
- `DeformableTransformerEncoderLayer`: `self_attn`, `dropout1`, `norm1`, `linear1`, `dropout2`,
  `linear2`, `dropout3`, `norm2`; the GELU is F.gelu inline in `forward_ffn`.
- `MSDeformableAttention` registers `sampling_offsets` Linear(32, 48) and `attention_weights`
  Linear(32, 24) SEPARATELY, ordered [heads, LEVELS, POINTS(, xy)], then `value_proj`,
  `output_proj`. The sampling itself is a module-level function
  (`deformable_attention_core_func`): the value is split per level INLINE (paddle.split), and
  grid_sample is called with align_corners=False on the grid 2 * loc - 1 (paddle's default is
  align_corners=True, so it is passed explicitly).
- model() gives the norms, biases, level embedding and sampling-offset biases trained-looking
  values (seeded), the offset bias starting from Deformable DETR's radial grid pattern.

The torch side (port_deformable_attn_torch.py) was written independently: one packed
sampling Linear ordered [heads, POINTS, LEVELS], a value-split module, align_corners=True
sampling with its own grid conversion, nn.GELU inside an nn.Sequential FFN, channel-first
position encoding, a level-embedding Parameter.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_pos_no_half_offset -> the PositionEmbedding is built without Deformable DETR's offset
                               -0.5 (PaddleDetection's default offset 0.0, the DETR formula), so
                               every normalised coordinate is shifted by half a pixel
  paddle_ffn_gelu_tanh      -> forward_ffn calls F.gelu(..., approximate=True), the tanh
                               approximation, instead of the exact erf GELU (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

D_MODEL, N_HEADS, N_LEVELS, N_POINTS, D_FFN, N_LAYERS = 32, 4, 2, 3, 64, 2
IN_CHANNELS = (16, 24)
FEAT_SHAPES = ((6, 8), (3, 4))
BATCH = 2
OWN_BUGS = {"paddle_pos_no_half_offset", "paddle_ffn_gelu_tanh"}
OTHER_BUGS = {"torch_grid_no_rescale", "torch_split_no_transpose"}


class PositionEmbedding(nn.Layer):
    def __init__(self, num_pos_feats=16, temperature=10000, normalize=True, scale=2 * math.pi, offset=0.0,
                 eps=1e-6):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        self.scale = scale
        self.offset = offset
        self.eps = eps

    def forward(self, mask):
        # mask [B, H, W] bool, True = valid pixel
        not_mask = mask.astype("float32")
        y_embed = not_mask.cumsum(1)
        x_embed = not_mask.cumsum(2)
        if self.normalize:
            y_embed = (y_embed + self.offset) / (y_embed[:, -1:, :] + self.eps) * self.scale
            x_embed = (x_embed + self.offset) / (x_embed[:, :, -1:] + self.eps) * self.scale
        dim_t = 2 * (paddle.arange(self.num_pos_feats) // 2).astype("float32")
        dim_t = paddle.pow(paddle.to_tensor(float(self.temperature)), dim_t / self.num_pos_feats)
        pos_x = x_embed.unsqueeze(-1) / dim_t
        pos_y = y_embed.unsqueeze(-1) / dim_t
        pos_x = paddle.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), axis=4).flatten(3)
        pos_y = paddle.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), axis=4).flatten(3)
        return paddle.concat((pos_y, pos_x), axis=3)  # [B, H, W, 2 * num_pos_feats]


def deformable_attention_core_func(value, value_spatial_shapes, sampling_locations, attention_weights):
    """value [B, S, nH, c]; sampling_locations [B, Lq, nH, L, P, 2] in [0, 1];
    attention_weights [B, Lq, nH, L, P]. Returns [B, Lq, nH * c]."""
    bs, _, n_head, c = value.shape
    _, len_q, _, n_levels, n_points, _ = sampling_locations.shape
    split_shape = [h * w for h, w in value_spatial_shapes]
    value_list = value.split(split_shape, axis=1)
    sampling_grids = 2 * sampling_locations - 1
    sampling_value_list = []
    for level, (h, w) in enumerate(value_spatial_shapes):
        # [B, H*W, nH, c] -> [B, H*W, nH*c] -> [B, nH*c, H*W] -> [B*nH, c, H, W]
        value_l = value_list[level].flatten(2).transpose([0, 2, 1]).reshape([bs * n_head, c, h, w])
        # [B, Lq, nH, P, 2] -> [B, nH, Lq, P, 2] -> [B*nH, Lq, P, 2]
        grid_l = sampling_grids[:, :, :, level].transpose([0, 2, 1, 3, 4]).flatten(0, 1)
        sampled = F.grid_sample(value_l, grid_l, mode="bilinear", padding_mode="zeros", align_corners=False)
        sampling_value_list.append(sampled)  # [B*nH, c, Lq, P]
    # [B, Lq, nH, L, P] -> [B, nH, Lq, L, P] -> [B*nH, 1, Lq, L*P]
    attention_weights = attention_weights.transpose([0, 2, 1, 3, 4]).reshape(
        [bs * n_head, 1, len_q, n_levels * n_points])
    output = (paddle.stack(sampling_value_list, axis=-2).flatten(-2) * attention_weights).sum(-1)
    return output.reshape([bs, n_head * c, len_q]).transpose([0, 2, 1])


class MSDeformableAttention(nn.Layer):
    def __init__(self, embed_dim=D_MODEL, num_heads=N_HEADS, num_levels=N_LEVELS, num_points=N_POINTS):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.num_levels, self.num_points = num_levels, num_points
        self.head_dim = embed_dim // num_heads
        self.total_points = num_heads * num_levels * num_points
        self.sampling_offsets = nn.Linear(embed_dim, self.total_points * 2)
        self.attention_weights = nn.Linear(embed_dim, self.total_points)
        self.value_proj = nn.Linear(embed_dim, embed_dim)
        self.output_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, reference_points, value, value_spatial_shapes):
        # query / value [B, S, C]; reference_points [B, S, L, 2] (x, y) in [0, 1]
        bs, len_q = query.shape[:2]
        len_v = value.shape[1]
        value = self.value_proj(value).reshape([bs, len_v, self.num_heads, self.head_dim])
        sampling_offsets = self.sampling_offsets(query).reshape(
            [bs, len_q, self.num_heads, self.num_levels, self.num_points, 2])
        attention_weights = self.attention_weights(query).reshape(
            [bs, len_q, self.num_heads, self.num_levels * self.num_points])
        attention_weights = F.softmax(attention_weights).reshape(
            [bs, len_q, self.num_heads, self.num_levels, self.num_points])
        offset_normalizer = paddle.to_tensor([[w, h] for h, w in value_spatial_shapes], dtype="float32")
        sampling_locations = reference_points.reshape([bs, len_q, 1, self.num_levels, 1, 2]) + \
            sampling_offsets / offset_normalizer.reshape([1, 1, 1, self.num_levels, 1, 2])
        output = deformable_attention_core_func(value, value_spatial_shapes, sampling_locations, attention_weights)
        return self.output_proj(output)


class DeformableTransformerEncoderLayer(nn.Layer):
    def __init__(self, d_model=D_MODEL, dim_feedforward=D_FFN, dropout=0.1, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.self_attn = MSDeformableAttention(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout2 = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.dropout3 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)

    @staticmethod
    def with_pos_embed(tensor, pos):
        return tensor if pos is None else tensor + pos

    def forward_ffn(self, src):
        src2 = self.linear2(self.dropout2(F.gelu(self.linear1(src), approximate=self.gelu_tanh)))
        src = src + self.dropout3(src2)
        return self.norm2(src)

    def forward(self, src, reference_points, spatial_shapes, pos_embed=None):
        src2 = self.self_attn(self.with_pos_embed(src, pos_embed), reference_points, src, spatial_shapes)
        src = self.norm1(src + self.dropout1(src2))
        return self.forward_ffn(src)


class DeformableTransformerEncoder(nn.Layer):
    def __init__(self, num_layers=N_LAYERS, gelu_tanh=False):
        super().__init__()
        self.layers = nn.LayerList([DeformableTransformerEncoderLayer(gelu_tanh=gelu_tanh) for _ in range(num_layers)])

    @staticmethod
    def get_reference_points(spatial_shapes, valid_ratios):
        # valid_ratios [B, L, 2] (w ratio, h ratio)
        reference_points_list = []
        for lvl, (h, w) in enumerate(spatial_shapes):
            ref_y, ref_x = paddle.meshgrid(paddle.linspace(0.5, h - 0.5, h), paddle.linspace(0.5, w - 0.5, w))
            ref_y = ref_y.flatten().unsqueeze(0) / (valid_ratios[:, lvl, 1:2] * h)
            ref_x = ref_x.flatten().unsqueeze(0) / (valid_ratios[:, lvl, 0:1] * w)
            reference_points_list.append(paddle.stack((ref_x, ref_y), axis=-1))
        reference_points = paddle.concat(reference_points_list, 1).unsqueeze(2)  # [B, S, 1, 2]
        return reference_points * valid_ratios.unsqueeze(1)  # [B, S, L, 2]

    def forward(self, src, spatial_shapes, pos_embed, valid_ratios):
        reference_points = self.get_reference_points(spatial_shapes, valid_ratios)
        for layer in self.layers:
            src = layer(src, reference_points, spatial_shapes, pos_embed)
        return src


def get_valid_ratio(mask):
    mask = mask.astype("float32")
    _, h, w = mask.shape
    valid_h = paddle.sum(mask[:, :, 0], 1)
    valid_w = paddle.sum(mask[:, 0, :], 1)
    return paddle.stack([valid_w / w, valid_h / h], -1)  # [B, 2]


class DeformableEncoderNet(nn.Layer):
    def __init__(self, pos_offset=-0.5, gelu_tanh=False):
        super().__init__()
        self.input_proj = nn.LayerList([
            nn.Sequential(nn.Conv2D(c, D_MODEL, 1), nn.GroupNorm(8, D_MODEL)) for c in IN_CHANNELS])
        self.position_embedding = PositionEmbedding(D_MODEL // 2, normalize=True, offset=pos_offset)
        self.level_embed = nn.Embedding(N_LEVELS, D_MODEL)
        self.encoder = DeformableTransformerEncoder(N_LAYERS, gelu_tanh=gelu_tanh)

    def forward(self, feat0, feat1):
        src_flatten, lvl_pos_embed_flatten, spatial_shapes, valid_ratios = [], [], [], []
        for level, feat in enumerate((feat0, feat1)):
            src = self.input_proj[level](feat)
            bs, _, h, w = src.shape
            mask = paddle.ones([bs, h, w], dtype="bool")
            pos_embed = self.position_embedding(mask).flatten(1, 2)  # [B, H*W, C]
            lvl_pos_embed_flatten.append(pos_embed + self.level_embed.weight[level])
            src_flatten.append(src.flatten(2).transpose([0, 2, 1]))
            spatial_shapes.append((h, w))
            valid_ratios.append(get_valid_ratio(mask))
        src_flatten = paddle.concat(src_flatten, 1)
        lvl_pos_embed_flatten = paddle.concat(lvl_pos_embed_flatten, 1)
        valid_ratios = paddle.stack(valid_ratios, 1)  # [B, L, 2]
        return self.encoder(src_flatten, spatial_shapes, lvl_pos_embed_flatten, valid_ratios)


def _radial_grid_bias(rng):
    """Deformable DETR's sampling-offset bias init (head h points along angle 2*pi*h/nH, point p
    at distance p + 1 pixels), plus seeded noise as if trained. Layout [heads, levels, points, 2]."""
    thetas = np.arange(N_HEADS, dtype="float64") * (2.0 * math.pi / N_HEADS)
    grid = np.stack([np.cos(thetas), np.sin(thetas)], -1)
    grid = grid / np.abs(grid).max(-1, keepdims=True)
    grid = np.tile(grid[:, None, None, :], (1, N_LEVELS, N_POINTS, 1))
    grid *= np.arange(1, N_POINTS + 1)[None, None, :, None]
    grid += rng.normal(0.0, 0.25, grid.shape)
    return grid.reshape(-1).astype("float32")


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.LayerNorm, nn.GroupNorm)):
            layer.weight.set_value(rng.uniform(0.7, 1.3, layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.15, layer.bias.shape).astype("float32"))
        elif isinstance(layer, MSDeformableAttention):
            layer.sampling_offsets.weight.set_value(
                rng.normal(0.0, 0.06, layer.sampling_offsets.weight.shape).astype("float32"))
            layer.sampling_offsets.bias.set_value(_radial_grid_bias(rng))
            layer.attention_weights.weight.set_value(
                rng.normal(0.0, 0.15, layer.attention_weights.weight.shape).astype("float32"))
            layer.attention_weights.bias.set_value(
                rng.normal(0.0, 0.5, layer.attention_weights.bias.shape).astype("float32"))
            for lin in (layer.value_proj, layer.output_proj):
                lin.bias.set_value(rng.normal(0.0, 0.1, lin.bias.shape).astype("float32"))
        elif isinstance(layer, DeformableTransformerEncoderLayer):
            for lin in (layer.linear1, layer.linear2):
                lin.bias.set_value(rng.normal(0.0, 0.1, lin.bias.shape).astype("float32"))
        elif isinstance(layer, nn.Conv2D):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    m.level_embed.weight.set_value(rng.normal(0.0, 0.5, m.level_embed.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deformable_attn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DeformableEncoderNet(pos_offset=0.0 if bug == "paddle_pos_no_half_offset" else -0.5,
                             gelu_tanh=bug == "paddle_ffn_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _feats():
    rng = np.random.default_rng(11)
    return [rng.standard_normal((BATCH, c, h, w)).astype("float32") for c, (h, w) in zip(IN_CHANNELS, FEAT_SHAPES)]


def inputs():
    return tuple(paddle.to_tensor(a) for a in _feats()), {}


def loss(output):
    # encoder memory [2, 60, 32]
    return (output**2).mean()

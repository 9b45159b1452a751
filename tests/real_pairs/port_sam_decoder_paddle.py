"""Hand-written port, paddle side: a tiny Segment-Anything mask decoder (written by "person A").

Inputs (positional, numpy rng seed 31): image_embeddings [2, 32, 8, 8], image_pe [1, 32, 8, 8]
(random-Fourier sin / cos features of the 8x8 grid, as SAM's PositionEmbeddingRandom gives),
sparse_prompt_embeddings [2, 3, 32] (point / box tokens) and dense_prompt_embeddings
[2, 32, 8, 8]. Output: the tuple (masks [2, 3, 32, 32], iou_pred [2, 3]) of multimask mode
(mask token 0 and its IoU are dropped, as SAM does with multimask_output=True).

The math (SAM's MaskDecoder + TwoWayTransformer, width 32, 4 mask tokens):
  tokens = cat(iou_token [1, 32], mask_tokens [4, 32]) expanded to the batch, then cat with the
           sparse prompt tokens -> [B, 8, 32]
  src    = image_embeddings + dense_prompt_embeddings, flattened to [B, 64, 32]; pos = image_pe
  two-way transformer, depth 2, 4 heads, MLP 64 (ReLU); per layer:
    self-attn on the tokens (layer 0: no PE and no residual, skip_first_layer_pe), norm1;
    token->image cross attention (q = tokens + token PE, k = image + image PE, v = image), norm2;
    MLP, norm3;
    image->token cross attention (q = image + image PE, k = tokens + token PE, v = tokens) added
    to the IMAGE stream, norm4.
    The cross attentions project to 16 channels (attention downsample rate 2: 4 heads of 4).
  then a final token->image attention (+ PE), norm_final_attn. LayerNorm eps 1e-5.
  upscaling: ConvTranspose 2x2 s2 (32 -> 8), LayerNorm2d(8, eps 1e-6), GELU, ConvTranspose 2x2 s2
           (8 -> 4), GELU -> [B, 4, 32, 32]
  hypernetworks: mask token i -> its own 3-layer MLP (32, 32, 4; ReLU) -> [B, 4, 4];
           masks = hyper_in @ upscaled.view(B, 4, 1024)
  iou head: 3-layer MLP on the iou token (32, 32, 4; ReLU).

Paddle idioms on this side:
- root `SamMaskDecoder` registers `transformer` first, then `iou_token` [1, 32] and
  `mask_tokens` [4, 32] as TWO create_parameter tensors, then `output_upscaling` = nn.Sequential(
  Conv2DTranspose, LayerNorm2D, nn.GELU, Conv2DTranspose, nn.GELU), `output_hypernetworks_mlps`
  (LayerList of 4 `MLP`, called one per mask token) and `iou_prediction_head` (`MLP`). The image
  stream is flattened to [B, HW, C] HERE, before the transformer.
- `LayerNorm2D` is a subclass of nn.LayerNorm over the channel axis: transpose NCHW -> NHWC, the
  parent's forward, transpose back.
- `MLP`: `layers` LayerList of nn.Linear, F.relu inline between them.
- `TwoWayTransformer`: `layers` (LayerList of `TwoWayAttentionBlock`), `final_attn_token_to_image`,
  `norm_final_attn`; takes [B, HW, C] image tokens.
- `TwoWayAttentionBlock` registers `self_attn`, `norm1`, `cross_attn_token_to_image`, `norm2`,
  `mlp_fc1`, `mlp_fc2` (the MLP is INLINE: two Linears in the block, F.relu between), `norm3`,
  `norm4`, `cross_attn_image_to_token`.
- `Attention`: separate `q_proj`, `k_proj`, `v_proj`, `out_proj` Linears; softmax(q k^T * scale)
  written out by hand.
- model() gives the norms, biases and tokens trained-looking values (seeded), so nothing is an
  identity.

The torch side (port_sam_decoder_torch.py) was written independently: one packed in_proj per
attention with F.scaled_dot_product_attention, an MLPBlock module, a hand-written channel-first
LayerNorm2d inside an upscaler module with inline GELU, the four hypernetwork MLPs as ONE batched
weight per layer, and iou + mask tokens as ONE nn.Embedding.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_cross_attn_scale -> Attention computes its softmax scale from the EMBEDDING width per
                             head (32 / 4 = 8) instead of the internal width per head (16 / 4 =
                             4): 1/sqrt(8) instead of 1/sqrt(4) in every downsampled cross
                             attention (the self attentions are unaffected)
  paddle_gelu_tanh        -> the first GELU of output_upscaling is nn.GELU(approximate=True)
                             (tanh approximation) instead of the exact erf GELU
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

EMBED, HEADS, MLP_DIM, DEPTH, DOWNSAMPLE = 32, 4, 64, 2, 2
NUM_MASK_TOKENS = 4  # 3 multimask outputs + 1
IOU_HIDDEN = 32
GRID, N_SPARSE, BATCH = 8, 3, 2
OWN_BUGS = {"paddle_cross_attn_scale", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_final_attn_no_pe", "torch_ln2d_unbiased_var"}


class Attention(nn.Layer):
    def __init__(self, embedding_dim, num_heads, downsample_rate=1, scale_from_embed=False):
        super().__init__()
        self.internal_dim = embedding_dim // downsample_rate
        self.num_heads = num_heads
        self.q_proj = nn.Linear(embedding_dim, self.internal_dim)
        self.k_proj = nn.Linear(embedding_dim, self.internal_dim)
        self.v_proj = nn.Linear(embedding_dim, self.internal_dim)
        self.out_proj = nn.Linear(self.internal_dim, embedding_dim)
        per_head = (embedding_dim if scale_from_embed else self.internal_dim) // num_heads
        self.scale = per_head**-0.5

    def _separate_heads(self, x):
        b, n, c = x.shape
        return x.reshape([b, n, self.num_heads, c // self.num_heads]).transpose([0, 2, 1, 3])

    def _recombine_heads(self, x):
        b, h, n, d = x.shape
        return x.transpose([0, 2, 1, 3]).reshape([b, n, h * d])

    def forward(self, q, k, v):
        q = self._separate_heads(self.q_proj(q))
        k = self._separate_heads(self.k_proj(k))
        v = self._separate_heads(self.v_proj(v))
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(attn, axis=-1)
        out = self._recombine_heads(paddle.matmul(attn, v))
        return self.out_proj(out)


class TwoWayAttentionBlock(nn.Layer):
    def __init__(self, embedding_dim, num_heads, mlp_dim, downsample_rate, skip_first_layer_pe, scale_bug):
        super().__init__()
        self.skip_first_layer_pe = skip_first_layer_pe
        self.self_attn = Attention(embedding_dim, num_heads, 1, scale_bug)
        self.norm1 = nn.LayerNorm(embedding_dim)
        self.cross_attn_token_to_image = Attention(embedding_dim, num_heads, downsample_rate, scale_bug)
        self.norm2 = nn.LayerNorm(embedding_dim)
        self.mlp_fc1 = nn.Linear(embedding_dim, mlp_dim)
        self.mlp_fc2 = nn.Linear(mlp_dim, embedding_dim)
        self.norm3 = nn.LayerNorm(embedding_dim)
        self.norm4 = nn.LayerNorm(embedding_dim)
        self.cross_attn_image_to_token = Attention(embedding_dim, num_heads, downsample_rate, scale_bug)

    def forward(self, queries, keys, query_pe, key_pe):
        if self.skip_first_layer_pe:
            queries = self.self_attn(queries, queries, queries)
        else:
            q = queries + query_pe
            queries = queries + self.self_attn(q, q, queries)
        queries = self.norm1(queries)

        q = queries + query_pe
        k = keys + key_pe
        queries = self.norm2(queries + self.cross_attn_token_to_image(q, k, keys))

        queries = self.norm3(queries + self.mlp_fc2(F.relu(self.mlp_fc1(queries))))

        q = queries + query_pe
        k = keys + key_pe
        keys = self.norm4(keys + self.cross_attn_image_to_token(k, q, queries))
        return queries, keys


class TwoWayTransformer(nn.Layer):
    def __init__(self, depth, embedding_dim, num_heads, mlp_dim, downsample_rate, scale_bug):
        super().__init__()
        self.layers = nn.LayerList([
            TwoWayAttentionBlock(embedding_dim, num_heads, mlp_dim, downsample_rate, i == 0, scale_bug)
            for i in range(depth)
        ])
        self.final_attn_token_to_image = Attention(embedding_dim, num_heads, downsample_rate, scale_bug)
        self.norm_final_attn = nn.LayerNorm(embedding_dim)

    def forward(self, image_tokens, image_pe, point_embedding):
        # image_tokens, image_pe: [B, HW, C]; point_embedding: [B, N, C]
        queries, keys = point_embedding, image_tokens
        for layer in self.layers:
            queries, keys = layer(queries, keys, point_embedding, image_pe)
        q = queries + point_embedding
        k = keys + image_pe
        queries = self.norm_final_attn(queries + self.final_attn_token_to_image(q, k, keys))
        return queries, keys


class LayerNorm2D(nn.LayerNorm):
    """Channel LayerNorm of an NCHW map, through the channel-last nn.LayerNorm."""

    def forward(self, x):
        x = x.transpose([0, 2, 3, 1])
        x = super().forward(x)
        return x.transpose([0, 3, 1, 2])


class MLP(nn.Layer):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        dims = [input_dim] + [hidden_dim] * (num_layers - 1) + [output_dim]
        self.layers = nn.LayerList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])

    def forward(self, x):
        n = len(self.layers)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n - 1:
                x = F.relu(x)
        return x


class SamMaskDecoder(nn.Layer):
    def __init__(self, scale_bug=False, gelu_tanh=False):
        super().__init__()
        c = EMBED
        self.transformer = TwoWayTransformer(DEPTH, c, HEADS, MLP_DIM, DOWNSAMPLE, scale_bug)
        normal = nn.initializer.Normal(0.0, 1.0)
        self.iou_token = self.create_parameter([1, c], default_initializer=normal)
        self.mask_tokens = self.create_parameter([NUM_MASK_TOKENS, c], default_initializer=normal)
        self.output_upscaling = nn.Sequential(
            nn.Conv2DTranspose(c, c // 4, kernel_size=2, stride=2),
            LayerNorm2D(c // 4, epsilon=1e-6),
            nn.GELU(approximate=gelu_tanh),
            nn.Conv2DTranspose(c // 4, c // 8, kernel_size=2, stride=2),
            nn.GELU(),
        )
        self.output_hypernetworks_mlps = nn.LayerList([MLP(c, c, c // 8, 3) for _ in range(NUM_MASK_TOKENS)])
        self.iou_prediction_head = MLP(c, IOU_HIDDEN, NUM_MASK_TOKENS, 3)

    def forward(self, image_embeddings, image_pe, sparse_prompt_embeddings, dense_prompt_embeddings):
        b = sparse_prompt_embeddings.shape[0]
        output_tokens = paddle.concat([self.iou_token, self.mask_tokens], axis=0)
        output_tokens = output_tokens.unsqueeze(0).expand([b, -1, -1])
        tokens = paddle.concat([output_tokens, sparse_prompt_embeddings], axis=1)

        src = image_embeddings + dense_prompt_embeddings
        _, c, h, w = src.shape
        pos = paddle.expand(image_pe, [b, c, h, w])
        src = src.flatten(2).transpose([0, 2, 1])
        pos = pos.flatten(2).transpose([0, 2, 1])

        hs, src = self.transformer(src, pos, tokens)
        iou_token_out = hs[:, 0, :]
        mask_tokens_out = hs[:, 1:1 + NUM_MASK_TOKENS, :]

        src = src.transpose([0, 2, 1]).reshape([b, c, h, w])
        upscaled = self.output_upscaling(src)
        hyper_in = paddle.stack(
            [mlp(mask_tokens_out[:, i, :]) for i, mlp in enumerate(self.output_hypernetworks_mlps)], axis=1)
        _, cu, hu, wu = upscaled.shape
        masks = paddle.matmul(hyper_in, upscaled.reshape([b, cu, hu * wu])).reshape([b, -1, hu, wu])
        iou_pred = self.iou_prediction_head(iou_token_out)
        return masks[:, 1:, :, :], iou_pred[:, 1:]


def _trained_look(m):
    rng = np.random.default_rng(23)
    for name, p in m.named_parameters():
        shape = p.shape
        if isinstance(p, paddle.Tensor) and name.endswith("bias"):
            p.set_value(rng.normal(0.0, 0.1, shape).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.15, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
    m.iou_token.set_value(rng.normal(0.0, 1.0, m.iou_token.shape).astype("float32"))
    m.mask_tokens.set_value(rng.normal(0.0, 1.0, m.mask_tokens.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_sam_decoder paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SamMaskDecoder(scale_bug=bug == "paddle_cross_attn_scale", gelu_tanh=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(31)
    image = rng.standard_normal((BATCH, EMBED, GRID, GRID)).astype("float32")
    # random-Fourier positional encoding of the grid (SAM's PositionEmbeddingRandom)
    gauss = rng.standard_normal((2, EMBED // 2))
    coords = (np.arange(GRID) + 0.5) / GRID
    yy, xx = np.meshgrid(coords, coords, indexing="ij")
    grid = np.stack([xx, yy], axis=-1) * 2 - 1  # [H, W, 2]
    proj = 2 * np.pi * grid @ gauss  # [H, W, C/2]
    pe = np.concatenate([np.sin(proj), np.cos(proj)], axis=-1).transpose(2, 0, 1)[None].astype("float32")
    sparse = rng.standard_normal((BATCH, N_SPARSE, EMBED)).astype("float32")
    dense = (0.3 * rng.standard_normal((BATCH, EMBED, GRID, GRID))).astype("float32")
    return image, pe, sparse, dense


def inputs():
    return tuple(paddle.to_tensor(a) for a in _arrays()), {}


def loss(output):
    masks, iou_pred = output
    return (masks**2).mean() + (iou_pred**2).mean()

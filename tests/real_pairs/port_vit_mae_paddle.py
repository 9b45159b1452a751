"""Hand-written port, paddle side: a tiny masked autoencoder (MAE) pre-training forward (written by
"person A").

Sizes: images [2, 3, 16, 16], patch 4 -> 16 patches; encoder width 32, 2 pre-LN blocks, 4 heads
of 8, MLP 64 (erf GELU); decoder width 24, 1 block, 3 heads of 8, MLP 48; LayerNorm eps 1e-6;
prediction Linear(24, 48) = 4 * 4 * 3 pixels per patch; norm_pix_loss with eps 1e-6.

The masking is NOT random: the second input `ids_shuffle` [2, 16] (int64, one fixed permutation
per image, what MAE's `argsort(noise)` would give) says the order; the first KEEP = 8 patches of
that order are kept (mask ratio 0.5), the inverse permutation `argsort(ids_shuffle)` unshuffles
the decoder sequence.

Paddle idioms on this side:
- root `MAEPretrainer` registers `decoder` FIRST, then `encoder`, then `recon_loss` (the call
  order is encoder, decoder, recon_loss). forward(imgs, ids_shuffle): the binary mask
  (1 = removed) is built inline (zeros for the first 8 of the shuffled order, ones after,
  unshuffled with take_along_axis by argsort(ids_shuffle)); returns (loss, pred, mask) like MAE.
- the fixed 2-D sin-cos position embeddings are computed in NUMPY at init (MAE's
  get_2d_sincos_pos_embed, with the zero row of the class token) and registered as
  non-persistable buffers `encoder.pos_embed` [1, 17, 32] and `decoder.pos_embed` [1, 17, 24].
- `MAEEncoder`: `patch_embed` nn.Conv2D(3, 32, 4, stride=4), `cls_token` create_parameter
  [1, 1, 32], `blocks` LayerList of `Block`, `norm`; the kept patches are picked with
  paddle.take_along_axis(x, ids_keep[..., None] tiled, axis=1).
- `Block` registers `attn` and `mlp` before `norm1` / `norm2`; `Attention` has SEPARATE
  `q_proj`, `k_proj`, `v_proj` Linears ([in, out] weights) and `out_proj`, explicit matmul +
  F.softmax; `FeedForward` = `fc1`, F.gelu inline, `fc2`.
- `MAEDecoder`: `embed` Linear(32, 24), `mask_token` [1, 1, 24], `blocks`, `norm`, `pred`;
  appends the mask tokens after the 8 kept tokens (class token kept apart) and unshuffles with
  take_along_axis by ids_restore = paddle.argsort(ids_shuffle, axis=1).
- `MaskedPatchLoss` (`recon_loss`): patchify [N, 3, 16, 16] -> [N, 16, 48] (p, q, c order, as
  MAE), per-patch mean / variance (unbiased=False) normalised target, mean squared error per
  patch, averaged over the REMOVED patches only: (loss * mask).sum() / mask.sum().

The torch side (port_vit_mae_torch.py) was written independently (timm / MAE reference style:
fused qkv, the sin-cos table computed in torch, a scatter-built inverse permutation).

PADIFF_BUG plants this side's bugs (the torch side's names are accepted and ignored; any other
name raises ValueError):
  paddle_sincos_swapped -> the 1-D sin-cos helper concatenates [cos, sin] instead of [sin, cos],
                           so both fixed position tables (encoder and decoder) have their halves
                           swapped per axis
  loss_all_patches      -> the reconstruction loss is averaged over ALL 16 patches
                           (loss.mean()) instead of the removed ones only
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH = 16, 4, 3
GRID = IMG // PATCH  # 4
NUM_PATCHES = GRID * GRID  # 16
KEEP = 8
ENC_DIM, ENC_HEADS, ENC_DEPTH = 32, 4, 2
DEC_DIM, DEC_HEADS, DEC_DEPTH = 24, 3, 1
MLP_RATIO = 2
LN_EPS = 1e-6
PIX_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_sincos_swapped", "loss_all_patches"}
OTHER_BUGS = {"unshuffle_with_perm"}


# --- MAE's util/pos_embed.py, numpy -------------------------------------------------------------
def get_1d_sincos_pos_embed_from_grid(embed_dim, pos, swap=False):
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000**omega  # (D/2,)
    pos = pos.reshape(-1)  # (M,)
    out = np.einsum("m,d->md", pos, omega)  # (M, D/2)
    emb_sin, emb_cos = np.sin(out), np.cos(out)
    if swap:
        return np.concatenate([emb_cos, emb_sin], axis=1)
    return np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)


def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False, swap=False):
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0).reshape([2, 1, grid_size, grid_size])
    emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0], swap)  # (H*W, D/2)
    emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1], swap)
    pos_embed = np.concatenate([emb_h, emb_w], axis=1)  # (H*W, D)
    if cls_token:
        pos_embed = np.concatenate([np.zeros([1, embed_dim]), pos_embed], axis=0)
    return pos_embed


# --- modules ------------------------------------------------------------------------------------
class Attention(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def _heads(self, x):
        b, n, _ = x.shape
        return x.reshape([b, n, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.out_proj(out)


class FeedForward(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.attn = Attention(dim, num_heads)
        self.mlp = FeedForward(dim, dim * MLP_RATIO)
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class MAEEncoder(nn.Layer):
    def __init__(self, swap=False):
        super().__init__()
        self.patch_embed = nn.Conv2D(IN_CH, ENC_DIM, PATCH, stride=PATCH)
        self.cls_token = self.create_parameter([1, 1, ENC_DIM], default_initializer=nn.initializer.Normal(0.0, 0.2))
        pe = get_2d_sincos_pos_embed(ENC_DIM, GRID, cls_token=True, swap=swap)
        self.register_buffer("pos_embed", paddle.to_tensor(pe[None].astype("float32")), persistable=False)
        self.blocks = nn.LayerList([Block(ENC_DIM, ENC_HEADS) for _ in range(ENC_DEPTH)])
        self.norm = nn.LayerNorm(ENC_DIM, epsilon=LN_EPS)

    def forward(self, imgs, ids_shuffle):
        x = self.patch_embed(imgs).flatten(2).transpose([0, 2, 1])  # [N, 16, 32]
        x = x + self.pos_embed[:, 1:, :]
        ids_keep = ids_shuffle[:, :KEEP]
        x = paddle.take_along_axis(x, ids_keep.unsqueeze(-1).tile([1, 1, ENC_DIM]), axis=1)
        cls = (self.cls_token + self.pos_embed[:, :1, :]).expand([x.shape[0], -1, -1])
        x = paddle.concat([cls, x], axis=1)  # [N, 9, 32]
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


class MAEDecoder(nn.Layer):
    def __init__(self, swap=False):
        super().__init__()
        self.embed = nn.Linear(ENC_DIM, DEC_DIM)
        self.mask_token = self.create_parameter([1, 1, DEC_DIM], default_initializer=nn.initializer.Normal(0.0, 0.2))
        pe = get_2d_sincos_pos_embed(DEC_DIM, GRID, cls_token=True, swap=swap)
        self.register_buffer("pos_embed", paddle.to_tensor(pe[None].astype("float32")), persistable=False)
        self.blocks = nn.LayerList([Block(DEC_DIM, DEC_HEADS) for _ in range(DEC_DEPTH)])
        self.norm = nn.LayerNorm(DEC_DIM, epsilon=LN_EPS)
        self.pred = nn.Linear(DEC_DIM, PATCH * PATCH * IN_CH)

    def forward(self, latent, ids_shuffle):
        x = self.embed(latent)  # [N, 9, 24]
        n = x.shape[0]
        ids_restore = paddle.argsort(ids_shuffle, axis=1)
        mask_tokens = self.mask_token.tile([n, NUM_PATCHES + 1 - x.shape[1], 1])
        x_ = paddle.concat([x[:, 1:, :], mask_tokens], axis=1)  # no cls token
        x_ = paddle.take_along_axis(x_, ids_restore.unsqueeze(-1).tile([1, 1, DEC_DIM]), axis=1)
        x = paddle.concat([x[:, :1, :], x_], axis=1)
        x = x + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        x = self.pred(self.norm(x))
        return x[:, 1:, :]  # [N, 16, 48]


class MaskedPatchLoss(nn.Layer):
    def __init__(self, norm_pix=True, all_patches=False):
        super().__init__()
        self.norm_pix = norm_pix
        self.all_patches = all_patches

    @staticmethod
    def patchify(imgs):
        n = imgs.shape[0]
        x = imgs.reshape([n, IN_CH, GRID, PATCH, GRID, PATCH])
        x = x.transpose([0, 2, 4, 3, 5, 1])  # n h w p q c
        return x.reshape([n, NUM_PATCHES, PATCH * PATCH * IN_CH])

    def forward(self, imgs, pred, mask):
        target = self.patchify(imgs)
        if self.norm_pix:
            mean = target.mean(axis=-1, keepdim=True)
            var = target.var(axis=-1, keepdim=True, unbiased=False)
            target = (target - mean) / (var + PIX_EPS) ** 0.5
        loss = ((pred - target) ** 2).mean(axis=-1)  # [N, L], mean loss per patch
        if self.all_patches:
            return loss.mean()
        return (loss * mask).sum() / mask.sum()  # mean loss on removed patches


class MAEPretrainer(nn.Layer):
    def __init__(self, swap=False, all_patches=False):
        super().__init__()
        self.decoder = MAEDecoder(swap)
        self.encoder = MAEEncoder(swap)
        self.recon_loss = MaskedPatchLoss(norm_pix=True, all_patches=all_patches)

    def forward(self, imgs, ids_shuffle):
        n = imgs.shape[0]
        ids_restore = paddle.argsort(ids_shuffle, axis=1)
        mask = paddle.concat([paddle.zeros([n, KEEP]), paddle.ones([n, NUM_PATCHES - KEEP])], axis=1)
        mask = paddle.take_along_axis(mask, ids_restore, axis=1)  # 0 keep, 1 remove
        latent = self.encoder(imgs, ids_shuffle)
        pred = self.decoder(latent, ids_shuffle)
        loss = self.recon_loss(imgs, pred, mask)
        return loss, pred, mask


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_vit_mae paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MAEPretrainer(swap=bug == "paddle_sincos_swapped", all_patches=bug == "loss_all_patches")
    # person A's init: Linear / conv weights paddle default (Xavier / Kaiming uniform), biases
    # and LayerNorm shifts N(0, 0.1), LayerNorm scales 1 + N(0, 0.1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape))
        elif "norm" in name and name.endswith(".weight"):
            p.set_value(1.0 + paddle.normal(0.0, 0.1, p.shape))
    m.eval()
    return m


def _imgs():
    return np.random.default_rng(43).standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def _ids_shuffle():
    rng = np.random.default_rng(4343)
    return np.stack([rng.permutation(NUM_PATCHES) for _ in range(BATCH)]).astype("int64")


def inputs():
    return (paddle.to_tensor(_imgs()), paddle.to_tensor(_ids_shuffle())), {}


def loss(output):
    # (loss [], pred [2, 16, 48], mask [2, 16]): the model's own masked reconstruction loss
    return output[0]

"""Hand-written port, torch side: a tiny masked autoencoder (MAE) pre-training forward (written by
"person B", timm / facebookresearch-mae style).

The same math as port_vit_mae_paddle.py, re-implemented by hand. Sizes: images [2, 3, 16, 16],
patch 4 -> 16 patches; encoder width 32, 2 pre-LN blocks, 4 heads, MLP 64 (nn.GELU); decoder
width 24, 1 block, 3 heads, MLP 48; LayerNorm eps 1e-6; decoder_pred Linear(24, 48);
norm_pix_loss with eps 1e-6. The masking order is the GIVEN int64 input `ids_shuffle` [2, 16]
(keep its first 8 patches), not random noise.

Torch idioms on this side:
- root `MaskedAutoencoderViT`: `enc` (`ViTEncoder`), `dec` (`MAEDecoderHead`), `criterion`
  (`NormPixLoss`), called in that order; forward(imgs, ids_shuffle) returns (loss, pred, mask);
  the mask is built with torch.ones / [:, :keep] = 0 / torch.gather by argsort(ids_shuffle).
- the 2-D sin-cos position tables are computed IN TORCH (`sincos_2d`, torch.meshgrid with
  indexing="xy", torch.outer) at init and registered as non-persistent buffers
  `enc.pos_embed` [1, 17, 32] and `dec.decoder_pos_embed` [1, 17, 24] (zero class-token row).
- `ViTEncoder` registers `cls_token` (nn.Parameter) and the buffer first, then `patch_embed`
  (`PatchEmbed` with a `proj` nn.Conv2d(3, 32, 4, 4)), `blocks` (ModuleList), `norm`; the kept
  patches are gathered with torch.gather(x, 1, ids_keep[..., None].expand(-1, -1, D)).
- `Block` (timm): `norm1`, `attn` (ONE fused `qkv` Linear(dim, 3 * dim) reshaped
  [B, N, 3, heads, hd] -> q | k | v, then `proj`), `norm2`, `mlp` (`fc1`, `act` nn.GELU, `fc2`).
- `MAEDecoderHead`: `decoder_embed`, `mask_token`, buffer, `decoder_blocks`, `decoder_norm`,
  `decoder_pred`; the inverse permutation is built with scatter_ (ids_restore[ids_shuffle[j]] = j)
  instead of an argsort, then torch.gather unshuffles [kept tokens | mask tokens].
- `NormPixLoss` (`criterion`): patchify with einsum("nchpwq->nhwpqc"), per-patch mean and
  var(unbiased=False), (var + 1e-6) ** .5, MSE per patch, (loss * mask).sum() / mask.sum().

PADIFF_BUG plants this side's bug (the paddle side's names are accepted and ignored; any other
name raises ValueError):
  unshuffle_with_perm -> the decoder gathers [kept | mask tokens] with ids_shuffle itself instead
                         of its inverse ids_restore (the permutation applied a second time)
"""
import os

import numpy as np
import torch
from torch import nn

img_size, patch_size, in_chans = 16, 4, 3
embed_dim, depth, num_heads = 32, 2, 4
decoder_embed_dim, decoder_depth, decoder_num_heads = 24, 1, 3
mlp_ratio = 2.0
mask_keep = 8
OWN_BUGS = {"unshuffle_with_perm"}
OTHER_BUGS = {"paddle_sincos_swapped", "loss_all_patches"}


def sincos_1d(dim, pos):
    """pos [M] -> [M, dim]: sin of the first dim/2 frequencies, then cos (MAE's layout)."""
    omega = torch.arange(dim // 2, dtype=torch.float64) / (dim / 2.0)
    omega = 1.0 / 10000**omega
    out = torch.outer(pos.reshape(-1).to(torch.float64), omega)
    return torch.cat([torch.sin(out), torch.cos(out)], dim=1)


def sincos_2d(dim, grid_size, cls_token=True):
    coords = torch.arange(grid_size, dtype=torch.float32)
    gw, gh = torch.meshgrid(coords, coords, indexing="xy")  # gw varies along columns
    emb = torch.cat([sincos_1d(dim // 2, gw), sincos_1d(dim // 2, gh)], dim=1)  # [H*W, dim]
    if cls_token:
        emb = torch.cat([torch.zeros(1, dim, dtype=emb.dtype), emb], dim=0)
    return emb.float().unsqueeze(0)


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # BCHW -> BNC


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.num_heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class ViTEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.register_buffer("pos_embed", sincos_2d(embed_dim, img_size // patch_size), persistent=False)
        self.patch_embed = PatchEmbed()
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)

    def forward(self, imgs, ids_shuffle):
        x = self.patch_embed(imgs)
        x = x + self.pos_embed[:, 1:, :]
        ids_keep = ids_shuffle[:, :mask_keep]
        x = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        cls_token = self.cls_token + self.pos_embed[:, :1, :]
        x = torch.cat((cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


class MAEDecoderHead(nn.Module):
    def __init__(self, unshuffle_with_perm=False):
        super().__init__()
        self.unshuffle_with_perm = unshuffle_with_perm
        self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, bias=True)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, decoder_embed_dim))
        self.register_buffer("decoder_pos_embed", sincos_2d(decoder_embed_dim, img_size // patch_size),
                             persistent=False)
        self.decoder_blocks = nn.ModuleList([Block(decoder_embed_dim, decoder_num_heads)
                                             for _ in range(decoder_depth)])
        self.decoder_norm = nn.LayerNorm(decoder_embed_dim, eps=1e-6)
        self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size**2 * in_chans, bias=True)

    def forward(self, x, ids_shuffle):
        x = self.decoder_embed(x)
        B, L = ids_shuffle.shape
        # inverse permutation: ids_restore[b, ids_shuffle[b, j]] = j
        ids_restore = torch.empty_like(ids_shuffle).scatter_(
            1, ids_shuffle, torch.arange(L, device=ids_shuffle.device).expand(B, L))
        index = ids_shuffle if self.unshuffle_with_perm else ids_restore
        mask_tokens = self.mask_token.repeat(B, L + 1 - x.shape[1], 1)
        x_ = torch.cat([x[:, 1:, :], mask_tokens], dim=1)  # no cls token
        x_ = torch.gather(x_, dim=1, index=index.unsqueeze(-1).repeat(1, 1, x.shape[2]))  # unshuffle
        x = torch.cat([x[:, :1, :], x_], dim=1)  # append cls token
        x = x + self.decoder_pos_embed
        for blk in self.decoder_blocks:
            x = blk(x)
        x = self.decoder_norm(x)
        x = self.decoder_pred(x)
        return x[:, 1:, :]  # remove cls token


class NormPixLoss(nn.Module):
    def __init__(self, norm_pix_loss=True):
        super().__init__()
        self.norm_pix_loss = norm_pix_loss

    @staticmethod
    def patchify(imgs):
        p = patch_size
        h = w = imgs.shape[2] // p
        x = imgs.reshape(imgs.shape[0], 3, h, p, w, p)
        x = torch.einsum("nchpwq->nhwpqc", x)
        return x.reshape(imgs.shape[0], h * w, p**2 * 3)

    def forward(self, imgs, pred, mask):
        target = self.patchify(imgs)
        if self.norm_pix_loss:
            mean = target.mean(dim=-1, keepdim=True)
            var = target.var(dim=-1, keepdim=True, unbiased=False)
            target = (target - mean) / (var + 1.0e-6) ** 0.5
        loss = (pred - target) ** 2
        loss = loss.mean(dim=-1)  # [N, L], mean loss per patch
        return (loss * mask).sum() / mask.sum()  # mean loss on removed patches


class MaskedAutoencoderViT(nn.Module):
    def __init__(self, unshuffle_with_perm=False):
        super().__init__()
        self.enc = ViTEncoder()
        self.dec = MAEDecoderHead(unshuffle_with_perm)
        self.criterion = NormPixLoss(norm_pix_loss=True)

    def forward(self, imgs, ids_shuffle):
        N, L = ids_shuffle.shape
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        mask = torch.ones([N, L], device=imgs.device)
        mask[:, :mask_keep] = 0
        mask = torch.gather(mask, dim=1, index=ids_restore)  # 0 keep, 1 remove
        latent = self.enc(imgs, ids_shuffle)
        pred = self.dec(latent, ids_shuffle)
        loss = self.criterion(imgs, pred, mask)
        return loss, pred, mask


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_vit_mae torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MaskedAutoencoderViT(unshuffle_with_perm=bug == "unshuffle_with_perm")
    torch.nn.init.normal_(m.enc.cls_token, std=0.02)
    torch.nn.init.normal_(m.dec.mask_token, std=0.02)
    return m.eval()


def _imgs():
    return np.random.default_rng(43).standard_normal((2, in_chans, img_size, img_size)).astype("float32")


def _ids_shuffle():
    rng = np.random.default_rng(4343)
    return np.stack([rng.permutation(16) for _ in range(2)]).astype("int64")


def inputs():
    return (torch.from_numpy(_imgs()), torch.from_numpy(_ids_shuffle())), {}


def loss(output):
    # (loss [], pred [2, 16, 48], mask [2, 16]): the model's own masked reconstruction loss
    return output[0]

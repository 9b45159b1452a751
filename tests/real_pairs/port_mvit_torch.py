"""Hand-written port, torch side: a tiny MViTv2-style classifier with pooling attention (written by "person B").

The same math as port_mvit_paddle.py, re-implemented by hand in the style of the
facebookresearch/mvit code (MultiScaleBlock / MultiScaleAttention / attention_pool /
cal_rel_pos_spatial): one positional image [2, 3, 16, 16] -> logits [2, 10]; patch embedding
conv 3 -> 16 (k3, s2, p1) to an 8 x 8 grid; three blocks:
  blocks.0: 16 -> 16, 2 heads, q stride 1, kv stride 2 (on 8 x 8)
  blocks.1: 16 -> 32, 4 heads, q stride 2, kv stride 1 (on 8 x 8; "dim_mul_in_att", pooled skip)
  blocks.2: 32 -> 32, 4 heads, q stride 1, kv stride 1 (on 4 x 4)
then LayerNorm (eps 1e-6), mean over the tokens and a linear head 32 -> 10.

Torch idioms on this side ("person B" keeps everything token-major):
- root `MViT`: `patch_embed` (a `PatchEmbed` module with `proj` nn.Conv2d, flattening to
  [B, N, C] and returning (tokens, hw)), `blocks` = a FLAT nn.ModuleList of `MultiScaleBlock`
  (no stage modules), `norm` nn.LayerNorm(32, eps=1e-6), `head` nn.Linear(32, 10).
- Every block takes and returns (x [B, N, C], hw_shape).
- `MultiScaleAttention` registers ONE fused `qkv` nn.Linear(dim, 3 * dim_out) (q | k | v, each
  head-major), `proj`, then the poolers as plain children `pool_q`, `norm_q`, `pool_k`,
  `norm_k`, `pool_v`, `norm_v` (depthwise nn.Conv2d(hd, hd, 3, stride, 1, groups=hd, bias=False)
  and nn.LayerNorm(hd, eps=1e-6)), then two tables `rel_pos_h`, `rel_pos_w` [L, hd]
  (nn.Parameter). The head-split / reshape / pool / norm sequence is the module-level function
  `attention_pool`, and the relative position bias the function `cal_rel_pos_spatial`, both
  inline in the attention's forward (distances from torch.arange in every forward).
- `MultiScaleBlock` registers `norm1`, `attn`, `norm2`, `mlp` (`Mlp`: fc1, act = nn.GELU(),
  fc2), then `proj` (the width-growth shortcut, applied to norm1's output) and `pool_skip`
  (nn.MaxPool2d(3, 2, 1)) in the transition block; the skip path is pooled through
  `attention_pool` as well.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_q_scaled_early     -> MultiScaleAttention multiplies the pooled q by the scale in place
                              (`q = q * self.scale`) before the scores, so the relative-position
                              term and the residual-pooling add see the SCALED q, in every block
  torch_skip_pool_kernel2  -> the transition block builds its `pool_skip` as
                              nn.MaxPool2d(kernel_size=stride, stride=stride) = MaxPool2d(2, 2),
                              no padding (same 4 x 4 output) instead of kernel stride + 1 = 3,
                              padding 1
"""

import os

import numpy as np
import torch
from torch import nn

EMBED_DIM, NUM_CLASSES, IMG_SIZE = 16, 10, 16
MLP_RATIO = 4.0
BATCH = 2
# (dim, dim_out, num_heads, input_size, stride_q, stride_kv)
BLOCK_CFGS = [
    (16, 16, 2, 8, 1, 2),
    (16, 32, 4, 8, 2, 1),
    (32, 32, 4, 4, 1, 1),
]
OWN_BUGS = {"torch_q_scaled_early", "torch_skip_pool_kernel2"}
OTHER_BUGS = {"paddle_relpos_hw_swapped", "paddle_gelu_tanh"}


def attention_pool(tensor, pool, hw_shape, norm=None):
    """tensor [B, heads, L, C] (or [B, L, C]); returns the pooled tokens and the new hw."""
    if pool is None:
        return tensor, hw_shape
    tensor_dim = tensor.ndim
    if tensor_dim == 3:
        tensor = tensor.unsqueeze(1)
    B, N, _L, C = tensor.shape
    H, W = hw_shape
    tensor = tensor.reshape(B * N, H, W, C).permute(0, 3, 1, 2).contiguous()
    tensor = pool(tensor)
    hw_shape = [tensor.shape[2], tensor.shape[3]]
    L_pooled = tensor.shape[2] * tensor.shape[3]
    tensor = tensor.reshape(B, N, C, L_pooled).transpose(2, 3)
    if norm is not None:
        tensor = norm(tensor)
    if tensor_dim == 3:
        tensor = tensor.squeeze(1)
    return tensor, hw_shape


def cal_rel_pos_spatial(attn, q, q_shape, k_shape, rel_pos_h, rel_pos_w):
    q_h, q_w = q_shape
    k_h, k_w = k_shape
    q_h_ratio, k_h_ratio = max(k_h / q_h, 1.0), max(q_h / k_h, 1.0)
    dist_h = torch.arange(q_h)[:, None] * q_h_ratio - torch.arange(k_h)[None, :] * k_h_ratio
    dist_h += (k_h - 1) * k_h_ratio
    q_w_ratio, k_w_ratio = max(k_w / q_w, 1.0), max(q_w / k_w, 1.0)
    dist_w = torch.arange(q_w)[:, None] * q_w_ratio - torch.arange(k_w)[None, :] * k_w_ratio
    dist_w += (k_w - 1) * k_w_ratio
    Rh = rel_pos_h[dist_h.long()]
    Rw = rel_pos_w[dist_w.long()]
    B, n_head, _q_N, dim = q.shape
    r_q = q.reshape(B, n_head, q_h, q_w, dim)
    rel_h = torch.einsum("byhwc,hkc->byhwk", r_q, Rh)
    rel_w = torch.einsum("byhwc,wkc->byhwk", r_q, Rw)
    attn = attn.view(B, n_head, q_h, q_w, k_h, k_w) + rel_h[:, :, :, :, :, None] + rel_w[:, :, :, :, None, :]
    return attn.view(B, n_head, q_h * q_w, k_h * k_w)


class MultiScaleAttention(nn.Module):
    def __init__(self, dim, dim_out, input_size, num_heads, stride_q, stride_kv, scale_q_early=False):
        super().__init__()
        self.num_heads, self.dim_out = num_heads, dim_out
        head_dim = dim_out // num_heads
        self.scale = head_dim**-0.5
        self.scale_q_early = scale_q_early
        self.qkv = nn.Linear(dim, dim_out * 3, bias=True)
        self.proj = nn.Linear(dim_out, dim_out)
        self.pool_q = nn.Conv2d(head_dim, head_dim, 3, stride_q, 1, groups=head_dim, bias=False)
        self.norm_q = nn.LayerNorm(head_dim, eps=1e-6)
        self.pool_k = nn.Conv2d(head_dim, head_dim, 3, stride_kv, 1, groups=head_dim, bias=False)
        self.norm_k = nn.LayerNorm(head_dim, eps=1e-6)
        self.pool_v = nn.Conv2d(head_dim, head_dim, 3, stride_kv, 1, groups=head_dim, bias=False)
        self.norm_v = nn.LayerNorm(head_dim, eps=1e-6)
        q_size = input_size // stride_q
        kv_size = input_size // stride_kv
        rel_sp_dim = 2 * max(q_size, kv_size) - 1
        self.rel_pos_h = nn.Parameter(torch.zeros(rel_sp_dim, head_dim))
        self.rel_pos_w = nn.Parameter(torch.zeros(rel_sp_dim, head_dim))
        nn.init.trunc_normal_(self.rel_pos_h, std=0.02)
        nn.init.trunc_normal_(self.rel_pos_w, std=0.02)

    def forward(self, x, hw_shape):
        B, N, _ = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, q_shape = attention_pool(q, self.pool_q, hw_shape, norm=self.norm_q)
        k, k_shape = attention_pool(k, self.pool_k, hw_shape, norm=self.norm_k)
        v, _ = attention_pool(v, self.pool_v, hw_shape, norm=self.norm_v)
        if self.scale_q_early:
            q = q * self.scale
            attn = q @ k.transpose(-2, -1)
        else:
            attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = cal_rel_pos_spatial(attn, q, q_shape, k_shape, self.rel_pos_h, self.rel_pos_w)
        attn = attn.softmax(dim=-1)
        x = attn @ v
        x = x + q  # residual pooling
        x = x.transpose(1, 2).reshape(B, -1, self.dim_out)
        x = self.proj(x)
        return x, q_shape


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MultiScaleBlock(nn.Module):
    def __init__(self, dim, dim_out, num_heads, input_size, stride_q, stride_kv, bug=""):
        super().__init__()
        self.dim, self.dim_out = dim, dim_out
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = MultiScaleAttention(
            dim, dim_out, input_size, num_heads, stride_q, stride_kv, scale_q_early=bug == "torch_q_scaled_early"
        )
        self.norm2 = nn.LayerNorm(dim_out, eps=1e-6)
        self.mlp = Mlp(dim_out, int(dim_out * MLP_RATIO))
        if dim != dim_out:
            self.proj = nn.Linear(dim, dim_out)
        if stride_q > 1:
            if bug == "torch_skip_pool_kernel2":
                self.pool_skip = nn.MaxPool2d(kernel_size=stride_q, stride=stride_q)
            else:
                kernel_skip = stride_q + 1
                self.pool_skip = nn.MaxPool2d(kernel_skip, stride_q, kernel_skip // 2, ceil_mode=False)
        else:
            self.pool_skip = None

    def forward(self, x, hw_shape):
        x_norm = self.norm1(x)
        x_block, hw_shape_new = self.attn(x_norm, hw_shape)
        if self.dim != self.dim_out:
            x = self.proj(x_norm)
        x_res, _ = attention_pool(x, self.pool_skip, hw_shape)
        x = x_res + x_block
        x_norm = self.norm2(x)
        x_mlp = self.mlp(x_norm)
        x = x + x_mlp
        return x, hw_shape_new


class PatchEmbed(nn.Module):
    def __init__(self, dim_in=3, dim_out=EMBED_DIM):
        super().__init__()
        self.proj = nn.Conv2d(dim_in, dim_out, kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        x = self.proj(x)
        return x.flatten(2).transpose(1, 2), list(x.shape[2:])


class MViT(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.patch_embed = PatchEmbed()
        self.blocks = nn.ModuleList([MultiScaleBlock(*cfg, bug=bug) for cfg in BLOCK_CFGS])
        embed_dim = BLOCK_CFGS[-1][1]
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, NUM_CLASSES)

    def forward(self, x):
        x, hw = self.patch_embed(x)
        for blk in self.blocks:
            x, hw = blk(x, hw)
        x = self.norm(x)
        x = x.mean(1)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mvit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MViT(bug=bug if bug in OWN_BUGS else "")
    return m.eval()


def _image():
    rng = np.random.default_rng(48)
    return rng.standard_normal((BATCH, 3, IMG_SIZE, IMG_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny Hiera (re-implemented by "person B" from the paddle
original, port_hiera_paddle.py, in the layout of the official facebookresearch/hiera code).

Input: images [2, 3, 32, 32] (numpy rng seed 53). Output: logits [2, 10].

    Hiera: registers pos_embed ([1, 64, 16], row-major tokens) first, then patch_embed
        (PatchEmbed: proj Conv2d(3, 16, 4, stride 4)), unroll (Unroll, no parameters), blocks
        (ModuleList of 4 HieraBlock, no stage containers), norm (LayerNorm), head (Head:
        projection Linear(64, 10))
    Unroll: the official schedule loop over [(2, 2), (2, 2)]: view [B, H/2, 2, W/2, 2, C],
        permute the strides to the front, flatten into the batch; after both steps the token
        order is (finest stride, coarser stride, mask unit): n = t * 4 + w, the 4 mask units
        interleaved fastest. Tokens stay unrolled [B, N, C] to the end (no reroll: the head
        averages them)
    HieraBlock: norm1, attn (MaskUnitAttention), norm2, mlp (Mlp: fc1, act nn.GELU, fc2), proj
        (transition blocks only): x = do_pool(proj(norm1(x)), 4) + attn(norm1(x)); x = x + mlp(norm2(x))
    MaskUnitAttention: ONE fused qkv Linear(dim, 3 dim_out) (rows q | k | v),
        qkv.reshape(B, -1, num_windows, 3, heads, head_dim).permute(3, 0, 4, 2, 1, 5);
        q-pooling: q.view(B, heads, num_windows, q_stride, -1, head_dim).max(dim=3);
        num_windows = N // (q_stride * window_size) for mask-unit attention, else 1; proj
    do_pool(x, stride): x.view(B, stride, -1, C).max(dim=1)

Blocks: 0 (dim 16, heads 2, mask units of 16 tokens), 1 (16 -> 32, heads 4, q_stride 4, mask-unit
attention lagging one block, window 4), 2 (32, heads 4, global), 3 (32 -> 64, heads 8, q_stride 4,
global). LayerNorm eps 1e-6, exact GELU, MLP ratio 4.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored):
  torch_qpool_coarse_stride -> the q-pooling view puts the stride AFTER the remaining tokens,
                               q.view(B, heads, nw, -1, q_stride, hd).max(dim=4): each pooled
                               query takes the max over 4 tokens of different 2x2 cells
                               (every q-pooling block)
  torch_shortcut_unnormed   -> the transition blocks project the UN-normalised input for the
                               residual, do_pool(proj(x)) instead of do_pool(proj(norm1(x)))
"""
import math
import os

import numpy as np
import torch
from torch import nn

OWN_BUGS = {"torch_qpool_coarse_stride", "torch_shortcut_unnormed"}
OTHER_BUGS = {"paddle_window_no_transpose", "paddle_gelu_tanh"}


def _bug():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hiera torch: unknown PADIFF_BUG {bug!r}")
    return bug


def do_pool(x, stride):
    B, _, C = x.shape
    return x.view(B, stride, -1, C).max(dim=1).values


class Unroll(nn.Module):
    def __init__(self, size, schedule):
        super().__init__()
        self.size = list(size)
        self.schedule = schedule

    def forward(self, x):
        B, _, C = x.shape
        cur_size = self.size
        x = x.view(*([B] + cur_size + [C]))
        for strides in self.schedule:
            cur_size = [i // s for i, s in zip(cur_size, strides)]
            new_shape = [B] + [n for i, s in zip(cur_size, strides) for n in (i, s)] + [C]
            x = x.view(new_shape)
            L = len(new_shape)
            permute = [0] + list(range(2, L - 1, 2)) + list(range(1, L - 1, 2)) + [L - 1]
            x = x.permute(permute)
            x = x.flatten(0, len(strides))
            B *= math.prod(strides)
        return x.reshape(-1, math.prod(self.size), C)


class MaskUnitAttention(nn.Module):
    def __init__(self, dim, dim_out, heads, q_stride=1, window_size=0, use_mask_unit_attn=False, coarse_pool=False):
        super().__init__()
        self.dim, self.dim_out, self.heads = dim, dim_out, heads
        self.q_stride, self.window_size, self.use_mask_unit_attn = q_stride, window_size, use_mask_unit_attn
        self.head_dim = dim_out // heads
        self.scale = self.head_dim ** -0.5
        self.coarse_pool = coarse_pool
        self.qkv = nn.Linear(dim, 3 * dim_out)
        self.proj = nn.Linear(dim_out, dim_out)

    def forward(self, x):
        B, N, _ = x.shape
        num_windows = (N // (self.q_stride * self.window_size)) if self.use_mask_unit_attn else 1
        qkv = self.qkv(x).reshape(B, -1, num_windows, 3, self.heads, self.head_dim).permute(3, 0, 4, 2, 1, 5)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.q_stride > 1:
            if self.coarse_pool:
                q = q.reshape(B, self.heads, num_windows, -1, self.q_stride, self.head_dim).max(dim=4).values
            else:
                q = q.reshape(B, self.heads, num_windows, self.q_stride, -1, self.head_dim).max(dim=3).values
        attn = (q * self.scale) @ k.transpose(-1, -2)
        x = attn.softmax(dim=-1) @ v
        x = x.transpose(1, 3).reshape(B, -1, self.dim_out)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class HieraBlock(nn.Module):
    def __init__(self, dim, dim_out, heads, mlp_ratio=4.0, q_stride=1, window_size=0, use_mask_unit_attn=False,
                 bug=""):
        super().__init__()
        self.dim, self.dim_out = dim, dim_out
        self.shortcut_unnormed = bug == "torch_shortcut_unnormed"
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = MaskUnitAttention(dim, dim_out, heads, q_stride, window_size, use_mask_unit_attn,
                                      coarse_pool=bug == "torch_qpool_coarse_stride")
        self.norm2 = nn.LayerNorm(dim_out, eps=1e-6)
        self.mlp = Mlp(dim_out, int(dim_out * mlp_ratio))
        if dim != dim_out:
            self.proj = nn.Linear(dim, dim_out)

    def forward(self, x):
        x_norm = self.norm1(x)
        if self.dim != self.dim_out:
            x = do_pool(self.proj(x if self.shortcut_unnormed else x_norm), stride=self.attn.q_stride)
        x = x + self.attn(x_norm)
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, dim_in, dim_out, kernel, stride):
        super().__init__()
        self.proj = nn.Conv2d(dim_in, dim_out, kernel_size=kernel, stride=stride)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # [B, N, C], row-major tokens


class Head(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.projection = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.projection(x)


class Hiera(nn.Module):
    def __init__(self, input_size=(32, 32), in_chans=3, embed_dim=16, num_heads=2, num_classes=10,
                 stages=(1, 2, 1), q_pool=2, q_stride=(2, 2), mask_unit_size=(4, 4),
                 mask_unit_attn=(True, False, False), dim_mul=2.0, head_mul=2.0, patch_kernel=(4, 4),
                 patch_stride=(4, 4), mlp_ratio=4.0, bug=""):
        super().__init__()
        depth = sum(stages)
        self.tokens_spatial_shape = [i // s for i, s in zip(input_size, patch_stride)]
        num_tokens = math.prod(self.tokens_spatial_shape)
        flat_mu_size = math.prod(mask_unit_size)
        flat_q_stride = math.prod(q_stride)
        self.pos_embed = nn.Parameter(torch.zeros(1, num_tokens, embed_dim))
        self.patch_embed = PatchEmbed(in_chans, embed_dim, patch_kernel, patch_stride)
        self.unroll = Unroll(self.tokens_spatial_shape, [q_stride] * len(stages[:-1]))
        stage_ends = [sum(stages[:i]) - 1 for i in range(1, len(stages) + 1)]
        q_pool_blocks = [x + 1 for x in stage_ends[:q_pool]]
        cur_stage = 0
        self.blocks = nn.ModuleList()
        for i in range(depth):
            dim_out = embed_dim
            use_mask_unit_attn = mask_unit_attn[cur_stage]  # lags by one block
            if (i - 1) in stage_ends:
                dim_out = int(embed_dim * dim_mul)
                num_heads = int(num_heads * head_mul)
                cur_stage += 1
                if i in q_pool_blocks:
                    flat_mu_size //= flat_q_stride
            self.blocks.append(HieraBlock(embed_dim, dim_out, num_heads, mlp_ratio,
                                          flat_q_stride if i in q_pool_blocks else 1, flat_mu_size,
                                          use_mask_unit_attn, bug))
            embed_dim = dim_out
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = Head(embed_dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x)
        x = x + self.pos_embed
        x = self.unroll(x)
        for blk in self.blocks:
            x = blk(x)
        x = x.mean(dim=1)
        return self.head(self.norm(x))


def model():
    bug = _bug()
    torch.manual_seed(0)
    m = Hiera(bug=bug)
    m.eval()
    return m


def inputs():
    x = np.random.default_rng(53).standard_normal((2, 3, 32, 32)).astype(np.float32)
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output ** 2).mean()

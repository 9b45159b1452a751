"""Hand-written port, torch side: a tiny EVA-02-style ViT classifier (written by "person B").

The same math as port_eva02_paddle.py, re-implemented by hand in the style of HF transformers'
ViT / EVA ports: `pixel_values` [2, 3, 16, 16] (positional), patch 4 (4 x 4 grid), width 32,
cls token + learned absolute positions, 2 pre-norm layers (LayerNorm eps 1e-6), 4 heads of 8,
2D axial rotary on the patch tokens only, SwiGLU with a sub-LayerNorm (hidden 64), final
LayerNorm and a classifier on the cls token: logits [2, 10].

Torch idioms on this side:
- root `Eva02ForImageClassification`: `embeddings` (Eva02Embeddings: `cls_token`,
  `position_embeddings`, `patch_embeddings` nn.Conv2d; flatten, cls concat and position add
  all inside its forward), `layers` (ModuleList of `Eva02Layer`), `layernorm`, `classifier`.
- `Eva02Layer`: `layernorm_before`, `attention`, `layernorm_after`, `mlp`.
- `Eva02SelfAttention`: THREE Linears `query` (bias), `key` (bias=False), `value` (bias), then
  `output`. The rotary cos / sin are computed ON THE FLY in every forward by the helper
  `axial_rope_cos_sin` (no buffer, no module) and applied inline with ROTATE-HALF pairing
  (feature j with feature j + 4), angles per patch (row r, column c)
  [r f0, r f1, c f0, c f1] repeated twice, f = [1, 0.01]. The query / key rows are stored in
  that rotate-half order (the paddle interleaved feature 2j -> torch j, 2j + 1 -> torch j + 4,
  per head), the same trick as the LLaMA checkpoint conversion: q . k is unchanged.
- `Eva02SwiGLU`: `gate_proj`, `up_proj`, `sub_norm` LayerNorm(64, eps 1e-6), `down_proj`;
  F.silu inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_subln_eps_default      -> the SwiGLU sub-LayerNorm is built as nn.LayerNorm(64) with
                                  torch's default eps 1e-5 instead of 1e-6 (precision-level)
  torch_attn_scale_full_width  -> the attention scale is computed from the model width
                                  (32 ** -0.5) instead of the head width (8 ** -0.5)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMAGE_SIZE, PATCH_SIZE, NUM_CHANNELS = 16, 4, 3
HIDDEN_SIZE, NUM_HEADS, NUM_LAYERS, INTERMEDIATE, NUM_LABELS = 32, 4, 2, 64, 10
LAYER_NORM_EPS = 1e-6
ROPE_THETA = 10000.0
BATCH = 2
OWN_BUGS = {"torch_subln_eps_default", "torch_attn_scale_full_width"}
OTHER_BUGS = {"paddle_rope_fp16_table", "paddle_patch_flatten_wh"}


def axial_rope_cos_sin(grid_h, grid_w, head_dim, device, dtype):
    axis_dim = head_dim // 2
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, axis_dim, 2, device=device, dtype=torch.float32) / axis_dim))
    ys, xs = torch.meshgrid(
        torch.arange(grid_h, device=device, dtype=torch.float32),
        torch.arange(grid_w, device=device, dtype=torch.float32),
        indexing="ij",
    )
    freqs = torch.cat([torch.outer(ys.flatten(), inv_freq), torch.outer(xs.flatten(), inv_freq)], dim=-1)
    emb = torch.cat([freqs, freqs], dim=-1)  # [grid_h * grid_w, head_dim]
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Eva02Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        num_patches = (IMAGE_SIZE // PATCH_SIZE) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, HIDDEN_SIZE))
        self.position_embeddings = nn.Parameter(torch.zeros(1, num_patches + 1, HIDDEN_SIZE))
        self.patch_embeddings = nn.Conv2d(NUM_CHANNELS, HIDDEN_SIZE, kernel_size=PATCH_SIZE, stride=PATCH_SIZE)

    def forward(self, pixel_values):
        emb = self.patch_embeddings(pixel_values).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(emb.shape[0], -1, -1)
        return torch.cat((cls, emb), dim=1) + self.position_embeddings


class Eva02SelfAttention(nn.Module):
    def __init__(self, scale_full_width=False):
        super().__init__()
        self.num_heads = NUM_HEADS
        self.head_dim = HIDDEN_SIZE // NUM_HEADS
        self.scaling = (HIDDEN_SIZE if scale_full_width else self.head_dim) ** -0.5
        self.query = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE, bias=True)
        self.key = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE, bias=False)
        self.value = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE, bias=True)
        self.output = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)

    def _shape(self, t, bsz, seq):
        return t.view(bsz, seq, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden_states):
        bsz, seq, _ = hidden_states.shape
        q = self._shape(self.query(hidden_states), bsz, seq)
        k = self._shape(self.key(hidden_states), bsz, seq)
        v = self._shape(self.value(hidden_states), bsz, seq)
        side = IMAGE_SIZE // PATCH_SIZE
        cos, sin = axial_rope_cos_sin(side, side, self.head_dim, q.device, q.dtype)
        q_pt, k_pt = q[:, :, 1:], k[:, :, 1:]
        q = torch.cat([q[:, :, :1], q_pt * cos + rotate_half(q_pt) * sin], dim=2)
        k = torch.cat([k[:, :, :1], k_pt * cos + rotate_half(k_pt) * sin], dim=2)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scaling
        probs = scores.softmax(dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(bsz, seq, HIDDEN_SIZE)
        return self.output(ctx)


class Eva02SwiGLU(nn.Module):
    def __init__(self, default_eps=False):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN_SIZE, INTERMEDIATE)
        self.up_proj = nn.Linear(HIDDEN_SIZE, INTERMEDIATE)
        self.sub_norm = nn.LayerNorm(INTERMEDIATE) if default_eps else nn.LayerNorm(INTERMEDIATE, eps=LAYER_NORM_EPS)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN_SIZE)

    def forward(self, x):
        return self.down_proj(self.sub_norm(F.silu(self.gate_proj(x)) * self.up_proj(x)))


class Eva02Layer(nn.Module):
    def __init__(self, default_eps=False, scale_full_width=False):
        super().__init__()
        self.layernorm_before = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.attention = Eva02SelfAttention(scale_full_width)
        self.layernorm_after = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.mlp = Eva02SwiGLU(default_eps)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.attention(self.layernorm_before(hidden_states))
        return hidden_states + self.mlp(self.layernorm_after(hidden_states))


class Eva02ForImageClassification(nn.Module):
    def __init__(self, default_eps=False, scale_full_width=False):
        super().__init__()
        self.embeddings = Eva02Embeddings()
        self.layers = nn.ModuleList([Eva02Layer(default_eps, scale_full_width) for _ in range(NUM_LAYERS)])
        self.layernorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.classifier = nn.Linear(HIDDEN_SIZE, NUM_LABELS)

    def forward(self, pixel_values):
        hidden_states = self.embeddings(pixel_values)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        hidden_states = self.layernorm(hidden_states)
        return self.classifier(hidden_states[:, 0, :])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_eva02 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Eva02ForImageClassification(
        default_eps=bug == "torch_subln_eps_default", scale_full_width=bug == "torch_attn_scale_full_width"
    )
    return m.eval()


def _pixels():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, NUM_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_pixels()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

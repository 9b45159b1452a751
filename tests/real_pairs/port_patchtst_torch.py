"""Hand-written port, torch side: a PatchTST-style forecaster (written by "person B").

The same math as port_patchtst_paddle.py, re-implemented by hand in the style of the original
PatchTST code (yuqinie98/PatchTST, supervised PatchTST_backbone): input `x` [2, 32, 3]
(positional; batch, time, channels), RevIN (biased std over time, eps 1e-5, learnable affine),
end padding by replication (+4), 8 overlapping patches of 8 (stride 4), W_P Linear(8 -> 16) plus
a learned W_pos [8, 16], 2 post-norm encoder layers (4 heads of 4, FFN 32, exact GELU,
BatchNorm over d_model), a flatten head Linear(16 * 8 -> 12) shared over channels, then RevIN
denormalisation: output [2, 12, 3].

Torch idioms on this side:
- root `PatchTST` holds `model` = `PatchTST_backbone`, which registers `revin_layer` (RevIN),
  `padding_patch_layer` (nn.ReplicationPad1d((0, 4))), `backbone` (`TSTiEncoder`) and `head`
  (`Flatten_Head`: `flatten` nn.Flatten(start_dim=-2), `linear`, `dropout`).
- `RevIN` is CALLED TWICE per forward: revin_layer(z, "norm") stores the statistics on the
  module (detached) and revin_layer(z, "denorm") uses them.
- channels stay a separate axis until after the patch embedding: [B, L, C] -> [B, C, L] ->
  pad -> [B, C, 36]; the overlapping patches are built WITHOUT unfold: the padded series is
  reshaped into 9 chunks of 4 and patch i = cat(chunk i, chunk i + 1) (valid because the patch
  length is twice the stride) -> [B, C, 8, 8], permuted to [B, C, patch_len, patch_num] as in
  the original code.
- `TSTiEncoder` registers `W_P`, `W_pos` (nn.Parameter [8, 16]), `dropout` and `encoder`
  (`TSTEncoder`, `layers` = ModuleList); it folds channels into the batch after W_P:
  [B, C, N, d] -> [B*C, N, d], and unfolds them back to [B, C, d, N] (dim-major) for the head.
- `TSTEncoderLayer` registers `self_attn`, `dropout_attn`, `norm_attn`, `ff`, `dropout_ffn`,
  `norm_ffn`; the norms are nn.Sequential(Transpose(1, 2), nn.BatchNorm1d(16), Transpose(1, 2));
  `ff` is nn.Sequential(Linear, GELU, Dropout, Linear).
- `_MultiheadAttention`: separate `W_Q`, `W_K`, `W_V`, a `sdp_attn` submodule
  (`_ScaledDotProductAttention`, whose `scale` is an nn.Parameter with requires_grad=False, as in
  the original) and `to_out` = nn.Sequential(Linear, Dropout). K is passed pre-transposed
  [bs, h, d_k, N].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_tanh          -> the FFN's activation is nn.GELU(approximate="tanh") (precision-level)
  torch_attn_scale_d_model -> _ScaledDotProductAttention's scale is d_model ** -0.5 = 1/4
                              instead of head_dim ** -0.5 = 1/2
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SEQ_LEN, ENC_IN, PRED_LEN = 32, 3, 12
PATCH_LEN, STRIDE = 8, 4
D_MODEL, N_HEADS, D_FF, E_LAYERS = 16, 4, 32, 2
BATCH = 2
OWN_BUGS = {"torch_gelu_tanh", "torch_attn_scale_d_model"}
OTHER_BUGS = {"paddle_revin_unbiased_var", "paddle_patch_pad_constant"}


class Transpose(nn.Module):
    def __init__(self, *dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return x.transpose(*self.dims)


class RevIN(nn.Module):
    def __init__(self, num_features, eps=1e-5, affine=True):
        super().__init__()
        self.num_features, self.eps, self.affine = num_features, eps, affine
        if self.affine:
            self.affine_weight = nn.Parameter(torch.ones(num_features))
            self.affine_bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x, mode):
        if mode == "norm":
            self._get_statistics(x)
            return self._normalize(x)
        if mode == "denorm":
            return self._denormalize(x)
        raise NotImplementedError(mode)

    def _get_statistics(self, x):
        self.mean = torch.mean(x, dim=1, keepdim=True).detach()
        self.stdev = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + self.eps).detach()

    def _normalize(self, x):
        x = (x - self.mean) / self.stdev
        if self.affine:
            x = x * self.affine_weight + self.affine_bias
        return x

    def _denormalize(self, x):
        if self.affine:
            x = (x - self.affine_bias) / (self.affine_weight + self.eps * self.eps)
        return x * self.stdev + self.mean


class _ScaledDotProductAttention(nn.Module):
    def __init__(self, d_model, n_heads, scale_d_model=False):
        super().__init__()
        head_dim = d_model // n_heads
        scale = d_model**-0.5 if scale_d_model else head_dim**-0.5
        self.scale = nn.Parameter(torch.tensor(scale), requires_grad=False)

    def forward(self, q, k, v):  # q [bs, h, N, dk], k [bs, h, dk, N], v [bs, h, N, dv]
        attn_scores = torch.matmul(q, k) * self.scale
        attn_weights = F.softmax(attn_scores, dim=-1)
        return torch.matmul(attn_weights, v)


class _MultiheadAttention(nn.Module):
    def __init__(self, d_model, n_heads, scale_d_model=False):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.sdp_attn = _ScaledDotProductAttention(d_model, n_heads, scale_d_model)
        self.to_out = nn.Sequential(nn.Linear(d_model, d_model), nn.Dropout(0.0))

    def forward(self, Q):
        bs = Q.size(0)
        q_s = self.W_Q(Q).view(bs, -1, self.n_heads, self.d_k).transpose(1, 2)
        k_s = self.W_K(Q).view(bs, -1, self.n_heads, self.d_k).permute(0, 2, 3, 1)
        v_s = self.W_V(Q).view(bs, -1, self.n_heads, self.d_k).transpose(1, 2)
        output = self.sdp_attn(q_s, k_s, v_s)
        output = output.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * self.d_k)
        return self.to_out(output)


class TSTEncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, gelu_tanh=False, scale_d_model=False):
        super().__init__()
        self.self_attn = _MultiheadAttention(d_model, n_heads, scale_d_model)
        self.dropout_attn = nn.Dropout(0.2)
        self.norm_attn = nn.Sequential(Transpose(1, 2), nn.BatchNorm1d(d_model), Transpose(1, 2))
        act = nn.GELU(approximate="tanh") if gelu_tanh else nn.GELU()
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), act, nn.Dropout(0.2), nn.Linear(d_ff, d_model))
        self.dropout_ffn = nn.Dropout(0.2)
        self.norm_ffn = nn.Sequential(Transpose(1, 2), nn.BatchNorm1d(d_model), Transpose(1, 2))

    def forward(self, src):
        src = self.norm_attn(src + self.dropout_attn(self.self_attn(src)))
        return self.norm_ffn(src + self.dropout_ffn(self.ff(src)))


class TSTEncoder(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.layers = nn.ModuleList([TSTEncoderLayer(D_MODEL, N_HEADS, D_FF, **kw) for _ in range(E_LAYERS)])

    def forward(self, src):
        for mod in self.layers:
            src = mod(src)
        return src


class TSTiEncoder(nn.Module):
    def __init__(self, patch_num, patch_len, **kw):
        super().__init__()
        self.patch_num, self.patch_len = patch_num, patch_len
        self.W_P = nn.Linear(patch_len, D_MODEL)
        self.W_pos = nn.Parameter(torch.empty(patch_num, D_MODEL).uniform_(-0.02, 0.02))
        self.dropout = nn.Dropout(0.2)
        self.encoder = TSTEncoder(**kw)

    def forward(self, x):  # x [bs, nvars, patch_len, patch_num]
        n_vars = x.shape[1]
        x = self.W_P(x.permute(0, 1, 3, 2))  # [bs, nvars, patch_num, d_model]
        u = torch.reshape(x, (x.shape[0] * x.shape[1], x.shape[2], x.shape[3]))
        u = self.dropout(u + self.W_pos)
        z = self.encoder(u)  # [bs * nvars, patch_num, d_model]
        z = torch.reshape(z, (-1, n_vars, z.shape[-2], z.shape[-1]))
        return z.permute(0, 1, 3, 2)  # [bs, nvars, d_model, patch_num]


class Flatten_Head(nn.Module):
    def __init__(self, nf, target_window):
        super().__init__()
        self.flatten = nn.Flatten(start_dim=-2)
        self.linear = nn.Linear(nf, target_window)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        return self.dropout(self.linear(self.flatten(x)))


class PatchTST_backbone(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.patch_len, self.stride = PATCH_LEN, STRIDE
        patch_num = (SEQ_LEN - PATCH_LEN) // STRIDE + 1 + 1  # "end" padding adds one patch
        self.revin_layer = RevIN(ENC_IN)
        self.padding_patch_layer = nn.ReplicationPad1d((0, STRIDE))
        self.backbone = TSTiEncoder(patch_num, PATCH_LEN, **kw)
        self.head = Flatten_Head(D_MODEL * patch_num, PRED_LEN)

    def _patchify(self, z):  # [bs, nvars, L + stride] -> [bs, nvars, patch_len, patch_num]
        bs, nvars, length = z.shape
        chunks = z.reshape(bs, nvars, length // self.stride, self.stride)
        patches = torch.cat([chunks[:, :, :-1], chunks[:, :, 1:]], dim=-1)  # patch_len = 2 * stride
        return patches.permute(0, 1, 3, 2)

    def forward(self, z):  # z [bs, nvars, seq_len]
        z = self.revin_layer(z.permute(0, 2, 1), "norm").permute(0, 2, 1)
        z = self.padding_patch_layer(z)
        z = self._patchify(z)
        z = self.backbone(z)
        z = self.head(z)  # [bs, nvars, target_window]
        return self.revin_layer(z.permute(0, 2, 1), "denorm").permute(0, 2, 1)


class PatchTST(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.model = PatchTST_backbone(**kw)

    def forward(self, x):  # x [Batch, Input length, Channel]
        x = self.model(x.permute(0, 2, 1))
        return x.permute(0, 2, 1)  # [Batch, Output length, Channel]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_patchtst torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = PatchTST(gelu_tanh=bug == "torch_gelu_tanh", scale_d_model=bug == "torch_attn_scale_d_model")
    return m.eval()


def _series():
    rng = np.random.default_rng(11)
    t = np.arange(SEQ_LEN, dtype=np.float64)[None, :, None]
    offset = rng.normal(5.0, 2.0, (BATCH, 1, ENC_IN))
    scale = rng.uniform(0.5, 3.0, (BATCH, 1, ENC_IN))
    period = rng.uniform(6.0, 14.0, (BATCH, 1, ENC_IN))
    trend = rng.normal(0.0, 0.05, (BATCH, 1, ENC_IN))
    x = offset + scale * np.sin(2 * np.pi * t / period) + trend * t + 0.3 * rng.standard_normal((BATCH, SEQ_LEN, ENC_IN))
    return x.astype("float32")


def inputs():
    return (torch.from_numpy(_series()),), {}


def loss(output):
    # forecast [2, 12, 3]
    return (output**2).mean()

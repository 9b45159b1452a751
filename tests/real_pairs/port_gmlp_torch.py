"""Hand-written port, torch side: a tiny gMLP token classifier (written by "person B").

The same math as port_gmlp_paddle.py, re-implemented by hand. Sizes: vocab 50, d_model 32,
d_ffn 128 (u and v 64 wide each), sequence length 16, 2 layers, 5 tags, batch 2, LayerNorm eps
1e-5. Output: per-token logits [2, 16, 5].

Torch idioms on this side:
- root `GatedMLPTokenClassifier`: `tok_embed` (nn.Embedding), `layers` (ModuleList of `GMLPLayer`),
  `final_ln`, `classifier` (nn.Linear 32 -> 5).
- `GMLPLayer` registers `fc_u`, `fc_v` (TWO Linears 32 -> 64 instead of one packed 32 -> 128),
  `act` (nn.GELU, called twice: on the u branch, then on the v branch), `gate`, `fc_out`, and
  `pre_norm` LAST (it is called first): x + fc_out(gate(act(fc_u(y)), act(fc_v(y)))), y = pre_norm(x).
- `SpatialGate(u, v)`: registers the raw `weight` nn.Parameter [16, 16] (seq_out x seq_in, tiny
  uniform init as in the paper) and `bias` nn.Parameter [16] (ones) BEFORE its `ln`
  (LayerNorm(64)). The spatial projection is an einsum over the sequence axis,
  einsum("bmd,nm->bnd", ln(v), weight) + bias[:, None]; returns u * that.

Planted bugs (PADIFF_BUG), see port_gmlp_truth.json; the paddle side's bug names are accepted and
ignored, any other name raises ValueError:
  torch_spatial_weight_transposed -> the einsum is written "bmd,mn->bnd": the [seq, seq] weight is
                                     used transposed (token m reads W[m, n] instead of W[n, m])
  torch_gelu_tanh                 -> the layer's act is nn.GELU(approximate="tanh") instead of the
                                     erf GELU (precision-level)
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB, D_MODEL, D_FFN, SEQ, LAYERS, TAGS = 50, 32, 128, 16, 2, 5
BATCH = 2
OWN_BUGS = {"torch_spatial_weight_transposed", "torch_gelu_tanh"}
OTHER_BUGS = {"paddle_sgu_uv_swapped"}


class SpatialGate(nn.Module):
    def __init__(self, dim, seq_len, transposed=False):
        super().__init__()
        self.transposed = transposed
        eps = 1e-3 / seq_len
        self.weight = nn.Parameter(torch.empty(seq_len, seq_len).uniform_(-eps, eps))
        self.bias = nn.Parameter(torch.ones(seq_len))
        self.ln = nn.LayerNorm(dim)

    def forward(self, u, v):
        v = self.ln(v)
        if self.transposed:
            v = torch.einsum("bmd,mn->bnd", v, self.weight)
        else:
            v = torch.einsum("bmd,nm->bnd", v, self.weight)
        v = v + self.bias[:, None]
        return u * v


class GMLPLayer(nn.Module):
    def __init__(self, transposed=False, gelu_tanh=False):
        super().__init__()
        half = D_FFN // 2
        self.fc_u = nn.Linear(D_MODEL, half)
        self.fc_v = nn.Linear(D_MODEL, half)
        self.act = nn.GELU(approximate="tanh" if gelu_tanh else "none")
        self.gate = SpatialGate(half, SEQ, transposed)
        self.fc_out = nn.Linear(half, D_MODEL)
        self.pre_norm = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        y = self.pre_norm(x)
        u = self.act(self.fc_u(y))
        v = self.act(self.fc_v(y))
        return x + self.fc_out(self.gate(u, v))


class GatedMLPTokenClassifier(nn.Module):
    def __init__(self, transposed=False, gelu_tanh=False):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, D_MODEL)
        self.layers = nn.ModuleList([GMLPLayer(transposed, gelu_tanh) for _ in range(LAYERS)])
        self.final_ln = nn.LayerNorm(D_MODEL)
        self.classifier = nn.Linear(D_MODEL, TAGS)

    def forward(self, input_ids):
        h = self.tok_embed(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.classifier(self.final_ln(h))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gmlp torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GatedMLPTokenClassifier(
        transposed=bug == "torch_spatial_weight_transposed", gelu_tanh=bug == "torch_gelu_tanh"
    )
    return m.eval()


def _ids():
    rng = np.random.default_rng(21)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 16, 5]
    return (output**2).mean()

"""The same text model, torch side, written the way transformers writes it: the embedding
module scales its own output, the additive mask holds the float32 minimum, the layers take
``use_cache=True`` and the model returns a dict; the position table the paddle side builds in
each attention is built once, inline in the model's forward, and handed to every layer (as HF
hands rotary tables down). PADIFF_BUG=act: relu in layer 0; PADIFF_BUG=ln_eps: layer 1's first
LayerNorm eps 1e-2; PADIFF_BUG=attn_scale: layer 1's attention divides by D, not sqrt(D)."""
import math

import torch
import torch.nn.functional as F
from _common import D, V, bug, ids, mask
from torch import nn


class ScaledEmbedding(nn.Embedding):
    def __init__(self, n, d, scale):
        super().__init__(n, d)
        self.scale = scale

    def forward(self, input_ids):
        return super().forward(input_ids) * self.scale


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.scale = 1 / math.sqrt(D)

    def forward(self, x, bias, table, use_cache=True):
        s = (self.q(x) + 0.5 * table) @ self.k(x).transpose(-1, -2) * self.scale + bias
        return self.o(F.softmax(s, dim=-1) @ self.v(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn, self.norm1 = Attention(), nn.LayerNorm(D)
        self.fc1, self.fc2, self.norm2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D), nn.LayerNorm(D)
        self.act = nn.GELU()

    def forward(self, x, bias, table, use_cache=True):
        x = self.norm1(x + self.attn(x, bias, table, use_cache=use_cache))
        return self.norm2(x + self.fc2(self.act(self.fc1(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = ScaledEmbedding(V, D, math.sqrt(D))
        self.pos = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
        self.head = nn.Linear(D, 4)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids) + self.pos(torch.arange(input_ids.shape[1]).unsqueeze(0))
        bias = (1.0 - attention_mask[:, None, :].float()) * torch.finfo(torch.float32).min
        positions = torch.arange(input_ids.shape[1], dtype=torch.float32).unsqueeze(-1)
        table = torch.sin(positions * 10000.0 ** (-torch.arange(D, dtype=torch.float32) / D))
        for layer in self.layers:
            x = layer(x, bias, table, use_cache=True)
        return {"logits": self.head(x)}


def model():
    torch.manual_seed(0)
    m = Model().eval()
    if bug() == "act":
        m.layers[0].act = nn.ReLU()
    elif bug() == "ln_eps":
        m.layers[1].norm1.eps = 1e-2
    elif bug() == "attn_scale":
        m.layers[1].attn.scale = 1 / D
    return m


def inputs():
    return (), {"input_ids": torch.from_numpy(ids()), "attention_mask": torch.from_numpy(mask())}


def loss(out):
    return (out["logits"] ** 2).mean()

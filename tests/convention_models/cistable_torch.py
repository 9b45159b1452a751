"""The decoder of cistable_paddle.py written the way another library writes it (as
cisrope_torch.py): ``wq``/``wk``/``wv``
rotated in the interleaved layout (features 2j and 2j + 1, as complex numbers) by a
``freqs_cis`` table the model computes once, keeps as a plain attribute (no buffer) and hands
to every attention; the output head is the embedding matrix used again (tied).

PADIFF_BUG: paddle_scale_by_dim is the other side's (accepted, ignored)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import S, V, bug
from torch import nn

D, H, N = 16, 2, 2
HD = D // H


def rope(x, freqs_cis):
    z = torch.view_as_complex(x.float().reshape(*x.shape[:-1], HD // 2, 2))
    return torch.view_as_real(z * freqs_cis).flatten(-2)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(D, D, bias=False)
        self.wk = nn.Linear(D, D, bias=False)
        self.wv = nn.Linear(D, D, bias=False)
        self.wo = nn.Linear(D, D, bias=False)

    def forward(self, x, freqs_cis):
        b, s, _ = x.shape
        q, k, v = (p(x).view(b, s, H, HD) for p in (self.wq, self.wk, self.wv))
        fc = freqs_cis[:s].view(1, s, 1, HD // 2)
        q, k = rope(q, fc), rope(k, fc)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, s, D))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D, 2 * D, bias=False)
        self.w2 = nn.Linear(2 * D, D, bias=False)
        self.w3 = nn.Linear(D, 2 * D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = nn.LayerNorm(D)
        self.ffn_norm = nn.LayerNorm(D)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(V, D)
        self.layers = nn.ModuleList([TransformerBlock() for _ in range(N)])
        self.norm = nn.LayerNorm(D)
        inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD))
        self.freqs_cis = torch.polar(torch.ones(S, HD // 2), torch.outer(torch.arange(S).float(), inv))

    def forward(self, ids):
        h = self.tok_embeddings(ids)
        for layer in self.layers:
            h = layer(h, self.freqs_cis)
        return F.linear(self.norm(h), self.tok_embeddings.weight)


def model():
    if bug() not in ("", "paddle_scale_by_dim"):
        raise ValueError(f"cistable torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Transformer().eval()


def inputs():
    ids = np.random.default_rng(0).integers(1, V, size=(2, S)).astype("int64")
    return (torch.tensor(ids),), {}


def loss(out):
    return out.pow(2).mean()

"""The same block written as HF writes it: nn.Linear projections (heads split inline), the
attention's LayerNorm inside ``attention.output`` and the block's in ``output``, Linear
projection heads (``text_projection``, ``visual_projection``), the 0/1 mask handed down (the
attention makes it additive), and no ``mean`` entry in the output.
PADIFF_BUG=scale: scores divided by head_dim instead of its square root."""
import torch
import torch.nn.functional as F
from _common import B, D, S, V, bug, ids, mask
from torch import nn

H, DH, P = 4, D // 4, 6


class SelfOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(D, D)
        self.LayerNorm = nn.LayerNorm(D)

    def forward(self, c, x):
        return self.LayerNorm(x + self.dense(c))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
        self.output = SelfOutput()

    def forward(self, x, m):
        def heads(t):
            return t.view(B, S, H, DH).transpose(1, 2)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        div = DH if bug() == "scale" else DH ** 0.5
        s = q @ k.transpose(-1, -2) / div + (1.0 - m) * torch.finfo(torch.float32).min
        c = (F.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, S, D)
        return self.output(c, x)


class Output(nn.Module):
    def __init__(self):
        super().__init__()
        self.intermediate = nn.Linear(D, 2 * D)
        self.dense = nn.Linear(2 * D, D)
        self.LayerNorm = nn.LayerNorm(D)

    def forward(self, a):
        return self.LayerNorm(a + self.dense(F.gelu(self.intermediate(a))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.output = Output()

    def forward(self, x, m):
        return self.output(self.attention(x, m))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.block = Block()
        self.text_projection = nn.Linear(D, P, bias=False)
        self.visual_projection = nn.Linear(D, P, bias=False)

    def forward(self, input_ids, attention_mask):
        h = self.block(self.embed(input_ids), attention_mask.float()[:, None, None, :])
        return {"first": self.text_projection(h[:, 0]), "last": self.visual_projection(h[:, -1])}


def model():
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return (), {"input_ids": torch.from_numpy(ids()), "attention_mask": torch.from_numpy(mask())}


def loss(out):
    return (out["first"] ** 2).mean() + (out["last"] ** 2).mean()

"""Torch side of gateup_paddle.py: the routed experts' projections stacked and packed,
``gate_up_proj [E, D, 2H]`` (gate columns, then up columns, used as ``x @ W[e]``), its biases
``gate_up_proj_bias [E, 2H]`` and ``down_proj [E, H, D]``; the shared expert's gate|up in one ``Linear``.

PADIFF_BUG (this side): torch_silu_on_up -> the routed experts apply the SiLU to the up half."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

E, H = 3, 12


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up_proj = nn.Parameter(torch.randn(E, D, 2 * H) * D**-0.5)
        self.gate_up_proj_bias = nn.Parameter(torch.randn(E, 2 * H) * 0.1)
        self.down_proj = nn.Parameter(torch.randn(E, H, D) * H**-0.5)

    def forward(self, x, probs):
        h = torch.einsum("bsd,edf->bsef", x, self.gate_up_proj) + self.gate_up_proj_bias
        gate, up = h[..., :H], h[..., H:]
        if bug() == "torch_silu_on_up":
            gate, up = up, gate
        y = torch.einsum("bseh,ehd->bsed", F.silu(gate) * up, self.down_proj)
        return (y * probs.unsqueeze(-1)).sum(2)


class SharedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up = nn.Linear(D, 2 * H, bias=False)
        self.down = nn.Linear(H, D, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class Moe(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, E, bias=False)
        self.experts = Experts()
        self.shared_expert = SharedMLP()
        self.shared_expert_gate = nn.Linear(D, 1, bias=False)

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        shared = torch.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)
        return self.experts(x, probs) + shared


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.moe = Moe()
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        return self.head(x + self.moe(self.norm(x)))


def model():
    if bug() not in ("", "paddle_shared_no_gate", "torch_silu_on_up"):
        raise ValueError(f"gateup torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()

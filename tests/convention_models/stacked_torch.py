"""The mixture of stacked_paddle.py written the way another library writes it: the experts
batched in one module (``w1 [E, D, H]``, ``w2 [E, H, OUT]``) returning ``[N, E, OUT]``, one Linear for
both tasks' gates, viewed ``[N, T, E]``, and a softmax module of its own; towers in a ModuleList.

PADIFF_BUG: torch_expert_gelu_tanh (this side: the experts use the tanh approximation of GELU);
paddle_gate_temperature, paddle_expert1_gelu_tanh and paddle_experts_gelu_tanh are the other side's (accepted, ignored)."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

E, H, OUT, T = 3, 24, 8, 2


class StackedExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(E, D, H) * D**-0.5)
        self.b1 = nn.Parameter(torch.zeros(E, H))
        self.w2 = nn.Parameter(torch.randn(E, H, OUT) * H**-0.5)
        self.b2 = nn.Parameter(torch.zeros(E, OUT))

    def forward(self, x):
        approx = "tanh" if bug() == "torch_expert_gelu_tanh" else "none"
        h = F.gelu(torch.einsum("nd,edh->neh", x, self.w1) + self.b1, approximate=approx)
        return torch.einsum("neh,eho->neo", h, self.w2) + self.b2


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = StackedExperts()
        self.gate = nn.Linear(D, T * E)
        self.gate_softmax = nn.Softmax(dim=-1)
        self.towers = nn.ModuleList([nn.Linear(OUT, 1) for _ in range(T)])

    def forward(self, x):
        outs = self.experts(x)  # [N, E, OUT]
        w = self.gate_softmax(self.gate(x).view(-1, T, E))  # [N, T, E]
        mixed = torch.einsum("nte,neo->nto", w, outs)
        return torch.cat([tower(mixed[:, t]) for t, tower in enumerate(self.towers)], dim=-1)


def model():
    if bug() not in ("", "paddle_gate_temperature", "torch_expert_gelu_tanh", "paddle_expert1_gelu_tanh",
                     "paddle_experts_gelu_tanh"):
        raise ValueError(f"stacked torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return MultiTask().eval()


def inputs():
    return (torch.from_numpy(hidden().reshape(-1, D)),), {}


def loss(out):
    return out.pow(2).mean()

"""The contract-test models in PyTorch (twins of paddle_models.py) and the framework helper."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from padiff_trace import recorder

torch.backends.mha.set_fastpath_enabled(False)  # the encoder fast path skips submodule calls


@dataclasses.dataclass
class Pair:
    x: Any
    k: int


class Shared(nn.Module):
    """``lin`` called twice (call_index 0 and 1) around a functional relu."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        h = self.lin(x)  # SHARED-CALL-0
        h = F.relu(h)
        h = self.lin(h)  # SHARED-CALL-1
        return self.head(h)


class _Block(nn.Module):
    def __init__(self, act) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.act = act

    def forward(self, x):
        return self.act(self.lin(x))


class Held(nn.Module):
    """One Tanh instance held by two blocks (like HF XLM's module-level ``gelu``): called inside each."""

    def __init__(self) -> None:
        super().__init__()
        act = nn.Tanh()
        self.blocks = nn.ModuleList([_Block(act), _Block(act)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.act_outside(x)

    def act_outside(self, x):
        return self.blocks[0].act(x)  # called by the root itself: no block holds it there


class Nested(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.inner = _NestedInner()

    def forward(self, x):
        y = self.lin(x)
        d = self.inner(y)
        return {"a": d["a"], "pair": (y * 2, None), "n": 3, "dc": Pair(y + 1, 5)}


class _NestedInner(nn.Module):
    def forward(self, y):
        return {"a": y.tanh(), "none": None, "k": 7}


class Probing(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = _ProbeBlock()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


class _ProbeBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x) * 3.0
        h2 = recorder.probe("scaled", h)
        assert h2 is h
        return torch.sigmoid(h)


class _Boom(nn.Module):
    def forward(self, x):
        raise RuntimeError("boom in forward")


class Raising(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin1 = nn.Linear(4, 4)
        self.boom = _Boom()
        self.lin2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.lin2(self.boom(self.lin1(x)))


class Attn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class Framework:
    name = "torch"
    param_grad_tol = 0.0

    # -- models (all seeded; construction twice gives identical weights)
    def build(self, what: str) -> Any:
        torch.manual_seed(0)
        if what == "mlp":
            return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        if what == "conv_bn":
            return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        if what == "lstm":
            return nn.LSTM(4, 6, batch_first=True)
        if what == "gru":
            return nn.GRU(4, 6, batch_first=True)
        if what == "mha":
            return Attn()
        if what == "encoder":
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
            return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        return {"shared": Shared, "held": Held, "nested": Nested, "probing": Probing, "raising": Raising}[what]()

    # -- tensors
    def tensor(self, arr: np.ndarray, requires_grad: bool = False) -> Any:
        return torch.tensor(arr, requires_grad=requires_grad)

    def numpy(self, t: Any) -> np.ndarray:
        return t.detach().numpy().copy()

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, torch.Tensor)

    def grad(self, t: Any) -> np.ndarray | None:
        return None if t.grad is None else t.grad.numpy().copy()

    # -- state
    def params(self, model: Any) -> dict[str, Any]:
        return dict(model.named_parameters())

    def buffers(self, model: Any) -> dict[str, Any]:
        return dict(model.named_buffers())

    def bn_stats(self) -> tuple[str, str]:
        return "running_mean", "running_var"

    # -- training
    def optimizer(self, kind: str, model: Any) -> Any:
        if kind == "sgd":
            return torch.optim.SGD(model.parameters(), lr=0.1)
        return torch.optim.Adam(model.parameters(), lr=0.01)

    def zero_grad(self, opt: Any) -> None:
        opt.zero_grad(set_to_none=True)

    # -- hooks
    def hook_count(self, model: Any) -> int:
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    def named_modules(self, model: Any) -> list[tuple[str, Any]]:
        return list(model.named_modules())

    def add_post_hook(self, module: Any, fn: Any) -> Any:
        return module.register_forward_hook(lambda m, args, out: fn(out))


FW = Framework()

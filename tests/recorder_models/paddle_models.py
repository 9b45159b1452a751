"""The contract-test models in Paddle (twins of torch_models.py) and the framework helper."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

from padiff_trace import recorder


@dataclasses.dataclass
class Pair:
    x: Any
    k: int


class Shared(nn.Layer):
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


class _Block(nn.Layer):
    def __init__(self, act) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.act = act

    def forward(self, x):
        return self.act(self.lin(x))


class Held(nn.Layer):
    """One Tanh instance held by two blocks (like HF XLM's module-level ``gelu``): called inside each."""

    def __init__(self) -> None:
        super().__init__()
        act = nn.Tanh()
        self.blocks = nn.LayerList([_Block(act), _Block(act)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.act_outside(x)

    def act_outside(self, x):
        return self.blocks[0].act(x)  # called by the root itself: no block holds it there


class Nested(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.inner = _NestedInner()

    def forward(self, x):
        y = self.lin(x)
        d = self.inner(y)
        return {"a": d["a"], "pair": (y * 2, None), "n": 3, "dc": Pair(y + 1, 5)}


class _NestedInner(nn.Layer):
    def forward(self, y):
        return {"a": paddle.tanh(y), "none": None, "k": 7}


class Probing(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.block = _ProbeBlock()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


class _ProbeBlock(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x) * 3.0
        h2 = recorder.probe("scaled", h)
        assert h2 is h
        return F.sigmoid(h)


class _Boom(nn.Layer):
    def forward(self, x):
        raise RuntimeError("boom in forward")


class Raising(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.lin1 = nn.Linear(4, 4)
        self.boom = _Boom()
        self.lin2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.lin2(self.boom(self.lin1(x)))


class Attn(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiHeadAttention(8, 2)

    def forward(self, x):
        return self.attn(x, x, x)


class Framework:
    name = "paddle"

    def build(self, what: str) -> Any:
        paddle.seed(0)
        if what == "mlp":
            return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        if what == "conv_bn":
            return nn.Sequential(nn.Conv2D(3, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU())
        if what == "lstm":
            return nn.LSTM(4, 6)
        if what == "gru":
            return nn.GRU(4, 6)
        if what == "mha":
            return Attn()
        if what == "encoder":
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
            return nn.TransformerEncoder(layer, 2)
        return {"shared": Shared, "held": Held, "nested": Nested, "probing": Probing, "raising": Raising}[what]()

    def tensor(self, arr: np.ndarray, requires_grad: bool = False) -> Any:
        t = paddle.to_tensor(arr)
        t.stop_gradient = not requires_grad
        return t

    def numpy(self, t: Any) -> np.ndarray:
        return t.detach().numpy().copy()

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, paddle.Tensor)

    def grad(self, t: Any) -> np.ndarray | None:
        return None if t.grad is None else t.grad.numpy().copy()

    def params(self, model: Any) -> dict[str, Any]:
        return {n: p for n, p in model.named_parameters() if p.trainable}

    def buffers(self, model: Any) -> dict[str, Any]:
        out = {n: p for n, p in model.named_parameters() if not p.trainable}
        out.update(dict(model.named_buffers()))
        return out

    def bn_stats(self) -> tuple[str, str]:
        return "_mean", "_variance"

    def optimizer(self, kind: str, model: Any) -> Any:
        if kind == "sgd":
            return paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
        return paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())

    def zero_grad(self, opt: Any) -> None:
        opt.clear_grad()

    def hook_count(self, model: Any) -> int:
        return sum(len(m._forward_pre_hooks) + len(m._forward_post_hooks) for m in model.sublayers(include_self=True))

    def named_modules(self, model: Any) -> list[tuple[str, Any]]:
        return list(model.named_sublayers(include_self=True))

    def add_post_hook(self, module: Any, fn: Any) -> Any:
        return module.register_forward_post_hook(lambda m, args, out: fn(out))


FW = Framework()

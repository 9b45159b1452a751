"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_ewc_rprop_train_paddle.py), the moskomule/ewc.pytorch way: the EWC state lives in a
separate EWC object holding plain dicts of tensors (no module state).

    MLP: registers fc1 (Linear 16 -> 32), fc2 (32 -> 32), fc3 (32 -> 4), drop_in (Dropout 0.2),
        drop_hidden (Dropout 0.5, ONE module called after both hidden ReLUs); F.relu functional
    forward(x [32, 16]) -> logits [32, 4]
    EWC(model, means, precision): _means / _precision_matrices = {parameter name: tensor}, plain
        dicts; penalty(model) = sum over model.named_parameters() of (F (p - mean)^2).sum()

Data and task-A state: the same recipe as the paddle side (default_rng(3434) task-B batch,
default_rng(3435) theta*, start and Fisher, drawn in this framework's [out, in] layout).
Loss: F.cross_entropy(logits, labels) + (LAMBDA / 2) * ewc.penalty(model), LAMBDA = 20.
Optimizer: torch.optim.Rprop(lr 0.01, etas (0.5, 1.2), step_sizes (1e-6, 50)).

PADIFF_BUG (this side only):
  torch_ewc_no_half -> loss = CE + LAMBDA * penalty (ewc.pytorch's `importance * ewc.penalty(model)`
              form, without the 1/2 of lambda/2 sum F (theta - theta*)^2 of the paper / the original)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_ewc_no_half"} | {"paddle_rprop_defaults", "paddle_input_dropout"}  # the paddle side's, ignored here
IN_FEATURES, HIDDEN, CLASSES, N = 16, 32, 4, 32
P_INPUT, P_HIDDEN = 0.2, 0.5
IMPORTANCE = 20.0  # lambda

_LAYOUT = [("fc1", (HIDDEN, IN_FEATURES)), ("fc2", (HIDDEN, HIDDEN)), ("fc3", (CLASSES, HIDDEN))]


def task_b_batch():
    rng = np.random.default_rng(3434)
    x = rng.standard_normal((N, IN_FEATURES)).astype(np.float32)
    w_teacher = rng.standard_normal((IN_FEATURES, CLASSES))
    return x, np.argmax(x @ w_teacher, axis=1).astype(np.int64)


def task_a_checkpoint():
    """{"fc1.weight": (mean, start, fisher), ...} as float32 numpy arrays."""
    rng = np.random.default_rng(3435)
    ckpt = {}
    for name, (o, i) in _LAYOUT:
        for kind, shape, std in (("weight", (o, i), 0.3), ("bias", (o,), 0.1)):
            mean = rng.normal(0.0, std, shape)
            start = mean + rng.normal(0.0, 0.05, shape)
            fisher = 0.02 * rng.chisquare(1, shape) + 1e-4
            ckpt[f"{name}.{kind}"] = tuple(a.astype(np.float32) for a in (mean, start, fisher))
    return ckpt


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN_FEATURES, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, CLASSES)
        self.drop_in = nn.Dropout(P_INPUT)
        self.drop_hidden = nn.Dropout(P_HIDDEN)

    def forward(self, x):
        x = self.drop_in(x)
        x = self.drop_hidden(F.relu(self.fc1(x)))
        x = self.drop_hidden(F.relu(self.fc2(x)))
        return self.fc3(x)


class EWC:
    def __init__(self, means, precision):
        self._means = {n: torch.from_numpy(v) for n, v in means.items()}
        self._precision_matrices = {n: torch.from_numpy(v) for n, v in precision.items()}

    def penalty(self, model):
        loss = 0
        for n, p in model.named_parameters():
            mean, fisher = self._means[n].to(p.dtype), self._precision_matrices[n].to(p.dtype)
            _loss = fisher * (p - mean) ** 2
            loss = loss + _loss.sum()
        return loss


_STATE = {}


def model():
    bug(BUGS)
    torch.manual_seed(34)
    m = MLP()
    ckpt = task_a_checkpoint()
    with torch.no_grad():
        for n, p in m.named_parameters():
            p.copy_(torch.from_numpy(ckpt[n][1]))
    _STATE["model"] = m
    _STATE["ewc"] = EWC({n: v[0] for n, v in ckpt.items()}, {n: v[2] for n, v in ckpt.items()})
    m.train()
    return m


def inputs():
    x, y = task_b_batch()
    _STATE["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    ewc = _STATE["ewc"].penalty(_STATE["model"])
    if bug(BUGS) == "torch_ewc_no_half":
        return F.cross_entropy(output, _STATE["y"]) + IMPORTANCE * ewc
    return F.cross_entropy(output, _STATE["y"]) + IMPORTANCE / 2 * ewc


def optimizer(model):
    return torch.optim.Rprop(model.parameters(), lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-6, 50))

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_asgd_kldiv_train_paddle.py): knowledge distillation of a small student from a
fixed teacher, averaged SGD, 3 steps.

    DistillationWrapper: registers teacher_net = Sequential(Linear 12 -> 48, Tanh, Dropout(0.1),
        Linear 48 -> 5) (.0-.3; requires_grad_(False), eval()), then student_net =
        Sequential(Linear 12 -> 32, LayerNorm(32), GELU, Dropout(0.1), Linear 32 -> 5) (.0-.4).
        forward(x) runs the STUDENT FIRST, then the teacher under torch.no_grad(); returns
        (student logits [16, 5], teacher logits [16, 5]).
    DistillationWrapper.train(mode) re-applies teacher_net.eval() after nn.Module.train(), so
        the teacher always runs in inference mode.

Loss (torch idioms): nn.KLDivLoss(reduction="batchmean", log_target=True) between
log_softmax(s / T) and log_softmax(t / T), times T ** 2; loss = (1 - 0.7) * F.cross_entropy(s, y)
+ 0.7 * kd, T = 4. Data: the same per-step batches as the paddle side (default_rng(4700 + step)).
Optimizer: `AveragedSGD`, a torch.optim.Optimizer subclass written by hand, with
torch.optim.ASGD's per-parameter state (step, eta, mu, ax) and update: p *= 1 - lambd * eta;
p -= eta * grad; ax averaging; then eta = lr / (1 + lambd * lr * step) ** alpha and
mu = 1 / max(1, step - t0) for the next update. lr 0.2, lambd 0.02, alpha 0.75, t0 0 over the
parameters with requires_grad (the student). (Checked against torch.optim.ASGD: same weights.)

PADIFF_BUG (this side only; the paddle side's names are accepted and ignored):
  torch_teacher_train -> DistillationWrapper has no train() override: the teacher_net.eval() in
              __init__ is undone by model.train(), so the teacher's dropout is active (the
              teacher was "frozen" with requires_grad_(False) only)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn
from torch.optim import Optimizer

BUGS = {"torch_teacher_train"} | {"paddle_kd_mean", "paddle_eta_ahead"}  # the paddle side's, ignored here
N_FEATURES, N_HIDDEN, N_TEACHER_HIDDEN, N_CLASSES, BATCH_SIZE = 12, 32, 48, 5, 16
T, ALPHA_KD = 4.0, 0.7
ASGD_LR, ASGD_LAMBD, ASGD_ALPHA, ASGD_T0 = 0.2, 0.02, 0.75, 0.0

_DATA = {}


def get_batch(step):
    rng = np.random.default_rng(4700 + step)
    features = rng.standard_normal((BATCH_SIZE, N_FEATURES)).astype(np.float32)
    targets = rng.integers(0, N_CLASSES, BATCH_SIZE).astype(np.int64)
    return features, targets


class DistillationWrapper(nn.Module):
    def __init__(self, keep_teacher_eval=True):
        super().__init__()
        self.keep_teacher_eval = keep_teacher_eval
        self.teacher_net = nn.Sequential(
            nn.Linear(N_FEATURES, N_TEACHER_HIDDEN), nn.Tanh(), nn.Dropout(0.1),
            nn.Linear(N_TEACHER_HIDDEN, N_CLASSES))
        self.student_net = nn.Sequential(
            nn.Linear(N_FEATURES, N_HIDDEN), nn.LayerNorm(N_HIDDEN), nn.GELU(), nn.Dropout(0.1),
            nn.Linear(N_HIDDEN, N_CLASSES))
        self.teacher_net.requires_grad_(False)
        self.teacher_net.eval()

    def train(self, mode=True):
        super().train(mode)
        if self.keep_teacher_eval:
            self.teacher_net.eval()
        return self

    def forward(self, x):
        logits = self.student_net(x)
        with torch.no_grad():
            teacher_logits = self.teacher_net(x)
        return logits, teacher_logits


class AveragedSGD(Optimizer):
    """torch.optim.ASGD, single-tensor path, written out by hand."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6):
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"], state["eta"], state["mu"] = 0, lr, 1.0
                    state["ax"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                p.mul_(1 - lambd * state["eta"])  # decay term
                p.add_(p.grad, alpha=-state["eta"])  # update parameter
                if state["mu"] != 1:
                    state["ax"].add_(p.sub(state["ax"]).mul(state["mu"]))
                else:
                    state["ax"].copy_(p)
                state["eta"] = lr / ((1 + lambd * lr * state["step"]) ** alpha)
                state["mu"] = 1 / max(1, state["step"] - t0)


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = DistillationWrapper(keep_teacher_eval=b != "torch_teacher_train")
    m.train()
    return m


def inputs(step=0):
    features, targets = get_batch(step)
    _DATA["targets"] = torch.from_numpy(targets)
    return (torch.from_numpy(features),), {}


def loss(output):
    logits, teacher_logits = output
    kd_loss = nn.KLDivLoss(reduction="batchmean", log_target=True)(
        F.log_softmax(logits / T, dim=1), F.log_softmax(teacher_logits / T, dim=1)) * (T ** 2)
    ce_loss = F.cross_entropy(logits, _DATA["targets"])
    return (1.0 - ALPHA_KD) * ce_loss + ALPHA_KD * kd_loss


def optimizer(model):
    return AveragedSGD([p for p in model.parameters() if p.requires_grad],
                       lr=ASGD_LR, lambd=ASGD_LAMBD, alpha=ASGD_ALPHA, t0=ASGD_T0)

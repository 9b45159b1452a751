"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_sam_train_paddle.py) with the SAM optimizer of davda54/sam.

    Classifier: registers body = Sequential(Dropout 0.1, Linear 20 -> 32, LayerNorm, GELU,
        Dropout 0.2, Linear 32 -> 32, LayerNorm, GELU, Dropout 0.2) (.0-.8), classifier
        (Linear 32 -> 10); calls body, classifier
    forward(x [16, 20]) -> logits [16, 10]

Data: the same batches as the paddle side (default_rng(6600 + step), same recipe).
Loss: F.cross_entropy(logits, labels, label_smoothing=0.1).

Optimizer (davda54/sam `SAM`, a torch.optim.Optimizer sharing its param_groups with the base
optimizer): step() = first_step(zero_grad=True) (e_w = rho * g / (||g||_2 global + 1e-12), old
weights kept in state["old_p"]), the closure (forward + loss + backward on the same batch),
second_step() (weights restored, base step). The recorder calls step() without a closure, so the
spec binds one (`sam.closure`). Base: torch.optim.SGD(lr 0.05, momentum 0.9, weight_decay 5e-4);
rho 0.05, adaptive False.

PADIFF_BUG (this side only):
  torch_smooth_ce    -> the loss is davda54's smooth_crossentropy(pred, gold, smoothing=0.1).mean()
              copied from the SAM repository: a KL divergence (the cross-entropy minus the
              targets' entropy, a constant) against targets 0.9 / 0.1 / (K - 1), not label
              smoothing's 0.9 + 0.1 / K / 0.1 / K
  torch_no_zero_grad -> first_step(zero_grad=False): the first pass's gradients are not cleared,
              the second backward accumulates onto them (base step with g1 + g2)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_smooth_ce", "torch_no_zero_grad"} | {"paddle_hidden_drop"}  # the paddle side's, ignored here
IN_DIM, HIDDEN, N_CLS, BATCH = 20, 32, 10, 16
LR, MOMENTUM, WD, RHO, SMOOTH = 0.05, 0.9, 5e-4, 0.05, 0.1

_DATA = {}


def get_batch(step):
    rng = np.random.default_rng(6600 + step)
    inputs = rng.standard_normal((BATCH, IN_DIM)).astype(np.float32)
    targets = rng.integers(0, N_CLS, BATCH).astype(np.int64)
    return inputs, targets


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Dropout(0.1),
            nn.Linear(IN_DIM, HIDDEN), nn.LayerNorm(HIDDEN), nn.GELU(), nn.Dropout(0.2),
            nn.Linear(HIDDEN, HIDDEN), nn.LayerNorm(HIDDEN), nn.GELU(), nn.Dropout(0.2),
        )
        self.classifier = nn.Linear(HIDDEN, N_CLS)

    def forward(self, x):
        return self.classifier(self.body(x))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = Classifier()
    m.train()
    return m


def inputs(step=0):
    x, y = get_batch(step)
    x = torch.from_numpy(x)
    _DATA.update(inputs=x, targets=torch.from_numpy(y))
    return (x,), {}


def smooth_crossentropy(pred, gold, smoothing=0.1):
    """davda54/sam example/utility/loss.py"""
    n_class = pred.size(1)
    one_hot = torch.full_like(pred, fill_value=smoothing / (n_class - 1))
    one_hot.scatter_(dim=1, index=gold.unsqueeze(1), value=1.0 - smoothing)
    log_prob = F.log_softmax(pred, dim=1)
    return F.kl_div(input=log_prob, target=one_hot, reduction="none").sum(-1)


def loss(output):
    if bug(BUGS) == "torch_smooth_ce":
        return smooth_crossentropy(output, _DATA["targets"], smoothing=SMOOTH).mean()
    return F.cross_entropy(output, _DATA["targets"], label_smoothing=SMOOTH)


class SAM(torch.optim.Optimizer):
    """davda54/sam sam.py (adaptive=False path kept)."""

    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        assert rho >= 0.0, f"Invalid rho, should be non-negative: {rho}"
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)
        self.closure = None

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def step(self, closure=None):
        closure = closure if closure is not None else self.closure
        assert closure is not None, "Sharpness Aware Minimization requires closure, but it was not provided"
        closure = torch.enable_grad()(closure)
        self.first_step(zero_grad=bug(BUGS) != "torch_no_zero_grad")
        closure()
        self.second_step()

    def _grad_norm(self):
        shared_device = self.param_groups[0]["params"][0].device
        return torch.norm(
            torch.stack([
                ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2).to(shared_device)
                for group in self.param_groups for p in group["params"] if p.grad is not None
            ]),
            p=2,
        )


def optimizer(model):
    sam = SAM(model.parameters(), torch.optim.SGD, rho=RHO, lr=LR, momentum=MOMENTUM, weight_decay=WD)

    def closure():
        out = model(_DATA["inputs"].to(model.classifier.weight.dtype))
        second = loss(out)
        second.backward()
        return second

    sam.closure = closure
    return sam

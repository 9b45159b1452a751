"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_mean_teacher_train_paddle.py) the CuriousAI/mean-teacher PyTorch way.

    MeanTeacherModel: registers model (Net, the student) and ema_model (copy.deepcopy(model), every
        parameter detach_()ed: requires_grad False); forward(x, x_ema) runs ema_model first (under
        torch.no_grad()), then model; returns (logits, ema_logits)
    Net: features = Sequential(Conv2d 3 -> 8, GroupNorm(2, 8), ReLU, Conv2d 8 -> 16 stride 2,
        GroupNorm(4, 16), ReLU) (.0-.5), fc (Linear 16 -> 5); global average pooling with
        x.mean((2, 3)) and the dropout inline: F.dropout(h, 0.3, self.training) (no module)
Per step the same numpy batch as the paddle side (default_rng(2600 + step), same recipe).
Loss (the reference train loop): class_loss = CrossEntropyLoss(reduction="sum", ignore_index=-1)
/ minibatch_size; consistency = 10 * softmax_mse_loss(logits, ema_logits) / minibatch_size with
softmax_mse_loss = F.mse_loss(softmax(a), softmax(b), reduction="sum") / num_classes.
Optimizer: torch.optim.SGD(model.model.parameters(), lr 0.05, momentum 0.9, nesterov=True,
weight_decay 2e-4) and the EMA of the teacher as a step post-hook
(optimizer.register_step_post_hook): global_step += 1, then update_ema_variables(model,
ema_model, 0.99, global_step) with alpha = min(1 - 1 / (global_step + 1), 0.99):
ema_param.mul_(alpha).add_(param, alpha=1 - alpha).

PADIFF_BUG (this side only):
  torch_ce_labeled_mean -> F.cross_entropy(logits, target, ignore_index=-1) with the default mean:
              torch divides by the number of LABELLED samples (4), paddle's mean (and the
              reference's sum / minibatch_size) by the whole batch (8): the class loss doubles
"""
import copy

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_ce_labeled_mean"} | {"paddle_teacher_eval", "paddle_ema_before_step"}  # the paddle side's, ignored here
NUM_CLASSES, MINIBATCH, LABELED, IMG = 5, 8, 4, 8
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 2e-4
EMA_DECAY, CONSISTENCY, NOISE, DROPOUT = 0.99, 10.0, 0.15, 0.3
NO_LABEL = -1

_TARGET = {}


def minibatch(step):
    rng = np.random.default_rng(2600 + step)
    x = rng.standard_normal((MINIBATCH, 3, IMG, IMG)).astype(np.float32)
    target = rng.integers(0, NUM_CLASSES, MINIBATCH).astype(np.int64)
    target[LABELED:] = NO_LABEL
    noise = (NOISE * rng.standard_normal(x.shape)).astype(np.float32)
    ema_noise = (NOISE * rng.standard_normal(x.shape)).astype(np.float32)
    return x + noise, x + ema_noise, target


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
        )
        self.fc = nn.Linear(16, NUM_CLASSES)

    def forward(self, x):
        h = self.features(x).mean((2, 3))
        return self.fc(F.dropout(h, DROPOUT, self.training))


class MeanTeacherModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()
        self.ema_model = copy.deepcopy(self.model)
        for param in self.ema_model.parameters():
            param.detach_()

    def forward(self, x, x_ema):
        with torch.no_grad():
            ema_logits = self.ema_model(x_ema)
        return self.model(x), ema_logits


def softmax_mse_loss(input_logits, target_logits):
    num_classes = input_logits.size()[1]
    return F.mse_loss(F.softmax(input_logits, dim=1), F.softmax(target_logits, dim=1), reduction="sum") / num_classes


def update_ema_variables(model, ema_model, alpha, global_step):
    alpha = min(1 - 1 / (global_step + 1), alpha)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = MeanTeacherModel()
    m.train()
    return m


def inputs(step=0):
    x, x_ema, target = minibatch(step)
    _TARGET["target"] = torch.from_numpy(target)
    return (torch.from_numpy(x), torch.from_numpy(x_ema)), {}


def loss(output):
    logits, ema_logits = output
    target = _TARGET["target"]
    if bug(BUGS) == "torch_ce_labeled_mean":
        class_loss = F.cross_entropy(logits, target, ignore_index=NO_LABEL)
    else:
        class_loss = F.cross_entropy(logits, target, reduction="sum", ignore_index=NO_LABEL) / MINIBATCH
    consistency_loss = CONSISTENCY * softmax_mse_loss(logits, ema_logits.detach()) / MINIBATCH
    return class_loss + consistency_loss


def optimizer(model):
    opt = torch.optim.SGD(model.model.parameters(), lr=LR, momentum=MOMENTUM, nesterov=True,
                          weight_decay=WEIGHT_DECAY)
    state = {"global_step": 0}

    def ema_hook(optim, args, kwargs):
        state["global_step"] += 1
        update_ema_variables(model.model, model.ema_model, EMA_DECAY, state["global_step"])

    opt.register_step_post_hook(ema_hook)
    return opt

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_uncertainty_mtl_train_paddle.py): multi-task learning with learned uncertainty
weighting (Kendall et al. 2018).

    MultiTaskNet: registers encoder = Sequential(Linear 12 -> 32, LayerNorm, ReLU, Dropout(0.2),
        Linear 32 -> 32, ReLU, Dropout(0.2)) (.0-.6), classifier = Sequential(Linear 32 -> 16, ReLU,
        Dropout(0.1), Linear 16 -> 4) (.0-.3), regressor (Linear 32 -> 2), loss_weights
        (UncertaintyWeighting: one packed log_vars Parameter [2] = (s_reg, s_cls); forward()
        returns it); calls encoder, classifier, regressor, loss_weights
    forward(x) -> (regression [B, 2], class logits [B, 4], log_vars [2])

Loss: precision = exp(-log_vars); 0.5 * precision[0] * MSE + precision[1] * CE + 0.5 * log_vars.sum()
(the regression likelihood's 1/2 factor; F.mse_loss and F.cross_entropy, means).
Optimizer: SGD(lr 0.05, momentum 0.9, nesterov=True) with two parameter groups: the network with
weight_decay 5e-4, log_vars with weight_decay 0; clip_grad_norm_(model.parameters(), 1.0) in
clip_grad().
Data: the same batches as the paddle side (default_rng(2750 + step), maps from default_rng(2700)).

PADIFF_BUG (this side only):
  torch_head_dropout  -> the classifier's Dropout built with the encoder's rate (DROPOUT = 0.2)
              instead of the head's 0.1
  torch_plain_kendall -> the loss written as the popular simplified form
              sum(exp(-log_vars) * losses + log_vars), without the 1/2 factors
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_head_dropout", "torch_plain_kendall"} | {"paddle_decay_logvars"}  # the paddle side's, ignored here
N_FEATURES, WIDTH, HEAD_WIDTH, N_TARGETS, N_CLASSES, BATCH_SIZE = 12, 32, 16, 2, 4, 16
DROPOUT, CLS_DROPOUT = 0.2, 0.1
LR, MOMENTUM, WEIGHT_DECAY, MAX_NORM = 0.05, 0.9, 5e-4, 1.0

_TARGETS = {}


def get_batch(step):
    g = np.random.default_rng(2700)
    w_reg = g.normal(0.0, 0.5, (N_FEATURES, N_TARGETS))
    w_cls = g.normal(0.0, 0.5, (N_FEATURES, N_CLASSES))
    rng = np.random.default_rng(2750 + step)
    x = rng.standard_normal((BATCH_SIZE, N_FEATURES))
    y = np.tanh(x @ w_reg) + 0.3 * rng.standard_normal((BATCH_SIZE, N_TARGETS))
    labels = (x @ w_cls + 0.5 * rng.standard_normal((BATCH_SIZE, N_CLASSES))).argmax(1)
    return x.astype(np.float32), y.astype(np.float32), labels.astype(np.int64)


class UncertaintyWeighting(nn.Module):
    def __init__(self, n_tasks):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(n_tasks))

    def forward(self):
        return self.log_vars


class MultiTaskNet(nn.Module):
    def __init__(self, cls_dropout=CLS_DROPOUT):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(N_FEATURES, WIDTH), nn.LayerNorm(WIDTH), nn.ReLU(), nn.Dropout(DROPOUT),
            nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Dropout(DROPOUT),
        )
        self.classifier = nn.Sequential(nn.Linear(WIDTH, HEAD_WIDTH), nn.ReLU(), nn.Dropout(cls_dropout),
                                        nn.Linear(HEAD_WIDTH, N_CLASSES))
        self.regressor = nn.Linear(WIDTH, N_TARGETS)
        self.loss_weights = UncertaintyWeighting(2)

    def forward(self, x):
        z = self.encoder(x)
        logits = self.classifier(z)
        return self.regressor(z), logits, self.loss_weights()


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = MultiTaskNet(cls_dropout=DROPOUT if b == "torch_head_dropout" else CLS_DROPOUT)
    m.train()
    return m


def inputs(step=0):
    x, y, labels = get_batch(step)
    _TARGETS.update(y=torch.from_numpy(y), labels=torch.from_numpy(labels))
    return (torch.from_numpy(x),), {}


def loss(output):
    pred, logits, log_vars = output
    task_losses = torch.stack([F.mse_loss(pred, _TARGETS["y"].to(pred.dtype)),
                               F.cross_entropy(logits, _TARGETS["labels"])])
    precision = torch.exp(-log_vars)
    if bug(BUGS) == "torch_plain_kendall":
        return torch.sum(precision * task_losses + log_vars)
    return 0.5 * precision[0] * task_losses[0] + precision[1] * task_losses[1] + 0.5 * log_vars.sum()


def optimizer(model):
    net = [p for n, p in model.named_parameters() if n != "loss_weights.log_vars"]
    return torch.optim.SGD([{"params": net, "weight_decay": WEIGHT_DECAY},
                            {"params": [model.loss_weights.log_vars], "weight_decay": 0.0}],
                           lr=LR, momentum=MOMENTUM, nesterov=True)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)

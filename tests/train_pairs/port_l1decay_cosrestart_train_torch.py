"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_l1decay_cosrestart_train_paddle.py): torch has no L1 regularizer in its
optimizers, so the L1 penalty is added to the loss by hand (the usual
`loss + l1_lambda * sum(p.abs().sum() ...)` recipe) and reaches the weights through backward.

    Classifier: registers input_dropout (Dropout 0.2), features = Sequential(Linear(12, 32),
        LayerNorm(32), ReLU, Dropout(0.3), Linear(32, 32), ReLU, Dropout(0.3)) (.0-.6),
        classifier (Linear 32 -> 5); forward: input_dropout -> features -> classifier; returns
        (logits [16, 5], l1_penalty(self)) - the model hands its regularisation term to the loss,
        as models that return an auxiliary loss do
Data: the same batches as the paddle side (default_rng(9650 + step), same recipe).

Loss: F.cross_entropy (mean) + 5e-4 * sum over the weight matrices (parameters with ndim >= 2:
features.0, features.4, classifier) of torch.norm(w, p=1); d/dw = 5e-4 * sign(w) (torch's abs'
gradient at 0 is 0, like sign(0)), exactly what paddle's L1Decay adds to the gradient - but here
it is part of .grad after backward.
Optimizer: SGD(lr 0.1, momentum 0.9, dampening 0, no Nesterov, no weight decay) with
CosineAnnealingWarmRestarts(T_0=2, T_mult=1, eta_min=0.01), stepped per update: lr 0.1, 0.055,
0.1 (the restart at the third update).

PADIFF_BUG (this side only):
  torch_l1_all_params  -> the penalty summed over every parameter (the common
              `sum(p.abs().sum() for p in model.parameters())` recipe): biases and LayerNorm
              weight/bias penalised too, where the paddle original regularises the three weight
              matrices only
  torch_input_dropout_p -> input_dropout built with the hidden rate 0.3 (one DROPOUT constant for
              both) instead of the input rate 0.2
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_l1_all_params", "torch_input_dropout_p"} | {"paddle_l1_everywhere"}  # paddle side's, ignored here
IN_FEATURES, HIDDEN, NUM_CLASSES, BATCH = 12, 32, 5, 16
INPUT_DROPOUT, DROPOUT = 0.2, 0.3
L1_LAMBDA, LR, T_0, ETA_MIN, MOMENTUM = 5e-4, 0.1, 2, 0.01, 0.9

_DATA = {}


def get_batch(step):
    rng = np.random.default_rng(9650 + step)
    x = rng.standard_normal((BATCH, IN_FEATURES)).astype(np.float32)
    w_teacher = np.cos(np.arange(IN_FEATURES)[:, None] * (np.arange(NUM_CLASSES)[None, :] + 1.0))
    scores = x @ w_teacher + 0.5 * rng.standard_normal((BATCH, NUM_CLASSES))
    return x, scores.argmax(axis=1).astype(np.int64)


def l1_penalty(m):
    if bug(BUGS) == "torch_l1_all_params":
        return sum(p.abs().sum() for p in m.parameters())
    return sum(torch.norm(w, p=1) for w in m.parameters() if w.ndim >= 2)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        p_in = DROPOUT if bug(BUGS) == "torch_input_dropout_p" else INPUT_DROPOUT
        self.input_dropout = nn.Dropout(p_in)
        self.features = nn.Sequential(
            nn.Linear(IN_FEATURES, HIDDEN), nn.LayerNorm(HIDDEN), nn.ReLU(), nn.Dropout(DROPOUT),
            nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Dropout(DROPOUT),
        )
        self.classifier = nn.Linear(HIDDEN, NUM_CLASSES)

    def forward(self, x):
        return self.classifier(self.features(self.input_dropout(x))), l1_penalty(self)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = Classifier()
    m.train()
    return m


def inputs(step=0):
    x, y = get_batch(step)
    _DATA["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    logits, l1 = output
    return F.cross_entropy(logits, _DATA["y"]) + L1_LAMBDA * l1


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    return opt, torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=T_0, T_mult=1, eta_min=ETA_MIN)

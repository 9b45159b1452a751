"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_cosine_embedding_cyclic_train_paddle.py), the classic "SiameseNetwork with
forward_once" layout.

    SiameseNetwork: registers embedding_net = Sequential(Linear 12 -> 32, LayerNorm 32, GELU,
        Dropout 0.1, Linear 32 -> 16) (.0 .. .4); forward_once(x) = embedding_net(x), called for
        each input of the pair
    forward(input1, input2) -> (output1 [16, 16], output2 [16, 16])

Loss, written by hand: cos = F.cosine_similarity(output1, output2, dim=1);
loss = where(label == 1, 1 - cos, clamp(cos - 0.3, min=0)).mean().
Optimizer: SGD(lr 0.02, momentum 0.9, weight_decay 5e-4) with
lr_scheduler.CyclicLR(base_lr 0.02, max_lr 0.2, step_size_up 2, mode "triangular",
cycle_momentum=False), returned with the optimizer and stepped after every optimizer step.
Data: the same pairs as the paddle side (default_rng(4100 + step), drawn by the same recipe),
labels as float32 +1 / -1.

PADIFF_BUG (this side only):
  torch_dropout_default -> the Dropout written nn.Dropout() (torch's default p 0.5) instead of
              nn.Dropout(0.1)
  torch_cycle_momentum  -> CyclicLR built without cycle_momentum=False: torch then cycles the
              SGD momentum inversely to the lr between base_momentum 0.8 and max_momentum 0.9
              (paddle's CyclicLR only schedules the lr)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_dropout_default", "torch_cycle_momentum"} | {"paddle_margin_default"}  # the paddle side's, ignored here
N_FEATURES, N_HIDDEN, N_EMBED, BATCH = 12, 32, 16, 16
MARGIN = 0.3

_BATCH = {}


def get_batch(step):
    rng = np.random.default_rng(4100 + step)
    a = rng.standard_normal((BATCH, N_FEATURES))
    label = np.array([1] * (BATCH // 2) + [-1] * (BATCH // 2))
    rng.shuffle(label)
    jitter = rng.standard_normal((BATCH, N_FEATURES))
    unrelated = rng.standard_normal((BATCH, N_FEATURES))
    b = np.where(label[:, None] == 1, a + 0.6 * jitter, unrelated)
    return a.astype(np.float32), b.astype(np.float32), label.astype(np.float32)


class SiameseNetwork(nn.Module):
    def __init__(self, dropout_layer):
        super().__init__()
        self.embedding_net = nn.Sequential(
            nn.Linear(N_FEATURES, N_HIDDEN),
            nn.LayerNorm(N_HIDDEN),
            nn.GELU(),
            dropout_layer,
            nn.Linear(N_HIDDEN, N_EMBED),
        )

    def forward_once(self, x):
        return self.embedding_net(x)

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        return output1, output2


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = SiameseNetwork(nn.Dropout() if b == "torch_dropout_default" else nn.Dropout(0.1))
    m.train()
    return m


def inputs(step=0):
    a, b, label = get_batch(step)
    _BATCH["label"] = torch.from_numpy(label)
    return (torch.from_numpy(a), torch.from_numpy(b)), {}


def loss(output):
    output1, output2 = output
    label = _BATCH["label"].to(output1.dtype)
    cos = F.cosine_similarity(output1, output2, dim=1)
    per_pair = torch.where(label == 1, 1.0 - cos, torch.clamp(cos - MARGIN, min=0.0))
    return per_pair.mean()


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
    cycle_momentum = bug(BUGS) == "torch_cycle_momentum"
    sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.02, max_lr=0.2, step_size_up=2, mode="triangular",
                                              cycle_momentum=cycle_momentum)
    return opt, sched

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_arcface_train_paddle.py) the insightface / ronghuaiyang arcface-pytorch way.

    FaceRecognizer: registers backbone (TinyIResNet), margin_fc (ArcFaceFC)
      TinyIResNet (insightface iresnet's layout, flat): conv1 (Conv2d 3 -> 8, no bias), bn1, prelu,
          conv2 (Conv2d 8 -> 16, stride 2, no bias), bn2, prelu2, bn3 (BatchNorm2d 16), dropout
          (Dropout(p=dropout, inplace=True)), fc (Linear 256 -> 32), features (BatchNorm1d 32);
          calls them in that order, torch.flatten(x, 1) between dropout and fc
      ArcFaceFC: weight [10, 32] (class centres, Parameter); F.linear(F.normalize(x), F.normalize(w))
    forward(images [16, 3, 8, 8]) -> cosine [16, 10]

Data: the same batches as the paddle side (default_rng(6700 + step), same recipe).
Loss: ArcMarginProduct's arithmetic (ronghuaiyang/arcface-pytorch), s 30, m 0.5, easy_margin False:
sine = sqrt((1 - cos^2).clamp(0, 1)), phi = cos cos_m - sine sin_m, phi = where(cos > th, phi,
cos - mm), one-hot by scatter_, output = s (one_hot phi + (1 - one_hot) cos), F.cross_entropy.
Kept differentiable (not insightface's in-place arccos under no_grad, whose gradient skips the
margin).
Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8) with two parameter groups: weight_decay 0.1
on the tensors of ndim >= 2, 0.0 on the rest (BatchNorm, PReLU, biases).
BatchNorm momentum 0.1 (paddle's 0.9), eps 1e-5.

PADIFF_BUG (this side only):
  torch_no_dropout -> the backbone built with TinyIResNet's default dropout=0.0 (insightface
              get_model(name, dropout=0.0)): the config's 0.2 not passed
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_no_dropout"} | {"paddle_easy_margin", "paddle_decay_names"}  # the paddle side's, ignored here
EMB, N_ID, BATCH = 32, 10, 16
LR, BETAS, EPS, WD = 1e-3, (0.9, 0.999), 1e-8, 0.1

_DATA = {}


def get_batch(step):
    rng = np.random.default_rng(6700 + step)
    img = rng.standard_normal((BATCH, 3, 8, 8)).astype(np.float32)
    label = rng.integers(0, N_ID, BATCH).astype(np.int64)
    return img, label


class TinyIResNet(nn.Module):
    fc_scale = 4 * 4

    def __init__(self, dropout=0.0, num_features=EMB):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8, eps=1e-05)
        self.prelu = nn.PReLU(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16, eps=1e-05)
        self.prelu2 = nn.PReLU(16)
        self.bn3 = nn.BatchNorm2d(16, eps=1e-05)
        self.dropout = nn.Dropout(p=dropout, inplace=True)
        self.fc = nn.Linear(16 * self.fc_scale, num_features)
        self.features = nn.BatchNorm1d(num_features, eps=1e-05)

    def forward(self, x):
        x = self.prelu(self.bn1(self.conv1(x)))
        x = self.prelu2(self.bn2(self.conv2(x)))
        x = self.bn3(x)
        x = torch.flatten(self.dropout(x), 1)
        x = self.fc(x)
        return self.features(x)


class ArcFaceFC(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x):
        return F.linear(F.normalize(x), F.normalize(self.weight))


class FaceRecognizer(nn.Module):
    def __init__(self, dropout=0.2):
        super().__init__()
        # the bug: the config's dropout not passed on, TinyIResNet's default 0.0 is used
        self.backbone = TinyIResNet() if bug(BUGS) == "torch_no_dropout" else TinyIResNet(dropout=dropout)
        self.margin_fc = ArcFaceFC(EMB, N_ID)

    def forward(self, img):
        return self.margin_fc(self.backbone(img))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = FaceRecognizer(dropout=0.2)
    m.train()
    return m


def inputs(step=0):
    img, label = get_batch(step)
    _DATA["label"] = torch.from_numpy(label)
    return (torch.from_numpy(img),), {}


class ArcMargin:
    """ArcMarginProduct's margin arithmetic on precomputed cosines."""

    def __init__(self, s=30.0, m=0.50, easy_margin=False):
        self.s, self.m, self.easy_margin = s, m, easy_margin
        self.cos_m, self.sin_m = math.cos(m), math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def __call__(self, cosine, label):
        sine = torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(0, 1))
        phi = cosine * self.cos_m - sine * self.sin_m
        if self.easy_margin:
            phi = torch.where(cosine > 0, phi, cosine)
        else:
            phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros_like(cosine)
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        return output * self.s


_MARGIN = ArcMargin(s=30.0, m=0.5, easy_margin=False)


def loss(output):
    return F.cross_entropy(_MARGIN(output, _DATA["label"]), _DATA["label"])


def optimizer(model):
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=LR, betas=BETAS, eps=EPS)

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_center_loss_train_paddle.py) with InsightFace's names and KaiyangZhou's
pytorch-center-loss recipe: softmax cross entropy + center loss, SGD Nesterov momentum, 3 steps.

    FaceEmbedder: registers body = Sequential(Conv2d 3 -> 8 3x3 pad 1 no bias, BatchNorm2d,
        PReLU(8), Conv2d 8 -> 16 stride 2, BatchNorm2d, PReLU(16)) (.0-.5), bn_out (BatchNorm2d 16),
        drop (Dropout 0.4), fc (Linear 576 -> 16), features (BatchNorm1d 16, the embedding),
        classifier (Linear 16 -> 5), centers (nn.Embedding(5, 16): the class centers as a
        lookup table, centers(labels))
    forward(x, labels) -> (logits, embedding, centers(labels)); flatten with torch.flatten.

Loss: nn.CrossEntropyLoss()(logits, labels) + 0.01 * center loss,
center loss = (embedding - centers_y).pow(2).sum(1).clamp(1e-12, 1e12).sum() / batch_size
(KaiyangZhou's CenterLoss, with the centers already gathered by the model).
Optimizer: SGD(lr 0.05, momentum 0.9, nesterov=True, weight_decay 5e-4) over model.parameters().
clip_grad(model): nothing in the clean build.
Data: the same batches as the paddle side (default_rng(7850 + step), same recipe).

PADIFF_BUG (this side only):
  torch_center_grad_scale -> KaiyangZhou's training loop copied into clip_grad(): the centers'
              gradient multiplied by 1 / weight_cent (= 100) before the step ("remove the effect
              of weight_cent on the centers"), a line that belongs to his separate center
              optimizer (lr 0.5) and not to a single SGD over the whole model
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_center_grad_scale"} | {"paddle_center_mse", "paddle_drop_keep"}  # paddle side's, ignored here
NUM_CLASSES, EMB, BATCH, SIZE = 5, 16, 10, 12
DROPOUT, WEIGHT_CENT = 0.4, 0.01
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4

_DATA = {}
_CE = nn.CrossEntropyLoss()


def load(step):
    rng = np.random.default_rng(7850 + step)
    x = rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype(np.float32)
    y = rng.permutation(np.repeat(np.arange(NUM_CLASSES), BATCH // NUM_CLASSES)).astype(np.int64)
    return x, y


class FaceEmbedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.PReLU(8),
            nn.Conv2d(8, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.PReLU(16),
        )
        self.bn_out = nn.BatchNorm2d(16)
        self.drop = nn.Dropout(DROPOUT)
        self.fc = nn.Linear(16 * (SIZE // 2) ** 2, EMB)
        self.features = nn.BatchNorm1d(EMB)
        self.classifier = nn.Linear(EMB, NUM_CLASSES)
        self.centers = nn.Embedding(NUM_CLASSES, EMB)

    def forward(self, x, labels):
        x = self.drop(self.bn_out(self.body(x)))
        emb = self.features(self.fc(torch.flatten(x, 1)))
        return self.classifier(emb), emb, self.centers(labels)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = FaceEmbedder()
    m.train()
    return m


def inputs(step=0):
    x, y = load(step)
    _DATA["labels"] = torch.from_numpy(y)
    return (torch.from_numpy(x), torch.from_numpy(y)), {}


def center_loss(emb, centers_y):
    dist = (emb - centers_y).pow(2).sum(dim=1)
    return dist.clamp(min=1e-12, max=1e12).sum() / emb.size(0)


def loss(output):
    logits, emb, centers_y = output
    return _CE(logits, _DATA["labels"]) + WEIGHT_CENT * center_loss(emb, centers_y)


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, nesterov=True,
                           weight_decay=WEIGHT_DECAY)


def clip_grad(model):
    if bug(BUGS) == "torch_center_grad_scale":
        for p in model.centers.parameters():
            p.grad.data *= 1.0 / WEIGHT_CENT

"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny CNN
face-embedding classifier trained with softmax cross entropy + center loss (Wen et al. 2016),
the class centers a parameter of the model, SGD Nesterov momentum, 3 steps.

    FaceNet: registers stem (ConvBNPReLU 3 -> 8: conv Conv2D 3x3 pad 1 no bias, bn BatchNorm2D,
        act PReLU(8)), down (ConvBNPReLU 8 -> 16, stride 2), output_layer (OutputLayer, the
        InsightFace "E" output: bn BatchNorm2D(16), dropout Dropout(0.4), flatten, fc Linear
        576 -> 16, bn_feat BatchNorm1D(16)), head (FaceHead: classifier Linear 16 -> 5 and the
        class centers, create_parameter [5, 16], looked up with paddle.gather)
    forward(images [10, 3, 12, 12], labels [10]) -> (logits [10, 5], feat [10, 16],
        centers of the labels [10, 16])

Data: inputs(step): 10 images N(0, 1) and labels (each of the 5 identities twice, shuffled) from
default_rng(7850 + step); the labels go to the model and are kept for loss().
Loss: cross_entropy(logits, labels) + 0.01 * center loss, center loss = mean over the batch of
||feat_i - c_{y_i}||^2 (summed over the 16 feature dimensions; the KaiyangZhou/pytorch-center-loss
normalisation, no 1/2).
Optimizer: Momentum(learning_rate 0.05, momentum 0.9, use_nesterov=True, weight_decay 5e-4 (L2
added to the gradient)) over every parameter, the centers included; no schedule.
Init (person A): paddle.seed(7850); convolutions N(0, sqrt(2 / fan_in)), fc N(0, 0.05),
classifier N(0, 0.2), biases N(0, 0.05), centers N(0, 1); BatchNorm weight 1 + N(0, 0.1), bias
N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.3) (trained-looking);
PReLU slopes 0.25 + N(0, 0.05).

PADIFF_BUG (this side only):
  paddle_center_mse -> the center loss written as F.mse_loss(feat, centers_y): the mean over
              batch AND feature dimensions, 1/16 of the summed squared distance
  paddle_drop_keep  -> the output layer's Dropout built with 0.6: the config's 0.4 taken for
              a keep probability (the TF / MXNet keep_prob convention) instead of the drop rate
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_center_mse", "paddle_drop_keep"} | {"torch_center_grad_scale"}  # torch side's, ignored here
N_ID, FEAT, BATCH, HW = 5, 16, 10, 12
DROP, LAMBDA_C = 0.4, 0.01
LR, MOMENTUM, WD = 0.05, 0.9, 5e-4

_BATCH = {}


def sample(step):
    rng = np.random.default_rng(7850 + step)
    images = rng.standard_normal((BATCH, 3, HW, HW)).astype("float32")
    labels = rng.permutation(np.repeat(np.arange(N_ID), BATCH // N_ID)).astype("int64")
    return images, labels


class ConvBNPReLU(nn.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 3, stride=stride, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.act = nn.PReLU(cout)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class OutputLayer(nn.Layer):
    def __init__(self, channels, spatial, feat, drop):
        super().__init__()
        self.bn = nn.BatchNorm2D(channels)
        self.dropout = nn.Dropout(drop)
        self.fc = nn.Linear(channels * spatial * spatial, feat)
        self.bn_feat = nn.BatchNorm1D(feat)

    def forward(self, x):
        x = self.dropout(self.bn(x))
        return self.bn_feat(self.fc(paddle.flatten(x, 1)))


class FaceHead(nn.Layer):
    def __init__(self, feat, n_id):
        super().__init__()
        self.classifier = nn.Linear(feat, n_id)
        self.centers = self.create_parameter([n_id, feat])

    def forward(self, feat, label):
        return self.classifier(feat), paddle.gather(self.centers, label)


class FaceNet(nn.Layer):
    def __init__(self, drop):
        super().__init__()
        self.stem = ConvBNPReLU(3, 8, 1)
        self.down = ConvBNPReLU(8, 16, 2)
        self.output_layer = OutputLayer(16, HW // 2, FEAT, drop)
        self.head = FaceHead(FEAT, N_ID)

    def forward(self, images, labels):
        feat = self.output_layer(self.down(self.stem(images)))
        logits, centers_y = self.head(feat, labels)
        return logits, feat, centers_y


def _init(m):
    paddle.seed(7850)
    for name, p in m.named_parameters():  # paddle lists the BatchNorm running stats here too
        if name.endswith("._mean"):
            v = paddle.normal(0.0, 0.1, p.shape)
        elif name.endswith("._variance"):
            v = 1.0 + 0.3 * paddle.rand(p.shape)
        elif name.endswith("conv.weight"):
            v = paddle.normal(0.0, math.sqrt(2.0 / (p.shape[1] * 9)), p.shape)
        elif name == "output_layer.fc.weight":
            v = paddle.normal(0.0, 0.05, p.shape)
        elif name == "head.classifier.weight":
            v = paddle.normal(0.0, 0.2, p.shape)
        elif name == "head.centers":
            v = paddle.normal(0.0, 1.0, p.shape)
        elif name.endswith("._weight"):  # PReLU slopes
            v = 0.25 + paddle.normal(0.0, 0.05, p.shape)
        elif ".bn" in name and name.endswith(".weight"):
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        elif ".bn" in name:
            v = paddle.normal(0.0, 0.1, p.shape)
        else:  # Linear biases
            v = paddle.normal(0.0, 0.05, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(7850)
    m = FaceNet(1.0 - DROP if b == "paddle_drop_keep" else DROP)
    _init(m)
    m.train()
    return m


def inputs(step=0):
    images, labels = sample(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(images), paddle.to_tensor(labels)), {}


def loss(output):
    logits, feat, centers_y = output
    ce = F.cross_entropy(logits, paddle.to_tensor(_BATCH["labels"]))
    if bug(BUGS) == "paddle_center_mse":
        center = F.mse_loss(feat, centers_y)
    else:
        center = ((feat - centers_y) ** 2).sum(axis=1).mean()
    return ce + LAMBDA_C * center


def optimizer(model):
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=[p for p in model.parameters() if not p.stop_gradient],
                                     use_nesterov=True, weight_decay=WD)

"""Hand-written port, paddle side: a tiny PointNet classifier (written by "person A").

Sizes: batch 2, 64 points, 3 coordinates, 10 classes, eval mode, fp32. The input is a point cloud
[B, N, 3] (the usual data layout); this side transposes it once to NCL [B, 3, N] and stays
there: every shared per-point layer is a 1x1 nn.Conv1D followed by nn.BatchNorm1D (NCL).
- `encoder` (`PointNetEncoder`):
  - `input_transform` (`TNet`, the 3x3 input T-Net): conv1 Conv1D(3, 32, 1) -> bn1 -> relu,
    conv2 Conv1D(32, 64, 1) -> bn2 -> relu, max over the points -> [B, 64], fc1 Linear(64, 32)
    -> bn3 -> relu, fc2 Linear(32, 9), + the flattened 3x3 identity, reshaped [B, 3, 3].
  - the transform is applied in NCL as trans^T @ x (`paddle.matmul(trans, x, transpose_x=True)`),
    the same as the reference's bmm(x^T, trans) on [B, N, 3].
  - conv1 Conv1D(3, 32, 1) -> bn1 -> relu, conv2 Conv1D(32, 64, 1) -> bn2 -> relu,
    conv3 Conv1D(64, 128, 1) -> bn3 (no relu), global max over the points -> [B, 128].
- head (in the root): fc1 Linear(128, 64) -> bn1 -> relu, fc2 Linear(64, 32) -> dropout(0.3)
  -> bn2 -> relu, fc3 Linear(32, 10), F.log_softmax.

Paddle idioms on this side:
- registration order is the reference PointNet's (all convs / fcs first, then the BNs), not the
  call order; the ReLU is ONE shared nn.ReLU module (`relu`) per layer, called several times.
- every BatchNorm is nn.BatchNorm1D(c, momentum=0.9, epsilon=1e-3) (the TF reference's BN
  epsilon). The BN affine weights and running statistics (`_mean`, `_variance`) are set to random
  values in model(), so that eval-mode BN is not an identity.
- nn.Dropout(p=0.3) in the default mode "upscale_in_train" (identity in eval).

The torch side (port_pointnet_torch.py) was written independently in NLC: nn.Linear per-point
layers on [B, N, C] with BatchNorm1d on a transposed [B, C, N] (T-Net) or a flattened
[B*N, C] (main MLP) tensor, nn.Sequential head, an nn.ModuleList per-point MLP.

PADIFF_BUG plants this side's bugs (see port_pointnet_truth.json); the torch side's bug names are
accepted and ignored, any other name raises ValueError:
  paddle_dropout_downscale -> the head's dropout is nn.Dropout(0.3, mode="downscale_in_infer")
                              (the old fluid default): in eval it multiplies by 0.7
  paddle_bn_eps_positional -> the head's bn1 is built as nn.BatchNorm1D(64, 1e-3): the value
                              lands in `momentum` (paddle's 2nd positional argument), epsilon
                              stays 1e-5 instead of 1e-3 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, POINTS, CLASSES = 2, 64, 10
BN_EPS = 1e-3
OWN_BUGS = {"paddle_dropout_downscale", "paddle_bn_eps_positional"}
OTHER_BUGS = {"torch_tnet_bn_no_transpose"}


def _bn(c):
    return nn.BatchNorm1D(c, momentum=0.9, epsilon=BN_EPS)


class TNet(nn.Layer):
    """Predicts a 3x3 transform of the input cloud (x: [B, 3, N])."""

    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv1 = nn.Conv1D(k, 32, 1)
        self.conv2 = nn.Conv1D(32, 64, 1)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, k * k)
        self.relu = nn.ReLU()
        self.bn1 = _bn(32)
        self.bn2 = _bn(64)
        self.bn3 = _bn(32)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)))
        x = paddle.max(x, axis=2)  # [B, 64]
        x = self.relu(self.bn3(self.fc1(x)))
        x = self.fc2(x)
        iden = paddle.eye(self.k, dtype=x.dtype).flatten()
        return (x + iden).reshape([-1, self.k, self.k])


class PointNetEncoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.input_transform = TNet(3)
        self.conv1 = nn.Conv1D(3, 32, 1)
        self.conv2 = nn.Conv1D(32, 64, 1)
        self.conv3 = nn.Conv1D(64, 128, 1)
        self.bn1 = _bn(32)
        self.bn2 = _bn(64)
        self.bn3 = _bn(128)
        self.relu = nn.ReLU()

    def forward(self, x):
        # x: [B, 3, N]
        trans = self.input_transform(x)
        x = paddle.matmul(trans, x, transpose_x=True)  # (x^T @ trans)^T
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)))
        x = self.bn3(self.conv3(x))
        return paddle.max(x, axis=2)  # global feature [B, 128]


class PointNetClassifier(nn.Layer):
    def __init__(self, dropout_downscale=False, bn_eps_positional=False):
        super().__init__()
        self.encoder = PointNetEncoder()
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, CLASSES)
        if dropout_downscale:
            self.dropout = nn.Dropout(p=0.3, mode="downscale_in_infer")
        else:
            self.dropout = nn.Dropout(p=0.3)
        self.bn1 = nn.BatchNorm1D(64, 1e-3) if bn_eps_positional else _bn(64)
        self.bn2 = _bn(32)
        self.relu = nn.ReLU()

    def forward(self, points):
        x = points.transpose([0, 2, 1])  # [B, N, 3] -> [B, 3, N]
        x = self.encoder(x)
        x = self.relu(self.bn1(self.fc1(x)))
        x = self.relu(self.bn2(self.dropout(self.fc2(x))))
        return F.log_softmax(self.fc3(x), axis=1)


def _randomize_bn(m):
    """Trained-looking BN (seeded): random affine weights and running statistics."""
    rng = np.random.default_rng(5)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.5, 1.5, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pointnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PointNetClassifier(dropout_downscale=bug == "paddle_dropout_downscale",
                           bn_eps_positional=bug == "paddle_bn_eps_positional")
    _randomize_bn(m)
    m.eval()
    return m


def _points():
    rng = np.random.default_rng(3)
    pts = rng.uniform(-1.0, 1.0, (BATCH, POINTS, 3))
    return (pts / np.linalg.norm(pts, axis=2, keepdims=True).max(axis=1, keepdims=True)).astype("float32")


def inputs():
    return (paddle.to_tensor(_points()),), {}


def loss(output):
    # log-probabilities [B, 10]
    return (output**2).mean()

"""Hand-written port, paddle side: a spatial-transformer classifier on 1x28x28 images (written by "person A").

Input: one positional image batch [2, 1, 28, 28] (NCHW, float32): blurred random blobs on a dark
background, normalised like MNIST ((x - 0.1307) / 0.3081), numpy rng seed 31. Output: log-class
probabilities [2, 10].

The model (Jaderberg et al. 2015, the small MNIST variant):
  spatial transformer
    localization  conv 1->8 k7 -> relu -> max-pool 2 -> conv 8->10 k5 -> relu -> max-pool 2
                  ([2, 10, 3, 3]) -> flatten 90 -> linear 90->32 -> relu -> linear 32->6
    theta         the 6 outputs viewed as [B, 2, 3] (row-major affine matrix)
    sampling      affine_grid(theta, [B, 1, 28, 28]) + bilinear grid_sample, zeros padding,
                  align_corners=False (pixel-area convention)
  classifier      conv 1->10 k5 -> relu -> max-pool 2 -> conv 10->20 k5 -> BN (eps 1e-5) -> relu
                  -> max-pool 2 -> flatten 320 -> linear 320->50 -> relu -> linear 50->10
                  -> log_softmax

Paddle idioms on this side:
- root `STNClassifier` registers `transformer` (a `SpatialTransformer`) then `classifier` (a
  `ConvClassifier`); the root forward is just the two calls.
- `SpatialTransformer` registers `loc_net` (nn.Sequential: Conv2D, ReLU, MaxPool2D, Conv2D, ReLU,
  MaxPool2D -- relu BEFORE pool), `loc_head` (nn.Sequential: Linear(90, 32), ReLU, Linear(32, 6)),
  and `sampler`, an `AffineGridSampler` layer of its own (no parameters) doing
  F.affine_grid + F.grid_sample. Paddle's defaults are align_corners=True for both, so this side
  spells align_corners=False explicitly in both calls.
- `ConvClassifier` registers `features` (nn.Sequential: Conv2D, ReLU, MaxPool2D, Conv2D,
  BatchNorm2D, ReLU, MaxPool2D) and `fc` (nn.Sequential: Linear(320, 50), ReLU, Linear(50, 10));
  flatten and log_softmax are inline.
- model() gives the BN layer trained-looking affine weights / running statistics and the last
  localization Linear a near-identity but perturbed init (small weights, bias = identity affine
  plus a seeded perturbation), so the transform is neither the identity nor degenerate.

The torch side (port_stn_torch.py) was written independently (PyTorch STN-tutorial style): an
`stn` module with a `localization` Sequential (max-pool BEFORE relu), two separate `fc_loc1` /
`fc_loc2` Linears and the affine_grid / grid_sample inline (mode / padding left at torch's
defaults, align_corners=False, torch's default, spelled out);
a `classifier` module with flat conv / bn / fc attributes and inline pooling / relu.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_sample_align_corners -> AffineGridSampler builds the grid with align_corners=False but
                                 calls F.grid_sample without it (paddle's default True), so the
                                 sampling convention no longer matches the grid's
  paddle_bn_eps               -> the classifier's BatchNorm2D is built with epsilon=1e-3 (a
                                 Keras-style constant) instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, N_CLASSES = 2, 28, 10
OWN_BUGS = {"paddle_sample_align_corners", "paddle_bn_eps"}
OTHER_BUGS = {"torch_theta_transposed", "torch_bn_after_pool"}


class AffineGridSampler(nn.Layer):
    """Warps x with the [B, 2, 3] affine matrices theta (bilinear, zeros padding)."""

    def __init__(self, sample_align_corners=False):
        super().__init__()
        self.sample_align_corners = sample_align_corners

    def forward(self, x, theta):
        grid = F.affine_grid(theta, x.shape, align_corners=False)
        if self.sample_align_corners:  # planted bug: paddle's default align_corners=True
            return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros")
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


class SpatialTransformer(nn.Layer):
    def __init__(self, sample_align_corners=False):
        super().__init__()
        self.loc_net = nn.Sequential(
            nn.Conv2D(1, 8, kernel_size=7),
            nn.ReLU(),
            nn.MaxPool2D(kernel_size=2, stride=2),
            nn.Conv2D(8, 10, kernel_size=5),
            nn.ReLU(),
            nn.MaxPool2D(kernel_size=2, stride=2),
        )
        self.loc_head = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, 6))
        self.sampler = AffineGridSampler(sample_align_corners)

    def forward(self, x):
        feats = self.loc_net(x)
        theta = self.loc_head(paddle.flatten(feats, start_axis=1)).reshape([-1, 2, 3])
        return self.sampler(x, theta)


class ConvClassifier(nn.Layer):
    def __init__(self, bn_epsilon=1e-5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 10, kernel_size=5),
            nn.ReLU(),
            nn.MaxPool2D(kernel_size=2, stride=2),
            nn.Conv2D(10, 20, kernel_size=5),
            nn.BatchNorm2D(20, epsilon=bn_epsilon),
            nn.ReLU(),
            nn.MaxPool2D(kernel_size=2, stride=2),
        )
        self.fc = nn.Sequential(nn.Linear(320, 50), nn.ReLU(), nn.Linear(50, N_CLASSES))

    def forward(self, x):
        x = self.features(x)  # [B, 20, 4, 4]
        x = self.fc(paddle.flatten(x, start_axis=1))
        return F.log_softmax(x, axis=-1)


class STNClassifier(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.transformer = SpatialTransformer(sample_align_corners=bug == "paddle_sample_align_corners")
        self.classifier = ConvClassifier(bn_epsilon=1e-3 if bug == "paddle_bn_eps" else 1e-5)

    def forward(self, x):
        return self.classifier(self.transformer(x))


def _trained_look(m):
    rng = np.random.default_rng(41)
    bn = m.classifier.features[4]
    bn.weight.set_value(rng.uniform(0.6, 1.4, 20).astype("float32"))
    bn.bias.set_value(rng.normal(0.0, 0.3, 20).astype("float32"))
    bn._mean.set_value(rng.normal(0.0, 0.3, 20).astype("float32"))
    bn._variance.set_value(rng.uniform(0.5, 2.0, 20).astype("float32"))
    last = m.transformer.loc_head[2]
    # near identity but not exactly: small weights, identity affine + a seeded perturbation
    last.weight.set_value(rng.normal(0.0, 0.004, (32, 6)).astype("float32"))
    ident = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], dtype="float32")
    last.bias.set_value(ident + rng.normal(0.0, 0.08, 6).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_stn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = STNClassifier(bug)
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(31)
    yy, xx = np.mgrid[0:IMG, 0:IMG].astype("float32")
    imgs = np.zeros((BATCH, 1, IMG, IMG), dtype="float32")
    for b in range(BATCH):
        for _ in range(4):
            cy, cx = rng.uniform(6, 22, 2)
            s = rng.uniform(1.5, 3.5)
            imgs[b, 0] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
        imgs[b, 0] += 0.05 * rng.standard_normal((IMG, IMG))
    imgs = np.clip(imgs, 0.0, 1.0)
    return ((imgs - 0.1307) / 0.3081).astype("float32")


def inputs():
    # stop_gradient=False: paddle 3.3.1's CPU grid_sample backward segfaults when the sampled
    # image needs no gradient but the grid (theta) does; this keeps a backward pass possible.
    return (paddle.to_tensor(_images(), stop_gradient=False),), {}


def loss(output):
    # log-probabilities [2, 10]: mean negative log-likelihood of fixed labels 3 and 7
    return -(output[0, 3] + output[1, 7]) / 2

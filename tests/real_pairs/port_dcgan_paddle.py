"""Hand-written port, paddle side: a tiny DCGAN generator + discriminator (written by "person A").

Eval mode, batch 4. The generator maps a latent [4, 16] to an image [4, 3, 16, 16]:
  latent -> 32 x 4 x 4 -> BN, ReLU -> transposed conv 5x5 stride 2 -> 16 x 8 x 8 -> BN, ReLU
  -> transposed conv 5x5 stride 2 -> 3 x 16 x 16 -> Tanh.
Both transposed convs use the "TF SAME for stride 2, kernel 5" arithmetic of the reference code:
padding=2, output_padding=1. The discriminator scores the generated image:
  conv 5x5 s2 (3 -> 16, 8 x 8) -> LeakyReLU(0.2) -> conv 5x5 s2 (16 -> 32, 4 x 4, no bias) -> BN
  -> LeakyReLU(0.2) -> a dense layer over the 512 features -> one logit [4, 1].
forward(z) returns (image, logit).

Paddle idioms on this side:
- root `DCGAN`: `generator`, `discriminator`.
- `Generator` projects the latent with `fc` = nn.Linear(16, 512, bias_attr=False) and RESHAPES
  the result to [-1, 32, 4, 4]; `deconv1` / `deconv2` are nn.Conv2DTranspose(..., padding=2,
  output_padding=1); the BatchNorms `bn0` / `bn1` are registered AFTER both deconvs (called
  between them); ReLU and Tanh are F.relu / F.tanh inline.
- BatchNorm: nn.BatchNorm2D(c, momentum=0.9, epsilon=1e-5, data_format="NCHW"). paddle's
  momentum is the weight of the OLD running statistic (torch momentum 0.1 == paddle 0.9); it does
  not matter in eval mode. The running statistics (`_mean`, `_variance`) are set to "trained"
  values so the eval-mode BN is not an identity.
- `Discriminator`: `conv1`, `conv2` (nn.Conv2D), `bn2`, `fc` = nn.Linear(512, 1) on the flattened
  features; LeakyReLU is F.leaky_relu(x, 0.2) inline.

The torch side (port_dcgan_torch.py) was written independently: two nn.Sequential stacks, the
latent projected with a ConvTranspose2d(16, 32, 4) from a 1x1 map, the last discriminator layer a
4x4 Conv2d to 1x1.

PADIFF_BUG names planted on this side (see port_dcgan_truth.json):
  paddle_deconv_same_padding -> deconv2 (the to-RGB layer) built with padding="SAME" (the TF
                                reference's string) instead of padding=2, output_padding=1: same
                                16 x 16 size, but paddle's SAME crops the full transposed-conv output
                                differently, so the image is shifted by one pixel
  paddle_nhwc_reshape        -> the projected latent reshaped TF-style to [-1, 4, 4, 32] (NHWC) and
                                transposed to NCHW, instead of reshaped to [-1, 32, 4, 4]
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, NZ, C0, C1, C_IMG, D1, D2 = 4, 16, 32, 16, 3, 16, 32
BN_EPS = 1e-5
OWN_BUGS = {"paddle_deconv_same_padding", "paddle_nhwc_reshape"}
OTHER_BUGS = {"torch_bn_eps"}


def _bn(c, seed):
    bn = nn.BatchNorm2D(c, momentum=0.9, epsilon=BN_EPS, data_format="NCHW")
    rng = np.random.default_rng(seed)  # "trained" affine and running statistics
    bn.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
    bn.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
    bn._mean.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
    bn._variance.set_value(rng.uniform(0.02, 0.5, c).astype("float32"))
    return bn


class Generator(nn.Layer):
    def __init__(self, same_padding=False, nhwc_reshape=False):
        super().__init__()
        self.nhwc_reshape = nhwc_reshape
        self.fc = nn.Linear(NZ, C0 * 4 * 4, bias_attr=False)
        self.deconv1 = nn.Conv2DTranspose(C0, C1, 5, stride=2, padding=2, output_padding=1, bias_attr=False)
        if same_padding:
            self.deconv2 = nn.Conv2DTranspose(C1, C_IMG, 5, stride=2, padding="SAME")
        else:
            self.deconv2 = nn.Conv2DTranspose(C1, C_IMG, 5, stride=2, padding=2, output_padding=1)
        self.bn0 = _bn(C0, 100)
        self.bn1 = _bn(C1, 101)

    def forward(self, z):
        x = self.fc(z)
        if self.nhwc_reshape:
            x = x.reshape([-1, 4, 4, C0]).transpose([0, 3, 1, 2])
        else:
            x = x.reshape([-1, C0, 4, 4])
        x = F.relu(self.bn0(x))
        x = F.relu(self.bn1(self.deconv1(x)))
        return F.tanh(self.deconv2(x))


class Discriminator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(C_IMG, D1, 5, stride=2, padding=2)
        self.conv2 = nn.Conv2D(D1, D2, 5, stride=2, padding=2, bias_attr=False)
        self.bn2 = _bn(D2, 102)
        self.fc = nn.Linear(D2 * 4 * 4, 1)

    def forward(self, img):
        x = F.leaky_relu(self.conv1(img), 0.2)
        x = F.leaky_relu(self.bn2(self.conv2(x)), 0.2)
        return self.fc(x.flatten(1))


class DCGAN(nn.Layer):
    def __init__(self, same_padding=False, nhwc_reshape=False):
        super().__init__()
        self.generator = Generator(same_padding, nhwc_reshape)
        self.discriminator = Discriminator()

    def forward(self, z):
        img = self.generator(z)
        return img, self.discriminator(img)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcgan paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DCGAN(same_padding=bug == "paddle_deconv_same_padding", nhwc_reshape=bug == "paddle_nhwc_reshape")
    m.eval()
    return m


def _latent():
    return np.random.default_rng(5).standard_normal((BATCH, NZ)).astype("float32")


def inputs():
    return (paddle.to_tensor(_latent()),), {}


def loss(output):
    img, logit = output
    return (img**2).mean() + (logit**2).mean()

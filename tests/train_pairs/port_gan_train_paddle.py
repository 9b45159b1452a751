"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny GAN on 16-d
vectors, generator and discriminator MLPs trained together for 3 steps.

    generator:     fc1 Linear(8, 32), ReLU, fc2 Linear(32, 16), tanh           (z -> fake)
    discriminator: hidden Linear(16, 32), LeakyReLU(0.2), drop Dropout(0.3), out Linear(32, 1)
    GAN registers `discriminator` BEFORE `generator` (the generator runs first).

The spec format drives ONE model with ONE optimizer and ONE backward per step, so the two GAN
updates are folded into one simultaneous step (both players take a gradient step from the same
weights, not the alternating D-then-G of the usual loop):
    forward(z, real):  fake = G(z)
                       d_real = D(real); d_fake = D(fake.detach())          (discriminator pass)
                       D's parameters set stop_gradient=True, d_gen = D(fake), set back False
                                                                              (generator pass)
                       returns (d_real, d_fake, d_gen, fake)
    loss = 0.5 * (BCE(d_real, 1) + BCE(d_fake, 0))  +  BCE(d_gen, 1)   (non-saturating G loss)
The detach keeps the D loss out of G's gradient; the frozen D keeps the G loss out of D's
gradient: D's parameters get only the D-loss gradient, G's only the G-loss gradient.
Discriminator: 3 calls per forward, so 3 dropout calls (p 0.3, [8, 32]); model.train().

Data (inputs(step), a new draw each step): z N(0, 1) [8, 8] (default_rng(331)); real samples
tanh(0.6 N(0, 1) + sin(0.4 k + 0.3)) [8, 16] (default_rng(332)).
Optimizer: paddle.optimizer.Adam(learning_rate=2e-3, beta1=0.5, beta2=0.999, epsilon=1e-8) over
all parameters; the generator's learning rate is halved through its layers'
ParamAttr(learning_rate=0.5) (two time-scale update: D 2e-3, G 1e-3).
Weights: paddle's default init (Xavier uniform matrices), biases N(0, 0.1) (paddle.seed(0)).

PADIFF_BUG (this side only):
  paddle_adam_beta1 -> paddle.optimizer.Adam(learning_rate=..., parameters=...) without beta1:
                       paddle's default beta1 0.9 instead of the GAN setting 0.5
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_adam_beta1"} | {"gen_fake_label", "d_eval_gpass"}  # the torch side's, ignored here
LATENT, HIDDEN, DATA = 8, 32, 16
BATCH, STEPS = 8, 3
P_DROP, SLOPE = 0.3, 0.2
LR_D, G_LR_SCALE, BETA1, BETA2, EPS = 2e-3, 0.5, 0.5, 0.999, 1e-8

Z = np.random.default_rng(331).standard_normal((STEPS, BATCH, LATENT)).astype("float32")
_grid = np.sin(0.4 * np.arange(DATA) + 0.3)
REAL = np.tanh(0.6 * np.random.default_rng(332).standard_normal((STEPS, BATCH, DATA)) + _grid).astype("float32")


class Generator(nn.Layer):
    def __init__(self, latent, hidden, out_dim, lr_scale):
        super().__init__()
        attr = lambda: paddle.ParamAttr(learning_rate=lr_scale)  # noqa: E731 - one attr per parameter
        self.fc1 = nn.Linear(latent, hidden, weight_attr=attr(), bias_attr=attr())
        self.fc2 = nn.Linear(hidden, out_dim, weight_attr=attr(), bias_attr=attr())

    def forward(self, z):
        return paddle.tanh(self.fc2(F.relu(self.fc1(z))))


class Discriminator(nn.Layer):
    def __init__(self, in_dim, hidden, p_drop, slope):
        super().__init__()
        self.hidden = nn.Linear(in_dim, hidden)
        self.lrelu = nn.LeakyReLU(slope)
        self.drop = nn.Dropout(p_drop)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(self.drop(self.lrelu(self.hidden(x))))


class GAN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.discriminator = Discriminator(DATA, HIDDEN, P_DROP, SLOPE)
        self.generator = Generator(LATENT, HIDDEN, DATA, G_LR_SCALE)

    def _freeze_d(self, frozen):
        for p in self.discriminator.parameters():
            p.stop_gradient = frozen

    def forward(self, z, real):
        fake = self.generator(z)
        d_real = self.discriminator(real)
        d_fake = self.discriminator(fake.detach())
        self._freeze_d(True)  # the generator's loss must not train D
        d_gen = self.discriminator(fake)
        self._freeze_d(False)
        return d_real, d_fake, d_gen, fake


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = GAN()
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape).astype(p.dtype))
    m.train()
    return m


def inputs(step=0):
    return (paddle.to_tensor(Z[step]), paddle.to_tensor(REAL[step])), {}


def loss(output):
    d_real, d_fake, d_gen, _ = output
    ones, zeros = paddle.ones_like(d_real), paddle.zeros_like(d_fake)
    d_loss = 0.5 * (F.binary_cross_entropy_with_logits(d_real, ones)
                    + F.binary_cross_entropy_with_logits(d_fake, zeros))
    g_loss = F.binary_cross_entropy_with_logits(d_gen, paddle.ones_like(d_gen))
    return d_loss + g_loss


def optimizer(model):
    if bug(BUGS) == "paddle_adam_beta1":
        return paddle.optimizer.Adam(learning_rate=LR_D, parameters=model.parameters())
    return paddle.optimizer.Adam(learning_rate=LR_D, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                 parameters=model.parameters())

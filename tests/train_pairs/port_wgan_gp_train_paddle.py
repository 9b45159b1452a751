"""Hand-written port in TRAINING mode, paddle side (written by "person A"): the critic step of a
WGAN with gradient penalty (WGAN-GP, Gulrajani et al. 2017) on 2-D toy data, 3 critic updates.

    critic: fc1 Linear(2, 32), LeakyReLU(0.2), fc2 Linear(32, 32), LeakyReLU(0.2), fc_out Linear(32, 1)
            `Critic` registers fc_out FIRST, then act (ONE nn.LeakyReLU module, called twice), fc1, fc2.
The generator is fixed (not trained): its samples are GIVEN inputs, as is the interpolation
weight epsilon, so nothing in a step is random:
    forward(real, fake, eps):  d_real = critic(real); d_fake = critic(fake)
                               x_hat = eps * real + (1 - eps) * fake, x_hat.stop_gradient = False
                               d_hat = critic(x_hat)
                               grad = paddle.grad(d_hat, x_hat, ones_like(d_hat), create_graph=True)[0]
                               returns (d_real, d_fake, grad)
    loss = d_fake.mean() - d_real.mean() + 10 * ((||grad||_2 over axis 1 - 1) ** 2).mean()
The penalty's gradient flows back through paddle.grad (create_graph=True): loss.backward() is a
double backward through the critic's third call. The critic is called 3 times per forward; no
dropout, no normalisation layer.

Data (inputs(step), a new batch each step, numpy constants): real = the "8 gaussians" toy set
(centres 2 * (cos, sin)(k pi / 4), std 0.05, default_rng(4301)), fake = a fixed random tanh MLP
"generator" (numpy weights, default_rng(4302)) applied to N(0, 1) noise, eps U(0, 1) [16, 1]
(default_rng(4303)); batch 16.
Optimizer: paddle.optimizer.Adam(learning_rate=1e-3, beta1=0.5, beta2=0.9) (the WGAN-GP
paper's betas), no weight decay, no clipping. Weights (paddle.seed(0)): matrices N(0, 0.3),
biases N(0, 0.1), so that the critic's gradient norms start in the penalty's working range
(0.08 .. 0.92, mean 0.60 on the first interpolates; with Xavier init they are ~0.1 and the
penalty is a near-constant ~0.8).

PADIFF_BUG (this side only):
  paddle_gp_norm_axis -> the gradient norm taken over axis 0 (the batch) instead of axis 1 (the
                         data dimensions): 2 norms of 16 values each in the penalty
"""
import numpy as np
import paddle
from _train_common import bug
from paddle import nn

BUGS = {"paddle_gp_norm_axis"} | {"gp_on_real", "adam_default_betas"}  # the torch side's, ignored here
DATA, HIDDEN, BATCH, STEPS = 2, 32, 16, 3
SLOPE, LAMBDA_GP = 0.2, 10.0
LR, BETA1, BETA2 = 1e-3, 0.5, 0.9


def _toy_batches():
    rng = np.random.default_rng(4301)
    centres = 2.0 * np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)], axis=1)
    real = centres[rng.integers(0, 8, (STEPS, BATCH))] + 0.05 * rng.standard_normal((STEPS, BATCH, DATA))
    g = np.random.default_rng(4302)  # the frozen generator: 4 -> 16 -> 2, tanh, scaled
    w1, w2 = g.standard_normal((4, 16)), g.standard_normal((16, DATA)) / 4.0
    fake = 1.5 * np.tanh(np.tanh(g.standard_normal((STEPS, BATCH, 4)) @ w1) @ w2)
    eps = np.random.default_rng(4303).random((STEPS, BATCH, 1))
    return real.astype("float32"), fake.astype("float32"), eps.astype("float32")


REAL, FAKE, EPSILON = _toy_batches()


class Critic(nn.Layer):
    def __init__(self, in_dim, hidden, slope):
        super().__init__()
        self.fc_out = nn.Linear(hidden, 1)
        self.act = nn.LeakyReLU(negative_slope=slope)
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)

    def forward(self, x):
        h = self.act(self.fc1(x))
        h = self.act(self.fc2(h))
        return self.fc_out(h)


class CriticTrainStep(nn.Layer):
    def __init__(self):
        super().__init__()
        self.critic = Critic(DATA, HIDDEN, SLOPE)

    def forward(self, real, fake, eps):
        d_real = self.critic(real)
        d_fake = self.critic(fake)
        x_hat = eps * real + (1.0 - eps) * fake
        x_hat.stop_gradient = False
        d_hat = self.critic(x_hat)
        grad = paddle.grad(outputs=d_hat, inputs=x_hat, grad_outputs=paddle.ones_like(d_hat),
                           create_graph=True, retain_graph=True)[0]
        return d_real, d_fake, grad


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = CriticTrainStep()
    for name, p in m.named_parameters():  # matrices N(0, 0.3): gradient norms below 1 at the start
        std = 0.1 if name.endswith("bias") else 0.3
        p.set_value(paddle.normal(0.0, std, p.shape).astype(p.dtype))
    m.train()
    return m


def inputs(step=0):
    return (paddle.to_tensor(REAL[step]), paddle.to_tensor(FAKE[step]), paddle.to_tensor(EPSILON[step])), {}


def loss(output):
    d_real, d_fake, grad = output
    axis = 0 if bug(BUGS) == "paddle_gp_norm_axis" else 1
    gp = ((paddle.linalg.norm(grad, p=2, axis=axis) - 1.0) ** 2).mean()
    return d_fake.mean() - d_real.mean() + LAMBDA_GP * gp


def optimizer(model):
    return paddle.optimizer.Adam(learning_rate=LR, beta1=BETA1, beta2=BETA2, parameters=model.parameters())

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_wgan_gp_train_paddle.py) the way the public PyTorch ports of the WGAN-GP toy
code (gan_toy.py) write it: a Sequential critic and autograd.grad for the penalty.

    netD.main = Sequential(Linear(2, 32), LeakyReLU(0.2), Linear(32, 32), LeakyReLU(0.2),
                           Linear(32, 1))                                    (.0 .. .4)
    WGANGPCritic registers netD only; the generator is fixed (its samples are inputs).

forward(real_data, fake_data, alpha):  D_real = netD(real_data); D_fake = netD(fake_data)
    interpolates = alpha * real_data + (1 - alpha) * fake_data, detached, requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(disc_interpolates, interpolates, torch.ones(...), create_graph=True,
                              retain_graph=True, only_inputs=True)[0]
    returns (D_real, D_fake, gradients)
Loss: D_cost = D_fake.mean() - D_real.mean() + ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
(LAMBDA = 10). Optimizer: torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.9)).

PADIFF_BUG (this side only):
  gp_on_real         -> the interpolation line copy-pasted as alpha * real_data + (1 - alpha) *
                        real_data: the penalty is taken at the real samples, not between real
                        and fake
  adam_default_betas -> torch.optim.Adam(netD.parameters(), lr=1e-3): torch's default betas
                        (0.9, 0.999) instead of WGAN-GP's (0.5, 0.9)
"""
import numpy as np
import torch
from _train_common import bug
from torch import autograd, nn

BUGS = {"gp_on_real", "adam_default_betas"} | {"paddle_gp_norm_axis"}  # the paddle side's, ignored here
DIM, LAMBDA, BATCH_SIZE = 32, 10.0, 16


def _toy_batches(steps=3, batch=BATCH_SIZE):
    rng = np.random.default_rng(4301)
    centers = 2.0 * np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)], axis=1)
    real = centers[rng.integers(0, 8, (steps, batch))] + 0.05 * rng.standard_normal((steps, batch, 2))
    g = np.random.default_rng(4302)  # frozen generator
    w1, w2 = g.standard_normal((4, 16)), g.standard_normal((16, 2)) / 4.0
    fake = 1.5 * np.tanh(np.tanh(g.standard_normal((steps, batch, 4)) @ w1) @ w2)
    alpha = np.random.default_rng(4303).random((steps, batch, 1))
    return real.astype("float32"), fake.astype("float32"), alpha.astype("float32")


REAL, FAKE, ALPHA = _toy_batches()


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.LeakyReLU(0.2),
            nn.Linear(DIM, DIM),
            nn.LeakyReLU(0.2),
            nn.Linear(DIM, 1),
        )

    def forward(self, inputs):
        return self.main(inputs)


class WGANGPCritic(nn.Module):
    def __init__(self, penalty_on_real=False):
        super().__init__()
        self.netD = Discriminator()
        self.penalty_on_real = penalty_on_real

    def forward(self, real_data, fake_data, alpha):
        D_real = self.netD(real_data)
        D_fake = self.netD(fake_data)
        alpha = alpha.expand(real_data.size())
        other = real_data if self.penalty_on_real else fake_data  # the gp_on_real copy-paste
        interpolates = alpha * real_data + ((1 - alpha) * other)
        interpolates = interpolates.detach().requires_grad_(True)
        disc_interpolates = self.netD(interpolates)
        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                  grad_outputs=torch.ones(disc_interpolates.size(), dtype=disc_interpolates.dtype),
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]
        return D_real, D_fake, gradients


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = WGANGPCritic(penalty_on_real=b == "gp_on_real")
    m.train()
    return m


def inputs(step=0):
    return (torch.from_numpy(REAL[step]), torch.from_numpy(FAKE[step]), torch.from_numpy(ALPHA[step])), {}


def loss(output):
    D_real, D_fake, gradients = output
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return D_fake.mean() - D_real.mean() + gradient_penalty


def optimizer(model):
    if bug(BUGS) == "adam_default_betas":
        return torch.optim.Adam(model.netD.parameters(), lr=1e-3)
    return torch.optim.Adam(model.netD.parameters(), lr=1e-3, betas=(0.5, 0.9))

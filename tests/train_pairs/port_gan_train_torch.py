"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_gan_train_paddle.py) the DCGAN / pix2pix way: Sequential networks `netG`, `netD`,
`set_requires_grad(netD, False)` around the generator's pass.

    netG.main = Sequential(Linear(8, 32), ReLU(True), Linear(32, 16), Tanh())        (.0 .. .3)
    netD.main = Sequential(Linear(16, 32), LeakyReLU(0.2, inplace=True), Dropout(0.3),
                           Linear(32, 1))                                          (.0 .. .3)
    GANPair registers netG first, then netD.

One model, one optimizer, one backward per step (the spec format): a simultaneous update of
both players.  forward(noise, real): fake = netG(noise); pred_real = netD(real);
pred_fake = netD(fake.detach()); set_requires_grad(netD, False); pred_gen = netD(fake);
set_requires_grad(netD, True); returns (pred_real, pred_fake, pred_gen, fake).
Loss (nn.BCEWithLogitsLoss, real_label 1., fake_label 0.):
    errD = 0.5 * (crit(pred_real, real) + crit(pred_fake, fake_lbl));  errG = crit(pred_gen, real)
Optimizer: torch.optim.Adam with two parameter groups (two time-scale update): netG lr 1e-3,
netD lr 2e-3, betas (0.5, 0.999), eps 1e-8.

PADIFF_BUG (this side only):
  gen_fake_label -> the generator's loss computed against the FAKE label tensor (0) - the
                    DCGAN tutorial's "label.fill_(real_label)  # fake labels are real for
                    generator cost" left out: G is trained to help D
  d_eval_gpass   -> set_requires_grad(netD, False) also puts netD in eval() ("freezing" D) and
                    set_requires_grad(netD, True) back in train(): no dropout in the generator's
                    pass through D
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"gen_fake_label", "d_eval_gpass"} | {"paddle_adam_beta1"}  # the paddle side's, ignored here
nz, ngf, ndf, data_dim = 8, 32, 32, 16
lr_g, lr_d, beta1 = 1e-3, 2e-3, 0.5
real_label, fake_label = 1.0, 0.0

Z = np.random.default_rng(331).standard_normal((3, 8, nz)).astype("float32")
_grid = np.sin(0.4 * np.arange(data_dim) + 0.3)
REAL = np.tanh(0.6 * np.random.default_rng(332).standard_normal((3, 8, data_dim)) + _grid).astype("float32")


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, ngf), nn.ReLU(True), nn.Linear(ngf, data_dim), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(data_dim, ndf), nn.LeakyReLU(0.2, inplace=True), nn.Dropout(0.3),
                                  nn.Linear(ndf, 1))

    def forward(self, input):
        return self.main(input)


def set_requires_grad(net, requires_grad, switch_mode=False):
    for param in net.parameters():
        param.requires_grad = requires_grad
    if switch_mode:  # the d_eval_gpass bug: "freezing" D by eval() as well
        net.train(requires_grad)


class GANPair(nn.Module):
    def __init__(self, freeze_by_eval=False):
        super().__init__()
        self.netG = Generator()
        self.netD = Discriminator()
        self.freeze_by_eval = freeze_by_eval

    def forward(self, noise, real):
        fake = self.netG(noise)
        pred_real = self.netD(real)
        pred_fake = self.netD(fake.detach())
        set_requires_grad(self.netD, False, self.freeze_by_eval)
        pred_gen = self.netD(fake)
        set_requires_grad(self.netD, True, self.freeze_by_eval)
        return pred_real, pred_fake, pred_gen, fake


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = GANPair(freeze_by_eval=b == "d_eval_gpass")
    m.train()
    return m


def inputs(step=0):
    return (torch.from_numpy(Z[step]), torch.from_numpy(REAL[step])), {}


criterion = nn.BCEWithLogitsLoss()


def loss(output):
    pred_real, pred_fake, pred_gen, _ = output
    real_lbl = torch.full_like(pred_real, real_label)
    fake_lbl = torch.full_like(pred_fake, fake_label)
    errD = 0.5 * (criterion(pred_real, real_lbl) + criterion(pred_fake, fake_lbl))
    errG = criterion(pred_gen, fake_lbl if bug(BUGS) == "gen_fake_label" else real_lbl)
    return errD + errG


def optimizer(model):
    return torch.optim.Adam([{"params": model.netG.parameters(), "lr": lr_g},
                             {"params": model.netD.parameters(), "lr": lr_d}],
                            betas=(beta1, 0.999), eps=1e-8)

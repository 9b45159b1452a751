"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny MLP variational
autoencoder on 8x8 single-channel images, trained 3 steps.

    x [2, 1, 8, 8] -> flatten (64) -> enc_fc Linear(64, 32), ReLU, enc_drop Dropout(0.2)
        -> fc_mu Linear(32, 4) and fc_logvar Linear(32, 4) (two heads; fc_logvar is registered first)
    reparameterisation: z = mu + eps * exp(0.5 * logvar); eps [2, 4] is a FORWARD INPUT (drawn by
        the data pipeline from numpy, a new draw every step), never drawn inside the model
    decoder: dec_fc Linear(4, 32), ReLU, dec_out Linear(32, 64), dec_act = nn.Sigmoid(),
        reshaped to [2, 1, 8, 8]
Forward(x, eps) returns (x_hat, mu, logvar). Dropout: 1 call per forward (enc_drop, p 0.2);
model.train().

Data: x = uniform(0, 1) [2, 1, 8, 8] grey levels (default_rng(28)), the same batch every step;
eps N(0, 1) [2, 4] per step (inputs(step), default_rng(128), 3 draws).
Loss (per sample summed, batch mean): F.binary_cross_entropy(x_hat, x, reduction="sum") / B
    + KL, KL = -0.5 * sum(1 + logvar - mu^2 - exp(logvar)) / B.
Optimizer: paddle.optimizer.Adam(beta1 0.9, beta2 0.99, epsilon 1e-8, no weight decay) driven by
    lr.LinearWarmup(learning_rate=1e-3, warmup_steps=4, start_lr=2e-4, end_lr=1e-3): lr 2e-4, 4e-4,
    6e-4 for updates 1..3. optimizer() returns (opt, sched).
Weights: paddle default init for the matrices (Xavier), biases N(0, 0.1) (paddle.seed(0)).

PADIFF_BUG (this side only):
  paddle_bce_mean -> F.binary_cross_entropy(x_hat, x) with the default reduction "mean" (the
              reconstruction term averaged over the 128 pixels instead of summed per sample and
              averaged over the batch: 64x smaller against the KL term)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_bce_mean"} | {"drop_cfg_key", "warmup_abs_factor"}  # the torch side's, ignored here
IN_DIM, HIDDEN, Z_DIM = 64, 32, 4
BATCH, STEPS = 2, 3
P_DROP = 0.2
LR, START_LR, WARMUP, BETA1, BETA2, EPS = 1e-3, 2e-4, 4, 0.9, 0.99, 1e-8

X = np.random.default_rng(28).random((BATCH, 1, 8, 8)).astype("float32")
NOISE = np.random.default_rng(128).standard_normal((STEPS, BATCH, Z_DIM)).astype("float32")


class VAE(nn.Layer):
    def __init__(self, in_dim, hidden, z_dim, p_drop):
        super().__init__()
        self.enc_fc = nn.Linear(in_dim, hidden)
        self.fc_logvar = nn.Linear(hidden, z_dim)
        self.fc_mu = nn.Linear(hidden, z_dim)
        self.enc_drop = nn.Dropout(p_drop)
        self.dec_fc = nn.Linear(z_dim, hidden)
        self.dec_out = nn.Linear(hidden, in_dim)
        self.dec_act = nn.Sigmoid()

    def encode(self, x):
        h = self.enc_drop(F.relu(self.enc_fc(x.flatten(1))))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar, eps):
        return mu + eps * paddle.exp(0.5 * logvar)

    def decode(self, z):
        return self.dec_act(self.dec_out(F.relu(self.dec_fc(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar, eps)
        x_hat = self.decode(z).reshape(x.shape)
        return x_hat, mu, logvar


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = VAE(IN_DIM, HIDDEN, Z_DIM, P_DROP)
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape).astype(p.dtype))
    m.train()
    return m


def inputs(step=0):
    return (paddle.to_tensor(X), paddle.to_tensor(NOISE[step])), {}


def loss(output):
    x_hat, mu, logvar = output
    x = paddle.to_tensor(X).astype(x_hat.dtype)
    if bug(BUGS) == "paddle_bce_mean":
        recon = F.binary_cross_entropy(x_hat, x)
    else:
        recon = F.binary_cross_entropy(x_hat, x, reduction="sum") / x.shape[0]
    kl = -0.5 * paddle.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.shape[0]
    return recon + kl


def optimizer(model):
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=LR, warmup_steps=WARMUP, start_lr=START_LR, end_lr=LR)
    opt = paddle.optimizer.Adam(learning_rate=sched, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                parameters=model.parameters())
    return opt, sched

"""Hand-written port, paddle side: a TSMixer forecaster with RevIN (written by "person A").

Input: positional `past_values` [2, 32, 5] (batch, time, features): five synthetic series (level
+ trend + two sines + noise, numpy rng seed 7). Output: forecast [2, 8, 5].

The model (Chen et al., "TSMixer", Google's Keras reference with norm_type="B"):
  window  = the last 24 steps of the 32-step context
  RevIN   mean / std over time per series and feature (std = sqrt(biased var + 1e-5), the
          statistics detached), x = (x - mean) / std * w + b (learnable affine w, b [5])
  2 mixer blocks (pre-norm residual):
    time mixing:    x = x + Dropout(ReLU(Linear_24x24(BN(x) along time)))
    feature mixing: x = x + Dropout(Linear_16x5(Dropout(ReLU(Linear_5x16(BN(x))))))
    BN = batch norm over the flattened time x feature plane (120 channels), eps 1e-3 (Keras)
  temporal projection Linear(24 -> 8) along time
  RevIN denorm: y = (y - b) / (w + 1e-10) * std + mean
Dropout 0.1 (inactive in eval).

Paddle idioms on this side:
- root `TSMixerForecaster` (a thin PaddleTS-style shell): crops the 24-step window inline and
  calls its one child `network` (`TSMixerNet`).
- `TSMixerNet` keeps the series CHANNEL-FIRST [B, 5, 24] between its layers. It owns the RevIN
  affine parameters `revin_weight` / `revin_bias` (create_parameter) and computes RevIN with
  module-level helper FUNCTIONS inline (`_revin_stats`, `_revin_norm`, `_revin_denorm`; the
  norm multiplies by rsqrt(var + eps), the denorm multiplies by sqrt(var + eps): the same eps
  placement); then `mixer_blocks` (LayerList of `MixerBlock`) and `temporal_proj`
  Linear(24, 8), applied on the last axis of the channel-first tensor.
- `MixerBlock` (input / output [B, 5, 24]): `time_norm` BatchNorm1D(120), `time_fc`
  Linear(24, 24) (applied directly on the last axis: no transpose), `feat_norm`
  BatchNorm1D(120), `feat_fc1` Linear(5, 16), `feat_fc2` Linear(16, 5). Both norms see the
  channel-first plane flattened FEATURE-MAJOR (index f * 24 + t); the feature MLP transposes to
  [B, 24, 5] and back. ReLU / dropout are F.relu / F.dropout inline.
- model() gives the BatchNorm layers trained-looking affine weights / running statistics and
  the RevIN affine trained-looking values (rng seed 13).

The torch side (port_tsmixer_torch.py) was written independently: a stateful RevIN module, a
time-major [B, 24, 5] layout with transposes around the time Linears, and separate
time-mixing / feature-mixing modules with their own BatchNorm wrapper.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_revin_unbiased_var -> `_revin_stats` calls paddle.var without unbiased=False (paddle's
                               default is the unbiased, n - 1, variance)
  paddle_time_res_normed    -> MixerBlock's time-mixing residual adds the NORMALISED input
                               (x = norm(x); x = x + mlp(x)) instead of the block input
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

CONTEXT, LOOKBACK, HORIZON, N_FEAT, FF_DIM, N_BLOCK = 32, 24, 8, 5, 16, 2
DROPOUT = 0.1
REVIN_EPS, BN_EPS = 1e-5, 1e-3
BATCH = 2
OWN_BUGS = {"paddle_revin_unbiased_var", "paddle_time_res_normed"}
OTHER_BUGS = {"torch_bn_eps_default", "torch_revin_skip_affine_inverse"}


def _revin_stats(x, unbiased=False):
    # x [B, L, F]; statistics over time, detached (as in the RevIN paper's code)
    mean = paddle.mean(x, axis=1, keepdim=True).detach()
    if unbiased:
        var = paddle.var(x, axis=1, keepdim=True)
    else:
        var = paddle.var(x, axis=1, keepdim=True, unbiased=False)
    return mean, (var + REVIN_EPS).detach()


def _revin_norm(x, mean, var_eps, weight, bias):
    return (x - mean) * paddle.rsqrt(var_eps) * weight + bias


def _revin_denorm(y, mean, var_eps, weight, bias):
    return (y - bias) / (weight + 1e-10) * paddle.sqrt(var_eps) + mean


class MixerBlock(nn.Layer):
    def __init__(self, res_normed=False):
        super().__init__()
        self.res_normed = res_normed
        self.time_norm = nn.BatchNorm1D(N_FEAT * LOOKBACK, epsilon=BN_EPS)
        self.time_fc = nn.Linear(LOOKBACK, LOOKBACK)
        self.feat_norm = nn.BatchNorm1D(N_FEAT * LOOKBACK, epsilon=BN_EPS)
        self.feat_fc1 = nn.Linear(N_FEAT, FF_DIM)
        self.feat_fc2 = nn.Linear(FF_DIM, N_FEAT)

    def forward(self, x):
        # x [B, F, L] (channel-first)
        b = x.shape[0]
        h = self.time_norm(x.reshape([b, -1])).reshape([b, N_FEAT, LOOKBACK])
        res = h if self.res_normed else x
        h = F.dropout(F.relu(self.time_fc(h)), p=DROPOUT, training=self.training)
        x = res + h
        h = self.feat_norm(x.reshape([b, -1])).reshape([b, N_FEAT, LOOKBACK])
        h = h.transpose([0, 2, 1])  # [B, L, F]
        h = F.dropout(F.relu(self.feat_fc1(h)), p=DROPOUT, training=self.training)
        h = F.dropout(self.feat_fc2(h), p=DROPOUT, training=self.training)
        return x + h.transpose([0, 2, 1])


class TSMixerNet(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.unbiased = bug == "paddle_revin_unbiased_var"
        self.revin_weight = self.create_parameter([N_FEAT], default_initializer=nn.initializer.Constant(1.0))
        self.revin_bias = self.create_parameter([N_FEAT], default_initializer=nn.initializer.Constant(0.0))
        self.mixer_blocks = nn.LayerList([MixerBlock(bug == "paddle_time_res_normed") for _ in range(N_BLOCK)])
        self.temporal_proj = nn.Linear(LOOKBACK, HORIZON)

    def forward(self, x):
        # x [B, L, F]
        mean, var_eps = _revin_stats(x, self.unbiased)
        x = _revin_norm(x, mean, var_eps, self.revin_weight, self.revin_bias)
        x = x.transpose([0, 2, 1])  # [B, F, L]
        for blk in self.mixer_blocks:
            x = blk(x)
        y = self.temporal_proj(x).transpose([0, 2, 1])  # [B, T, F]
        return _revin_denorm(y, mean, var_eps, self.revin_weight, self.revin_bias)


class TSMixerForecaster(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.lookback = LOOKBACK
        self.network = TSMixerNet(bug)

    def forward(self, past_values):
        return self.network(past_values[:, -self.lookback:, :])


def _trained_look(m):
    rng = np.random.default_rng(13)
    n = N_FEAT * LOOKBACK
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    net = m.network
    net.revin_weight.set_value(rng.uniform(0.6, 1.4, N_FEAT).astype("float32"))
    net.revin_bias.set_value(rng.normal(0.0, 0.3, N_FEAT).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tsmixer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TSMixerForecaster(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _series():
    rng = np.random.default_rng(7)
    t = np.arange(CONTEXT, dtype="float64")[None, :, None]
    level = rng.uniform(-2.0, 4.0, (BATCH, 1, N_FEAT))
    trend = rng.normal(0.0, 0.05, (BATCH, 1, N_FEAT))
    amp1, amp2 = rng.uniform(0.5, 2.0, (2, BATCH, 1, N_FEAT))
    phase = rng.uniform(0.0, 2 * np.pi, (BATCH, 1, N_FEAT))
    x = (level + trend * t + amp1 * np.sin(2 * np.pi * t / 12 + phase) + amp2 * np.sin(2 * np.pi * t / 5 + 2 * phase)
         + 0.3 * rng.standard_normal((BATCH, CONTEXT, N_FEAT)))
    return x.astype("float32")


def inputs():
    return (paddle.to_tensor(_series()),), {}


def loss(output):
    # forecast [2, 8, 5]
    return (output**2).mean()

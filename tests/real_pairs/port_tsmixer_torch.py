"""Hand-written port, torch side: a TSMixer forecaster with RevIN (written by "person B").

The same math as port_tsmixer_paddle.py, re-implemented by hand in the style of the community
pytorch-tsmixer / RevIN code: input `past_values` [2, 32, 5] (positional), the last 24 steps are
the lookback window; RevIN (learnable affine, statistics over time, detached); two mixer layers
(pre-norm time mixing, pre-norm feature mixing, BatchNorm over the flattened time x feature
plane with eps 1e-3 as in the Keras reference); temporal projection 24 -> 8; RevIN denorm.
Output: forecast [2, 8, 5].

Torch idioms on this side:
- root `TSMixer`: registers `revin` (`RevIN`) first, then `mixer_layers` (an nn.Sequential of
  `MixerLayer`, called ONCE), then `temporal_projection` Linear(24, 8). The window crop and the
  transposes around the temporal projection are inline in the root. The series stay
  TIME-MAJOR [B, 24, 5] between all modules.
- `RevIN` (stateful, as in the RevIN reference code): `affine_weight` / `affine_bias` [5];
  forward(x, mode) with mode "norm" (computes and stores `mean` / `stdev` = sqrt(var + eps)) or
  "denorm" (undoes the affine with (w + eps * eps), then * stdev + mean). Called twice per
  forward.
- `MixerLayer`: `time_mixing` (`TimeMixing`: `norm`, `fc1` Linear(24, 24), `dropout`) then
  `feature_mixing` (`FeatureMixing`: `norm`, `fc1` Linear(5, 16), `fc2` Linear(16, 5),
  `dropout1`, `dropout2`); ReLU is F.relu inline; the time Linear is applied between two
  transposes (time-major -> feature-major -> time-major).
- `TimeBatchNorm2d`: an nn.BatchNorm1d subclass over the [24, 5] plane: it takes [B, 24, 5],
  flattens it TIME-MAJOR (index t * 5 + f) to [B, 120], normalises, and reshapes back.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_bn_eps_default            -> TimeBatchNorm2d calls nn.BatchNorm1d.__init__ without the
                                     eps, so every mixing norm uses torch's default 1e-5
                                     instead of the Keras reference's 1e-3
  torch_revin_skip_affine_inverse -> RevIN's "denorm" mode rescales by stdev and adds the mean
                                     but forgets to undo the learnable affine first
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SEQ_LEN, PRED_LEN, NUM_CHANNELS, FF_DIM, NUM_LAYERS = 24, 8, 5, 16, 2
DROPOUT_RATE = 0.1
NORM_EPS = 1e-3
OWN_BUGS = {"torch_bn_eps_default", "torch_revin_skip_affine_inverse"}
OTHER_BUGS = {"paddle_revin_unbiased_var", "paddle_time_res_normed"}


class RevIN(nn.Module):
    def __init__(self, num_features, eps=1e-5, affine=True, skip_affine_inverse=False):
        super().__init__()
        self.num_features, self.eps, self.affine = num_features, eps, affine
        self.skip_affine_inverse = skip_affine_inverse
        if affine:
            self.affine_weight = nn.Parameter(torch.ones(num_features))
            self.affine_bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x, mode):
        if mode == "norm":
            self._get_statistics(x)
            return self._normalize(x)
        if mode == "denorm":
            return self._denormalize(x)
        raise NotImplementedError(mode)

    def _get_statistics(self, x):
        self.mean = torch.mean(x, dim=1, keepdim=True).detach()
        self.stdev = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + self.eps).detach()

    def _normalize(self, x):
        x = (x - self.mean) / self.stdev
        if self.affine:
            x = x * self.affine_weight + self.affine_bias
        return x

    def _denormalize(self, x):
        if self.affine and not self.skip_affine_inverse:
            x = x - self.affine_bias
            x = x / (self.affine_weight + self.eps * self.eps)
        return x * self.stdev + self.mean


class TimeBatchNorm2d(nn.BatchNorm1d):
    def __init__(self, normalized_shape, eps=NORM_EPS, forget_eps=False):
        num_time_steps, num_channels = normalized_shape
        if forget_eps:
            super().__init__(num_time_steps * num_channels)
        else:
            super().__init__(num_time_steps * num_channels, eps=eps)
        self.num_time_steps, self.num_channels = num_time_steps, num_channels

    def forward(self, x):
        b = x.shape[0]
        x = super().forward(x.reshape(b, -1))
        return x.reshape(b, self.num_time_steps, self.num_channels)


class TimeMixing(nn.Module):
    def __init__(self, seq_len, num_channels, forget_eps=False):
        super().__init__()
        self.norm = TimeBatchNorm2d((seq_len, num_channels), forget_eps=forget_eps)
        self.fc1 = nn.Linear(seq_len, seq_len)
        self.dropout = nn.Dropout(DROPOUT_RATE)

    def forward(self, x):
        x_temp = self.norm(x).transpose(1, 2)  # [B, C, L]
        x_temp = self.dropout(F.relu(self.fc1(x_temp)))
        return x + x_temp.transpose(1, 2)


class FeatureMixing(nn.Module):
    def __init__(self, seq_len, num_channels, ff_dim, forget_eps=False):
        super().__init__()
        self.norm = TimeBatchNorm2d((seq_len, num_channels), forget_eps=forget_eps)
        self.fc1 = nn.Linear(num_channels, ff_dim)
        self.fc2 = nn.Linear(ff_dim, num_channels)
        self.dropout1 = nn.Dropout(DROPOUT_RATE)
        self.dropout2 = nn.Dropout(DROPOUT_RATE)

    def forward(self, x):
        x_temp = self.dropout1(F.relu(self.fc1(self.norm(x))))
        x_temp = self.dropout2(self.fc2(x_temp))
        return x + x_temp


class MixerLayer(nn.Module):
    def __init__(self, seq_len, num_channels, ff_dim, forget_eps=False):
        super().__init__()
        self.time_mixing = TimeMixing(seq_len, num_channels, forget_eps)
        self.feature_mixing = FeatureMixing(seq_len, num_channels, ff_dim, forget_eps)

    def forward(self, x):
        return self.feature_mixing(self.time_mixing(x))


class TSMixer(nn.Module):
    def __init__(self, forget_eps=False, skip_affine_inverse=False):
        super().__init__()
        self.revin = RevIN(NUM_CHANNELS, skip_affine_inverse=skip_affine_inverse)
        self.mixer_layers = nn.Sequential(
            *[MixerLayer(SEQ_LEN, NUM_CHANNELS, FF_DIM, forget_eps) for _ in range(NUM_LAYERS)])
        self.temporal_projection = nn.Linear(SEQ_LEN, PRED_LEN)

    def forward(self, past_values):
        x = past_values[:, -SEQ_LEN:, :]
        x = self.revin(x, "norm")
        x = self.mixer_layers(x)  # [B, L, C]
        x = self.temporal_projection(x.transpose(1, 2)).transpose(1, 2)  # [B, T, C]
        return self.revin(x, "denorm")


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tsmixer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TSMixer(forget_eps=bug == "torch_bn_eps_default",
                skip_affine_inverse=bug == "torch_revin_skip_affine_inverse")
    return m.eval()


def _series():
    rng = np.random.default_rng(7)
    t = np.arange(32, dtype="float64")[None, :, None]
    level = rng.uniform(-2.0, 4.0, (2, 1, NUM_CHANNELS))
    trend = rng.normal(0.0, 0.05, (2, 1, NUM_CHANNELS))
    amp1, amp2 = rng.uniform(0.5, 2.0, (2, 2, 1, NUM_CHANNELS))
    phase = rng.uniform(0.0, 2 * np.pi, (2, 1, NUM_CHANNELS))
    x = (level + trend * t + amp1 * np.sin(2 * np.pi * t / 12 + phase) + amp2 * np.sin(2 * np.pi * t / 5 + 2 * phase)
         + 0.3 * rng.standard_normal((2, 32, NUM_CHANNELS)))
    return x.astype("float32")


def inputs():
    return (torch.from_numpy(_series()),), {}


def loss(output):
    # forecast [2, 8, 5]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny ECAPA-TDNN speaker encoder (written by "person A").

Input: one batch of log-mel filterbank features `fbank` [2, 48, 20] (positional, [B, T, mel],
numpy rng seed 383, standard normal, like mean/variance-normalised fbank). Output: speaker
embeddings [2, 24].

Network (SpeechBrain ECAPA_TDNN layout, shrunk; every "TDNN" is conv -> ReLU -> BatchNorm, in
that order, and every conv with kernel > 1 pads 'same' with REFLECT padding):
  front      TDNN 20 -> 32, kernel 5
  3 x SE-Res2Net block (channels 32, scale 4 => 4 groups of 8, kernel 3, dilation 2 / 3 / 4):
      y = TDNN 1x1 (32 -> 32)
      split y into 4 channel groups g0..g3:  o0 = g0,  o1 = T1(g1),  o2 = T2(g2 + o1),
                                             o3 = T3(g3 + o2)    (Ti = TDNN 8 -> 8, k 3, dil d)
      y = TDNN 1x1 (cat(o0..o3))
      y = y * sigmoid(W2 relu(W1 mean_t(y)))         (squeeze-excitation, bottleneck 16)
      out = y + x
  multi-layer feature aggregation: TDNN 1x1 over cat(block1, block2, block3) (96 -> 96)
  attentive statistics pooling with global context:
      ctx = cat(x, mean_t(x), std_t(x)) (std population, variance clamped at 1e-12)
      alpha = softmax_t(Conv1x1(tanh(TDNN 1x1 288 -> 16)))  (16 -> 96)
      pooled = cat(sum_t alpha x, sqrt(clamp(sum_t alpha (x - mu)^2, 1e-12)))  [B, 192]
  BatchNorm1D(192) -> Conv1D(192, 24, 1) on the [B, 192, 1] map -> [B, 24]

Paddle idioms on this side:
- root `EcapaSpeakerNet`: `front`, `stages` (LayerList of `SERes2Stage`, iterated), `aggregate`,
  `pooling`, `pool_norm`, `embed` (nn.Conv1D k=1, like SpeechBrain's fc).
- `TdnnLayer`: `conv1d` nn.Conv1D(padding=dilation*(k-1)//2, padding_mode="reflect") and `norm`
  nn.BatchNorm1D; the ReLU is inline F.relu between them.
- `Res2Hier`: `branches` = LayerList of 3 `TdnnLayer` (one per convolved group), with the
  hierarchical split / add / concat inline (paddle.split).
- `SqueezeExcite`: `reduce`, `expand` nn.Conv1D(k=1) on the [B, C, 1] time mean; relu / sigmoid
  inline.
- `AttnStatPool`: `score_tdnn` (TdnnLayer 288 -> 16), `score_out` Conv1D(16, 96, 1); global
  statistics, tanh, softmax and the weighted statistics inline (centred variance form).
- model() gives every BatchNorm trained-looking affine weights and running statistics and every
  conv a non-zero bias (rng seed 3838).

The torch side (port_ecapa_tdnn_torch.py) was written independently (WeSpeaker-like names, the
Res2Net groups as ONE stacked-kernel module, nn.Sequential TDNN units, Linear SE / head).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_res2_no_hier     -> Res2Hier forgets the hierarchical add: every group i >= 2 is
                             convolved alone (T_i(g_i)) instead of T_i(g_i + o_{i-1})
  paddle_ctx_std_unbiased -> the global-context std in AttnStatPool is paddle.std(...), whose
                             default is the UNBIASED (T-1) estimator: std scaled by sqrt(48/47)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_MELS, FRAMES, BATCH = 20, 48, 2
CH, SCALE, SE_CH, ATT_CH, EMB = 32, 4, 16, 16, 24
DILATIONS = (2, 3, 4)
STAT_EPS = 1e-12
OWN_BUGS = {"paddle_res2_no_hier", "paddle_ctx_std_unbiased"}
OTHER_BUGS = {"torch_reflect_as_zero_pad", "torch_residual_before_se"}


class TdnnLayer(nn.Layer):
    def __init__(self, cin, cout, kernel, dilation=1):
        super().__init__()
        self.conv1d = nn.Conv1D(cin, cout, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2,
                                padding_mode="reflect")
        self.norm = nn.BatchNorm1D(cout)

    def forward(self, x):
        return self.norm(F.relu(self.conv1d(x)))


class Res2Hier(nn.Layer):
    def __init__(self, channels, scale, dilation, hierarchical=True):
        super().__init__()
        self.scale, self.hierarchical = scale, hierarchical
        width = channels // scale
        self.branches = nn.LayerList([TdnnLayer(width, width, 3, dilation) for _ in range(scale - 1)])

    def forward(self, x):
        groups = paddle.split(x, self.scale, axis=1)
        outs = [groups[0]]
        prev = None
        for i in range(1, self.scale):
            inp = groups[i] if (i == 1 or not self.hierarchical) else groups[i] + prev
            prev = self.branches[i - 1](inp)
            outs.append(prev)
        return paddle.concat(outs, axis=1)


class SqueezeExcite(nn.Layer):
    def __init__(self, channels, bottleneck):
        super().__init__()
        self.reduce = nn.Conv1D(channels, bottleneck, 1)
        self.expand = nn.Conv1D(bottleneck, channels, 1)

    def forward(self, x):
        s = x.mean(axis=2, keepdim=True)
        s = F.sigmoid(self.expand(F.relu(self.reduce(s))))
        return x * s


class SERes2Stage(nn.Layer):
    def __init__(self, channels, dilation, hierarchical=True):
        super().__init__()
        self.pre = TdnnLayer(channels, channels, 1)
        self.res2 = Res2Hier(channels, SCALE, dilation, hierarchical)
        self.post = TdnnLayer(channels, channels, 1)
        self.excite = SqueezeExcite(channels, SE_CH)

    def forward(self, x):
        y = self.post(self.res2(self.pre(x)))
        return self.excite(y) + x


class AttnStatPool(nn.Layer):
    def __init__(self, channels, att_channels, unbiased_ctx=False):
        super().__init__()
        self.unbiased_ctx = unbiased_ctx
        self.score_tdnn = TdnnLayer(3 * channels, att_channels, 1)
        self.score_out = nn.Conv1D(att_channels, channels, 1)

    def forward(self, x):
        frames = x.shape[2]
        mu = x.mean(axis=2, keepdim=True)
        if self.unbiased_ctx:
            sd = paddle.std(x, axis=2, keepdim=True)
        else:
            sd = paddle.sqrt(paddle.clip(((x - mu) ** 2).mean(axis=2, keepdim=True), min=STAT_EPS))
        ctx = paddle.concat([x, mu.expand([-1, -1, frames]), sd.expand([-1, -1, frames])], axis=1)
        alpha = F.softmax(self.score_out(paddle.tanh(self.score_tdnn(ctx))), axis=2)
        mean = (alpha * x).sum(axis=2)
        var = (alpha * (x - mean.unsqueeze(2)) ** 2).sum(axis=2)
        return paddle.concat([mean, paddle.sqrt(paddle.clip(var, min=STAT_EPS))], axis=1)


class EcapaSpeakerNet(nn.Layer):
    def __init__(self, hierarchical=True, unbiased_ctx=False):
        super().__init__()
        self.front = TdnnLayer(N_MELS, CH, 5)
        self.stages = nn.LayerList([SERes2Stage(CH, d, hierarchical) for d in DILATIONS])
        self.aggregate = TdnnLayer(CH * len(DILATIONS), CH * len(DILATIONS), 1)
        self.pooling = AttnStatPool(CH * len(DILATIONS), ATT_CH, unbiased_ctx)
        self.pool_norm = nn.BatchNorm1D(2 * CH * len(DILATIONS))
        self.embed = nn.Conv1D(2 * CH * len(DILATIONS), EMB, 1)

    def forward(self, fbank):
        x = self.front(fbank.transpose([0, 2, 1]))
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        x = self.aggregate(paddle.concat(feats, axis=1))
        pooled = self.pool_norm(self.pooling(x))
        return self.embed(pooled.unsqueeze(2)).squeeze(2)


def _trained_look(m):
    rng = np.random.default_rng(3838)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        elif isinstance(layer, nn.Conv1D):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_ecapa_tdnn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EcapaSpeakerNet(hierarchical=bug != "paddle_res2_no_hier", unbiased_ctx=bug == "paddle_ctx_std_unbiased")
    _trained_look(m)
    m.eval()
    return m


def _fbank():
    rng = np.random.default_rng(383)
    return rng.standard_normal((BATCH, FRAMES, N_MELS)).astype("float32")


def inputs():
    return (paddle.to_tensor(_fbank()),), {}


def loss(output):
    # speaker embeddings [2, 24]
    return (output**2).mean()

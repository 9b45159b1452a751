"""Hand-written port, paddle side: a tiny CTC speech encoder with a projected LSTM (LSTMP) (written by "person A").

Input: one batch of mel power spectrograms `feats` [2, 40, 20] (positional, [B, T, mel],
numpy rng seed 91, exp of Normal(-4, 2): positive values 3.4e-5 .. 15.2, median 0.021, like
quiet-to-loud mel bins). Output: CTC
log-probabilities [2, 9, 12] (log_softmax over a 12-token vocabulary).

Network:
  log compression   log(x + 1e-6)
  conv subsampling  x[:, None] -> Conv2D(1, 8, 3, stride 2) -> ReLU -> Conv2D(8, 8, 3, stride 2)
                    -> ReLU: [B, 8, 9, 4] (time 40 -> 19 -> 9, mel 20 -> 9 -> 4), flattened per
                    frame to 32 features -> Linear(32, 24)
  LSTMP             2 layers, hidden 32, projection 16 (no projection bias), zero initial states:
                    gates = W_x x_t + b_x + W_h r_{t-1} + b_h;  i, f, o = sigmoid;  g = tanh
                    c_t = f * c_{t-1} + i * g;  r_t = W_p (o * tanh(c_t))   (r is both output
                    and recurrent state, 16 wide)
  classifier        Linear(16, 12) -> log_softmax over the vocabulary

Paddle idioms on this side ("person A" hand-wrote the LSTMP, TF LSTMCell(num_proj=...) style):
- root `LstmpCTC` registers `rnn` FIRST, then `subsample`, `frontend`, `classifier`; F.log_softmax
  is inline in the root.
- `frontend` = `LogCompression` (its own layer; holds eps).
- `subsample` = `ConvSubsample`: `conv_a`, `conv_b` (nn.Conv2D, ReLU inline), `proj` nn.Linear(32,
  24). It flattens FREQUENCY-MAJOR: [B, C, T, F] is transposed to [B, T, F, C] before the reshape,
  so `proj`'s input feature index is f * 8 + c (torch's is c * 4 + f).
- `rnn` = `StackedLSTMP`: `cells` LayerList of two `LSTMPCell`, layer-major loops in Python (each
  cell is CALLED once per time step: 9 calls per layer); returns (output [B, T, 16], (h_n [2, B,
  16], c_n [2, B, 32])).
- `LSTMPCell`: `x2gates` nn.Linear(in, 128), `h2gates` nn.Linear(16, 128) (both with bias),
  `proj` nn.Linear(32, 16, bias_attr=False). The 128 gate columns are laid out in TF order
  (i, j, f, o), j being the cell candidate g: NOT torch's (i, f, g, o).
- model() gives every Linear / Conv2D seeded trained-looking weights and non-zero biases (the
  forget-gate bias block around +1) (rng seed 9191).

The torch side (port_lstmp_asr_torch.py) was written independently (WeNet / ESPnet style, one
nn.LSTM(proj_size=16)).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_forget_bias  -> LSTMPCell adds TF's constant forget_bias=1.0 to the forget-gate
                         pre-activation on top of the learned biases, in both layers
  paddle_log_eps      -> LogCompression is built with eps=1e-5 instead of 1e-6 (precision-level:
                         it only moves the quietest mel bins)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_MELS, FRAMES = 20, 40
CONV_CH = 8
D_MODEL, HIDDEN, PROJ, N_LAYERS = 24, 32, 16, 2
VOCAB = 12
BATCH = 2
LOG_EPS = 1e-6
OWN_BUGS = {"paddle_forget_bias", "paddle_log_eps"}
OTHER_BUGS = {"torch_subsample_flatten", "torch_lstm_not_batch_first"}


class LogCompression(nn.Layer):
    def __init__(self, eps=LOG_EPS):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return paddle.log(x + self.eps)


class ConvSubsample(nn.Layer):
    def __init__(self, n_mels, channels, d_model):
        super().__init__()
        self.conv_a = nn.Conv2D(1, channels, 3, stride=2, data_format="NCHW")
        self.conv_b = nn.Conv2D(channels, channels, 3, stride=2, data_format="NCHW")
        f_out = ((n_mels - 1) // 2 - 1) // 2
        self.proj = nn.Linear(f_out * channels, d_model)

    def forward(self, x):
        x = F.relu(self.conv_a(x.unsqueeze(1)))
        x = F.relu(self.conv_b(x))  # [B, C, T', F']
        b, c, t, f = x.shape
        x = x.transpose([0, 2, 3, 1]).reshape([b, t, f * c])
        return self.proj(x)


class LSTMPCell(nn.Layer):
    def __init__(self, input_size, hidden_size, proj_size, forget_bias=0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.forget_bias = forget_bias
        self.x2gates = nn.Linear(input_size, 4 * hidden_size)
        self.h2gates = nn.Linear(proj_size, 4 * hidden_size)
        self.proj = nn.Linear(hidden_size, proj_size, bias_attr=False)

    def forward(self, x, r, c):
        gates = self.x2gates(x) + self.h2gates(r)
        i, j, f, o = paddle.split(gates, 4, axis=-1)
        if self.forget_bias:
            f = f + self.forget_bias
        c = F.sigmoid(f) * c + F.sigmoid(i) * paddle.tanh(j)
        r = self.proj(F.sigmoid(o) * paddle.tanh(c))
        return r, c


class StackedLSTMP(nn.Layer):
    def __init__(self, input_size, hidden_size, proj_size, num_layers, forget_bias=0.0):
        super().__init__()
        self.hidden_size, self.proj_size = hidden_size, proj_size
        self.cells = nn.LayerList([
            LSTMPCell(input_size if k == 0 else proj_size, hidden_size, proj_size, forget_bias)
            for k in range(num_layers)
        ])

    def forward(self, x):
        b, t = x.shape[0], x.shape[1]
        last_r, last_c = [], []
        seq = x
        for cell in self.cells:
            r = paddle.zeros([b, self.proj_size], dtype=x.dtype)
            c = paddle.zeros([b, self.hidden_size], dtype=x.dtype)
            outs = []
            for step in range(t):
                r, c = cell(seq[:, step], r, c)
                outs.append(r)
            seq = paddle.stack(outs, axis=1)
            last_r.append(r)
            last_c.append(c)
        return seq, (paddle.stack(last_r), paddle.stack(last_c))


class LstmpCTC(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.rnn = StackedLSTMP(D_MODEL, HIDDEN, PROJ, N_LAYERS,
                                forget_bias=1.0 if bug == "paddle_forget_bias" else 0.0)
        self.subsample = ConvSubsample(N_MELS, CONV_CH, D_MODEL)
        self.frontend = LogCompression(1e-5 if bug == "paddle_log_eps" else LOG_EPS)
        self.classifier = nn.Linear(PROJ, VOCAB)

    def forward(self, feats):
        x = self.subsample(self.frontend(feats))
        x, _ = self.rnn(x)
        return F.log_softmax(self.classifier(x), axis=-1)


def _trained_look(m):
    rng = np.random.default_rng(9191)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Conv2D):
            fan_in = int(np.prod(layer.weight.shape[1:]))
            layer.weight.set_value(rng.normal(0.0, 1.2 / np.sqrt(fan_in), layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        elif isinstance(layer, nn.Linear):
            fan_in = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(0.0, 1.0 / np.sqrt(fan_in), layer.weight.shape).astype("float32"))
            if layer.bias is not None:
                bias = rng.normal(0.0, 0.15, layer.bias.shape).astype("float32")
                if _name.endswith("x2gates"):  # TF order (i, j, f, o): the forget block is the third
                    h = bias.shape[0] // 4
                    bias[2 * h:3 * h] += 1.0
                layer.bias.set_value(bias)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_lstmp_asr paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = LstmpCTC(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _feats():
    rng = np.random.default_rng(91)
    return np.exp(rng.normal(-4.0, 2.0, (BATCH, FRAMES, N_MELS))).astype("float32")


def inputs():
    return (paddle.to_tensor(_feats()),), {}


def loss(output):
    # CTC log-probabilities [2, 9, 12]
    return (output**2).mean()

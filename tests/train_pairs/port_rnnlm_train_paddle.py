"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a word-level LSTM
language model, AWD-LSTM-lite, trained 3 steps on a new token window each step.

    embedding (50 x 32), in_drop (LockedDropout 0.2: one mask per sequence, shared over time),
    lstm = paddle.nn.LSTM(32, 32, num_layers=2) (batch-major; no inter-layer dropout),
    out_drop (LockedDropout 0.3),
    logits = out @ embedding.weight^T + dec_bias (TIED decoder: no decoder layer, a separate bias
    parameter [50])
Buffer: lstm._dropout_state (paddle's RNN dropout state; replaced by an empty uint8 tensor in
model(), since paddle leaves it uninitialised and unreadable). LockedDropout draws its [B, 1, H]
mask with F.dropout on a ones tensor (the AWD-LSTM way, written with paddle's functional dropout)
and multiplies: 2 calls with p > 0 per forward. Zero initial
LSTM state every step (no hidden state carried between batches). model.train().

Data: a token stream of 4 rows x 25 ids (default_rng(24), ids 0..49 drawn with Zipf frequencies
p ~ 1 / rank, so there is something to learn); step k reads the window
ids[:, 8k : 8k + 8] and predicts ids[:, 8k + 1 : 8k + 9] (inputs(step)); loss = cross-entropy over
all 4 x 8 next tokens.

Optimizer: Momentum(learning_rate=StepDecay(1.0, step_size=2, gamma=0.5), momentum=0.9) (lr 1.0,
1.0, 0.5 for updates 1..3; paddle's velocity v = 0.9 v + g, p -= lr v, no dampening, no nesterov)
with grad_clip=ClipGradByGlobalNorm(0.25). optimizer() returns (optimizer, scheduler).
Weights: person A's init (paddle.seed(0)): embedding U(-0.5, 0.5) (AWD-LSTM's U(-0.1, 0.1) left the
global gradient norm below the 0.25 clip: 0.25, 0.37, 0.33; with 0.5: 0.34, 0.46, 0.45, so the clip
acts at every step), LSTM paddle's default U(-1/sqrt(32), 1/sqrt(32)), dec_bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_swap_dropouts -> the model built with its two dropout rates in the wrong positional order
              (RNNLM(V, E, H, L, 0.3, 0.2) for (dropout_in, dropout_out)): the input dropout p 0.3
              and the output dropout p 0.2
  paddle_clip_by_value -> grad_clip=ClipGradByValue(0.25): every gradient ELEMENT clipped to
              [-0.25, 0.25] taken for the global-norm clipping of torch's clip_grad_norm_(.., 0.25)
              (the per-tensor ClipGradByNorm would be the other wrong pick, but paddle 3.3.1 has
              no float64 CPU kernel for it, and the ground truth is checked in float64)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_swap_dropouts", "paddle_clip_by_value"} | {"steplr_step_size"}  # torch's, ignored here
VOCAB, EMB, HID, LAYERS = 50, 32, 32, 2
DROP_IN, DROP_OUT = 0.2, 0.3
BATCH, BPTT, STEPS = 4, 8, 3
LR, MOMENTUM, STEP_SIZE, GAMMA, CLIP = 1.0, 0.9, 2, 0.5, 0.25
INIT = 0.5  # AWD-LSTM uses 0.1; with it the global gradient norm stayed below the 0.25 clip
_ZIPF = 1.0 / np.arange(1, VOCAB + 1)  # word frequencies ~ 1 / rank
STREAM = np.random.default_rng(24).choice(VOCAB, (BATCH, BPTT * STEPS + 1), p=_ZIPF / _ZIPF.sum()).astype("int64")
_TARGETS = [None]


class LockedDropout(nn.Layer):
    """Variational dropout: one keep-mask per sequence and feature, shared by all time steps."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):  # x [B, T, H]
        if not self.training or not self.p:
            return x
        mask = F.dropout(paddle.ones([x.shape[0], 1, x.shape[2]], dtype=x.dtype), p=self.p, training=True)
        return x * mask


class RNNLM(nn.Layer):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout_in, dropout_out):
        super().__init__()
        self.embedding = nn.Embedding(ntoken, ninp)
        self.in_drop = LockedDropout(dropout_in)
        self.lstm = nn.LSTM(ninp, nhid, num_layers=nlayers)
        self.out_drop = LockedDropout(dropout_out)
        self.dec_bias = self.create_parameter([ntoken], is_bias=True)

    def forward(self, ids):
        x = self.in_drop(self.embedding(ids))
        out, _ = self.lstm(x)
        out = self.out_drop(out)
        return paddle.matmul(out, self.embedding.weight, transpose_y=True) + self.dec_bias  # tied


def model():
    b = bug(BUGS)
    paddle.seed(0)
    if b == "paddle_swap_dropouts":
        m = RNNLM(VOCAB, EMB, HID, LAYERS, DROP_OUT, DROP_IN)
    else:
        m = RNNLM(VOCAB, EMB, HID, LAYERS, DROP_IN, DROP_OUT)
    m.embedding.weight.set_value(paddle.uniform([VOCAB, EMB], min=-INIT, max=INIT))
    m.dec_bias.set_value(paddle.normal(0.0, 0.1, [VOCAB]))
    # paddle.nn.LSTM registers `_dropout_state` (the cuDNN dropout state, uint8) as an uninitialised
    # buffer that cannot be read (.cpu() raises); an empty uint8 tensor in its place reads as [] (the
    # CPU kernel neither needs nor fills it: dropout 0)
    m.lstm._dropout_state = paddle.zeros([0], dtype="uint8")
    m.train()
    return m


def inputs(step=0):
    window = STREAM[:, BPTT * step: BPTT * step + BPTT + 1]
    _TARGETS[0] = window[:, 1:]
    return (paddle.to_tensor(window[:, :-1]),), {}


def loss(output):
    return F.cross_entropy(output.reshape([-1, VOCAB]), paddle.to_tensor(_TARGETS[0].reshape(-1)))


def optimizer(model):
    sched = paddle.optimizer.lr.StepDecay(learning_rate=LR, step_size=STEP_SIZE, gamma=GAMMA)
    clip = (paddle.nn.ClipGradByValue(CLIP) if bug(BUGS) == "paddle_clip_by_value"
            else paddle.nn.ClipGradByGlobalNorm(CLIP))
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=model.parameters(),
                                    grad_clip=clip)
    return opt, sched

"""Hand-written port in TRAINING mode, paddle side (written by "person A", the PaddleSpeech
DeepSpeech2 way): a tiny CTC speech recogniser trained 4 steps.

    conv  = Conv1dSubsampling: conv1 Conv1D(8 -> 16, kernel 3, stride 2, padding 1,
            data_format="NLC"), ReLU, conv2 Conv1D(16 -> 16, same), ReLU (4x subsampling in time:
            40 frames -> 10), dropout (Dropout 0.1); the features stay batch-major [B, T, C]
            throughout (no transposes)
    fc    = Linear(32 -> 10) (weight [in, out]) - registered BEFORE the recurrent layer, called after
    rnn   = BiGRU (PaddleSpeech BiRNNWithBN style, without the BN): fw_cell, bw_cell = GRUCell(16, 16),
            fw_rnn = nn.RNN(fw_cell), bw_rnn = nn.RNN(bw_cell, is_reverse=True) (each cell is registered
            twice, as rnn.fw_cell and inside rnn.fw_rnn; named_parameters lists it once, as rnn.fw_cell.*;
            each cell is CALLED once per time step, 10 times per forward); outputs concatenated
            [forward | backward] -> [B, 10, 32]
    dropout = Dropout(0.1) on the GRU output, then fc, then F.log_softmax(axis=-1): the model returns
            log-probabilities [B, 10, 10] (batch-major)
Dropout 0.1: 2 calls per forward (conv.dropout [4, 10, 16], dropout [4, 10, 32]). model.train().

Data: default_rng(37): features N(0, 1) [4, 40, 8] with lengths 40, 36, 32, 28 (frames after the
length zeroed), the same batch every step; subsampled lengths 10, 9, 8, 7 (two stride-2 convolutions:
(L + 2 - 3) // 2 + 1, twice); labels (ids 1..8; 0 is the blank) of lengths 4, 3, 3, 2, padded with 0
to [4, 4] int32 (paddle's warpctc wants int32 labels) - the vocabulary has 10 entries (blank 0,
tokens 1..9; token 9 does not occur in this batch).
Loss: F.ctc_loss(log_probs.transpose([1, 0, 2]) (time-major [T, B, V], as warpctc wants),
labels [B, Lmax] int32, input_lengths int64, label_lengths int64, blank=0, reduction="mean"):
paddle's "mean" divides each utterance's loss by its label length and averages over the batch (=
torch's "mean"). warpctc applies its own softmax to the input; it gets log-probabilities here, and
softmax(log_softmax(x)) = softmax(x), so the loss is the CTC loss of the model's distribution.

Optimizer: Momentum(learning_rate=0.2, momentum=0.9, grad_clip=ClipGradByGlobalNorm(1.0)) (velocity
v = 0.9 v + g, p -= lr v; the clip scales every gradient by 1 / max(1, global norm)); constant lr.
Weights: person A's init (paddle.seed(0)): paddle's default initialisers for the convolution,
GRU and fc weights, every bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_drop_default -> Conv1dSubsampling builds its dropout as nn.Dropout() (the rate argument lost
                         in the port): paddle's default p 0.5 instead of 0.1
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_drop_default"} | {"blank_last", "clip_per_param"}  # the torch side's, ignored here
FEAT, CONV, HIDDEN, VOCAB, BLANK = 8, 16, 16, 10, 0
DROPOUT = 0.1
LR, MOMENTUM, CLIP = 0.2, 0.9, 1.0
FEAT_LENS = np.array([40, 36, 32, 28], "int64")
LABEL_LENS = np.array([4, 3, 3, 2], "int64")


def _data():
    rng = np.random.default_rng(37)
    feats = rng.standard_normal((len(FEAT_LENS), int(FEAT_LENS.max()), FEAT)).astype("float32")
    for b, n in enumerate(FEAT_LENS):
        feats[b, n:] = 0.0
    labels = np.zeros((len(LABEL_LENS), int(LABEL_LENS.max())), "int32")
    for b, n in enumerate(LABEL_LENS):
        labels[b, :n] = rng.integers(1, VOCAB - 1, n)
    return feats, labels


FEATS, LABELS = _data()


def subsampled_lengths(lens):
    for _ in range(2):  # conv1, conv2: kernel 3, stride 2, padding 1
        lens = (lens + 2 - 3) // 2 + 1
    return lens


class Conv1dSubsampling(nn.Layer):
    def __init__(self, idim, odim, dropout_rate):
        super().__init__()
        self.conv1 = nn.Conv1D(idim, odim, 3, stride=2, padding=1, data_format="NLC")
        self.conv2 = nn.Conv1D(odim, odim, 3, stride=2, padding=1, data_format="NLC")
        if bug(BUGS) == "paddle_drop_default":
            self.dropout = nn.Dropout()
        else:
            self.dropout = nn.Dropout(dropout_rate)

    def forward(self, x):  # x [B, T, idim]
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.dropout(x)


class BiGRU(nn.Layer):
    def __init__(self, i_size, h_size):
        super().__init__()
        self.fw_cell = nn.GRUCell(i_size, h_size)
        self.bw_cell = nn.GRUCell(i_size, h_size)
        self.fw_rnn = nn.RNN(self.fw_cell, is_reverse=False, time_major=False)
        self.bw_rnn = nn.RNN(self.bw_cell, is_reverse=True, time_major=False)

    def forward(self, x):
        # zero initial states in the input's dtype (the cells' default initial state is float32)
        h0 = paddle.zeros([x.shape[0], self.fw_cell.hidden_size], dtype=x.dtype)
        fw_x, _ = self.fw_rnn(x, initial_states=h0)
        bw_x, _ = self.bw_rnn(x, initial_states=h0)
        return paddle.concat([fw_x, bw_x], axis=-1)


class DeepSpeechLite(nn.Layer):
    def __init__(self, feat_size, conv_size, rnn_size, vocab_size, dropout):
        super().__init__()
        self.conv = Conv1dSubsampling(feat_size, conv_size, dropout)
        self.fc = nn.Linear(2 * rnn_size, vocab_size)
        self.rnn = BiGRU(conv_size, rnn_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, audio):
        x = self.conv(audio)
        x = self.dropout(self.rnn(x))
        return F.log_softmax(self.fc(x), axis=-1)


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = DeepSpeechLite(FEAT, CONV, HIDDEN, VOCAB, DROPOUT)
    paddle.seed(1)
    for name, p in m.named_parameters():
        if "bias" in name:
            p.set_value(paddle.normal(0.0, 0.1, p.shape).astype(p.dtype))
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(FEATS),), {}


def loss(output):
    log_probs = output.transpose([1, 0, 2])  # [T, B, V]
    return F.ctc_loss(log_probs, paddle.to_tensor(LABELS), paddle.to_tensor(subsampled_lengths(FEAT_LENS)),
                      paddle.to_tensor(LABEL_LENS), blank=BLANK, reduction="mean")


def optimizer(model):
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=model.parameters(),
                                     grad_clip=nn.ClipGradByGlobalNorm(CLIP))

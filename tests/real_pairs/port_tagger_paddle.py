"""Hand-written port, paddle side: a BiLSTM sequence tagger with a char-CNN (written by "person A").

Word embedding [24] and char-CNN features [16] are concatenated, then projected (Linear 40->32 +
Tanh), run through paddle's own 2-layer bidirectional nn.LSTM (direction="bidirect", batch-major,
variable lengths through `sequence_length=`), and tagged by a Linear-Tanh-Linear head. Pad
positions (t >= length) of the output are zeroed.

The torch side (port_tagger_torch.py) was written independently: it projects word and char
features separately and sums them (the same math), packs the sequence with pack_padded_sequence.

PADIFF_BUG=paddle_char_pad plants this side's bug: the char-CNN's Conv1D is built without padding
(padding 0 instead of kernel_size // 2), so the max over time sees only L-2 windows.
"""
import os

import numpy as np
import paddle
from paddle import nn

WORDS, CHARS, TAGS = 50, 30, 9
WORD_DIM, CHAR_DIM, FILTERS, WIDTH = 24, 8, 16, 3
HIDDEN = 16  # per direction
BATCH, SEQ, WORD_LEN = 2, 12, 6
LENGTHS = [12, 8]


class CharCNN(nn.Layer):
    def __init__(self, n_chars, char_dim, n_filters, width, padding):
        super().__init__()
        self.conv = nn.Conv1D(char_dim, n_filters, width, padding=padding)
        self.char_embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.act = nn.ReLU()

    def forward(self, char_ids):  # [B, T, L] -> [B, T, n_filters]
        b, t, n = char_ids.shape
        x = self.char_embed(char_ids.reshape([b * t, n]))  # [B*T, L, C]
        x = self.act(self.conv(x.transpose([0, 2, 1])))  # NCL
        return x.max(axis=-1).reshape([b, t, -1])


class BiLSTMTagger(nn.Layer):
    def __init__(self, char_padding=WIDTH // 2):
        super().__init__()
        self.word_embed = nn.Embedding(WORDS, WORD_DIM, padding_idx=0)
        self.char_cnn = CharCNN(CHARS, CHAR_DIM, FILTERS, WIDTH, char_padding)
        self.proj = nn.Sequential(nn.Linear(WORD_DIM + FILTERS, 2 * HIDDEN), nn.Tanh())
        self.lstm = nn.LSTM(2 * HIDDEN, HIDDEN, num_layers=2, direction="bidirect")
        self.head = nn.Sequential(nn.Linear(2 * HIDDEN, 2 * HIDDEN), nn.Tanh(), nn.Linear(2 * HIDDEN, TAGS))

    def forward(self, word_ids, char_ids, seq_len):
        feats = paddle.concat([self.word_embed(word_ids), self.char_cnn(char_ids)], axis=-1)
        out, _ = self.lstm(self.proj(feats), sequence_length=seq_len)
        logits = self.head(out)
        t = word_ids.shape[1]
        keep = (paddle.arange(t).unsqueeze(0) < seq_len.unsqueeze(1)).astype(logits.dtype)
        return logits * keep.unsqueeze(-1)


def model():
    paddle.seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    m = BiLSTMTagger(char_padding=0 if bug == "paddle_char_pad" else WIDTH // 2)
    # TRAIN mode on purpose: paddle 3.3.1's nn.LSTM run in eval mode cannot run backward on CPU
    # ("Tensor holds no memory" in RnnGradNode: no reserve space is kept). The model has no
    # dropout (LSTM dropout 0) and no norm with running statistics, so train == eval numerically.
    m.train()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    words = np.zeros((BATCH, SEQ), "int64")
    chars = np.zeros((BATCH, SEQ, WORD_LEN), "int64")
    for b, n in enumerate(LENGTHS):
        words[b, :n] = rng.integers(1, WORDS, size=n)  # pad id 0 only after the length
        for t in range(n):
            k = int(rng.integers(2, WORD_LEN + 1))  # word of k chars, then char pads (0)
            chars[b, t, :k] = rng.integers(1, CHARS, size=k)
    return words, chars, np.array(LENGTHS, "int64")


def inputs():
    words, chars, lengths = _arrays()
    return (paddle.to_tensor(words), paddle.to_tensor(chars), paddle.to_tensor(lengths)), {}


def loss(output):
    # tag logits [B, T, TAGS], zero at pad positions; no norm at the end: a mean of squares
    # depends on every real position
    return (output**2).mean()

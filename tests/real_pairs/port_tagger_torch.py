"""Hand-written port, torch side: a BiLSTM sequence tagger with a char-CNN (written by "person B").

Same math as port_tagger_paddle.py, in torch's idioms: the word embedding and the char-CNN
features are projected by two Linears (word_proj with bias, char_proj without) and summed before
the tanh -- equal to the paddle side's Linear over their concatenation; the sequence is packed
with pack_padded_sequence (enforce_sorted=False) for a 2-layer nn.LSTM(bidirectional=True,
batch_first=True); the head is hidden -> tanh -> out; pad positions are zeroed with masked_fill.

Planted bugs (PADIFF_BUG), see port_tagger_truth.json:
  no_pack -> the model's forward feeds the padded batch to the LSTM without packing: the lengths
             are ignored, so the backward direction of the shorter sequence starts on its pads
"""
import os
import types

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

WORDS, CHARS, TAGS = 50, 30, 9
WORD_DIM, CHAR_DIM, FILTERS, WIDTH = 24, 8, 16, 3
HIDDEN = 16  # per direction
BATCH, SEQ, WORD_LEN = 2, 12, 6
LENGTHS = [12, 8]


class CharEncoder(nn.Module):
    def __init__(self, n_chars, char_dim, n_filters, width):
        super().__init__()
        self.embedding = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.conv = nn.Conv1d(char_dim, n_filters, width, padding=width // 2)

    def forward(self, chars):  # [B, T, L] -> [B, T, n_filters]
        b, t, n = chars.shape
        x = self.embedding(chars.view(b * t, n)).transpose(1, 2)
        x = F.relu(self.conv(x))
        return x.max(dim=2).values.view(b, t, -1)


class SequenceTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.char_encoder = CharEncoder(CHARS, CHAR_DIM, FILTERS, WIDTH)
        self.word_embedding = nn.Embedding(WORDS, WORD_DIM, padding_idx=0)
        self.word_proj = nn.Linear(WORD_DIM, 2 * HIDDEN)
        self.char_proj = nn.Linear(FILTERS, 2 * HIDDEN, bias=False)
        self.rnn = nn.LSTM(2 * HIDDEN, HIDDEN, num_layers=2, bidirectional=True, batch_first=True)
        self.hidden = nn.Linear(2 * HIDDEN, 2 * HIDDEN)
        self.out = nn.Linear(2 * HIDDEN, TAGS)

    def _features(self, words, chars):
        return torch.tanh(self.word_proj(self.word_embedding(words)) + self.char_proj(self.char_encoder(chars)))

    def _tags(self, out, words, lengths):
        logits = self.out(torch.tanh(self.hidden(out)))
        pad = torch.arange(words.shape[1]).unsqueeze(0) >= lengths.unsqueeze(1)
        return logits.masked_fill(pad.unsqueeze(-1), 0.0)

    def forward(self, words, chars, lengths):
        x = self._features(words, chars)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        return self._tags(out, words, lengths)


def _forward_no_pack(self, words, chars, lengths):
    """The bug: the padded batch goes straight into the LSTM (lengths only used for the output mask)."""
    x = self._features(words, chars)
    out, _ = self.rnn(x)
    return self._tags(out, words, lengths)


def model():
    torch.manual_seed(0)
    m = SequenceTagger()
    # train mode like the paddle side (paddle's nn.LSTM cannot run backward in eval mode); no
    # dropout, no running statistics: train == eval numerically
    m.train()
    if os.environ.get("PADIFF_BUG", "") == "no_pack":
        m.forward = types.MethodType(_forward_no_pack, m)
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
    return (torch.from_numpy(words), torch.from_numpy(chars), torch.from_numpy(lengths)), {}


def loss(output):
    # tag logits [B, T, TAGS], zero at pad positions; no norm at the end: a mean of squares
    # depends on every real position
    return (output**2).mean()

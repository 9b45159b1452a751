"""Hand-written port, torch side: the same tiny sequence tagger on torch's BUILT-IN fused RNN layers
(written by "person B", independently of port_rnn_tagger_paddle.py).

    word_embeds  nn.Embedding(40, 16, padding_idx=0)
    lstm         nn.LSTM(16, 16, num_layers=2, bidirectional=True, batch_first=True)
    bridge       StateBridge: fc Linear(32, 24) on the top layer's final states h_n[-2] | h_n[-1],
                 torch.tanh, unsqueezed to [1, B, 24]
    gru          nn.GRU(32, 24, batch_first=True)
    ln           nn.LayerNorm(24)
    hidden2tag   nn.Linear(24, 7); logits at pad positions are zeroed (masked_fill)

Variable lengths the torch way: the embedded batch is packed ONCE with
pack_padded_sequence(enforce_sorted=False); the LSTM takes and returns a PackedSequence, the
packed LSTM output goes straight into the GRU (another PackedSequence in and out; torch permutes
h0 into the sorted order itself), and only the GRU output is unpacked (pad_packed_sequence,
total_length=10; zeros at the pads). So the `lstm` and `gru` modules see PackedSequence
(data [16, features] in time-major packed order, plus batch_sizes / sorted_indices /
unsorted_indices) where the paddle side has padded [B, T, F] tensors plus sequence_length.

Registration order: word_embeds, lstm, bridge, gru, ln, hidden2tag.

PADIFF_BUG (this side's bugs):
  bridge_first_layer -> the bridge takes h_n[0] | h_n[1] (the FIRST layer's forward and backward
                        states) instead of the top layer's h_n[-2] | h_n[-1]: the porter forgot
                        that h_n is [num_layers * 2, B, H], layer-major
  torch_ln_eps       -> ln built with eps=1e-6 (copied from another project's config, e.g. a
                        T5 / ViT-style layer_norm_eps) instead of the 1e-5 default that paddle's
                        LayerNorm uses - a precision-level difference: the GRU outputs it
                        normalizes are small (variance ~0.017), so eps shows
"""
import os

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

VOCAB, EMB, HIDDEN, DEC, TAGS = 40, 16, 16, 24, 7
BATCH, SEQ, PAD = 2, 10, 0
LENGTHS = (10, 6)

OWN_BUGS = ("bridge_first_layer", "torch_ln_eps")
OTHER_BUGS = ("paddle_no_seq_len",)


class StateBridge(nn.Module):
    def __init__(self, hidden, out, first_layer=False):
        super().__init__()
        self.first_layer = first_layer
        self.fc = nn.Linear(2 * hidden, out)

    def forward(self, h_n):  # [num_layers * 2, B, H]
        if self.first_layer:
            top = torch.cat([h_n[0], h_n[1]], dim=-1)
        else:
            top = torch.cat([h_n[-2], h_n[-1]], dim=-1)
        return torch.tanh(self.fc(top)).unsqueeze(0)


class BiLSTMGRUTagger(nn.Module):
    def __init__(self, first_layer=False, ln_eps=1e-5):
        super().__init__()
        self.word_embeds = nn.Embedding(VOCAB, EMB, padding_idx=PAD)
        self.lstm = nn.LSTM(EMB, HIDDEN, num_layers=2, bidirectional=True, batch_first=True)
        self.bridge = StateBridge(HIDDEN, DEC, first_layer=first_layer)
        self.gru = nn.GRU(2 * HIDDEN, DEC, batch_first=True)
        self.ln = nn.LayerNorm(DEC, eps=ln_eps)
        self.hidden2tag = nn.Linear(DEC, TAGS)

    def forward(self, tokens, lengths):
        emb = self.word_embeds(tokens)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        lstm_out, (h_n, _) = self.lstm(packed)
        h0 = self.bridge(h_n)
        gru_out, _ = self.gru(lstm_out, h0)
        out, _ = pad_packed_sequence(gru_out, batch_first=True, total_length=tokens.shape[1])
        logits = self.hidden2tag(self.ln(out))
        return logits.masked_fill((tokens == PAD).unsqueeze(-1), 0.0)


def model():
    torch.manual_seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_rnn_tagger: unknown PADIFF_BUG {bug!r}")
    m = BiLSTMGRUTagger(
        first_layer=bug == "bridge_first_layer",
        ln_eps=1e-6 if bug == "torch_ln_eps" else 1e-5,
    )
    # TRAIN mode on purpose (as in port_tagger): the paddle twin's nn.LSTM / nn.GRU run in eval
    # mode cannot run backward on CPU ("Tensor holds no memory" in RnnGradNode). Nothing here depends
    # on the mode (RNN dropout 0, no dropout layer, LayerNorm has no running statistics), so train
    # == eval numerically.
    m.train()
    return m


def _arrays():
    rng = np.random.default_rng(23)
    tokens = rng.integers(1, VOCAB, size=(BATCH, SEQ)).astype("int64")
    for b, n in enumerate(LENGTHS):
        tokens[b, n:] = PAD
    return tokens, np.array(LENGTHS, dtype="int64")


def inputs():
    tokens, lengths = _arrays()
    return (torch.from_numpy(tokens), torch.from_numpy(lengths)), {}


def loss(output):
    # [B, T, 7] logits, zero at the pads: a mean of squares depends on every real position
    return (output**2).mean()

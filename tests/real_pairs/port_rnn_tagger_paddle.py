"""Hand-written port, paddle side: a tiny sequence tagger on paddle's BUILT-IN fused RNN layers
(written by "person A").

    embedding   nn.Embedding(40, 16, padding_idx=0)
    encoder     nn.LSTM(16, 16, num_layers=2, direction="bidirect")   batch-major [B, T, 32]
                called with sequence_length= (the reverse direction starts at each row's last
                real token; outputs at pad positions are zeros)
    decoder     nn.GRU(32, 24) forward-only, sequence_length=, initial state from `bridge`
    bridge      EncoderBridge: takes the encoder's final hidden states h [4, B, 16]
                (layer-major, direction-minor: l0 fw, l0 bw, l1 fw, l1 bw), concatenates the TOP
                layer's two directions h[-2] | h[-1] and returns tanh(proj(.)) as [1, B, 24]
    norm        nn.LayerNorm(24)
    classifier  nn.Linear(24, 7); logits at pad positions are zeroed (multiplied by the mask)

Registration order: embedding, encoder, decoder, bridge, norm, classifier (the bridge is
registered after the decoder but called before it).

Input: token ids [2, 10] int64, right-padded with 0, lengths [10, 6]. Output: logits [2, 10, 7].

Gate conventions (checked by experiment, see NOTES-set12-h19.md): paddle's nn.LSTM / nn.GRU
store weight_ih_l{k}[_reverse] [G*H, in], weight_hh_l{k} [G*H, H], bias_ih / bias_hh [G*H]
with the SAME names, shapes, gate order (LSTM i, f, g, o; GRU r, z, n) and reset-gate placement
(n = tanh(W_in x + b_in + r * (W_hn h + b_hn))) as torch's nn.LSTM / nn.GRU: a straight copy
reproduces torch to ~1e-7. The final-state layout [layers * directions, B, H] is the same too.

PADIFF_BUG=paddle_no_seq_len plants this side's bug: the encoder is called without
`sequence_length`, so for the shorter row the reverse direction starts at the last PAD position
and runs through 4 pad embeddings (zeros) before it reaches the real tokens.
"""
import os

import numpy as np
import paddle
from paddle import nn

VOCAB, EMB, HIDDEN, DEC, TAGS = 40, 16, 16, 24, 7
BATCH, SEQ, PAD = 2, 10, 0
LENGTHS = (10, 6)

OWN_BUGS = ("paddle_no_seq_len",)
OTHER_BUGS = ("bridge_first_layer", "torch_ln_eps")


class EncoderBridge(nn.Layer):
    """Initial decoder state from the encoder's top-layer final states (both directions)."""

    def __init__(self, hidden, out):
        super().__init__()
        self.proj = nn.Linear(2 * hidden, out)

    def forward(self, final_h):  # [layers * 2, B, H]
        top = paddle.concat([final_h[-2], final_h[-1]], axis=-1)  # top layer: forward | backward
        return paddle.tanh(self.proj(top)).unsqueeze(0)  # [1, B, DEC]


class RNNTagger(nn.Layer):
    def __init__(self, use_lengths=True):
        super().__init__()
        self.use_lengths = use_lengths
        self.embedding = nn.Embedding(VOCAB, EMB, padding_idx=PAD)
        self.encoder = nn.LSTM(EMB, HIDDEN, num_layers=2, direction="bidirect")
        self.decoder = nn.GRU(2 * HIDDEN, DEC)
        self.bridge = EncoderBridge(HIDDEN, DEC)
        self.norm = nn.LayerNorm(DEC)
        self.classifier = nn.Linear(DEC, TAGS)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        if self.use_lengths:
            enc, (h, _c) = self.encoder(x, sequence_length=lengths)
        else:
            enc, (h, _c) = self.encoder(x)
        h0 = self.bridge(h)
        dec, _ = self.decoder(enc, initial_states=h0, sequence_length=lengths)
        logits = self.classifier(self.norm(dec))
        mask = (tokens != PAD).astype(logits.dtype).unsqueeze(-1)
        return logits * mask


def model():
    paddle.seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_rnn_tagger: unknown PADIFF_BUG {bug!r}")
    m = RNNTagger(use_lengths=bug != "paddle_no_seq_len")
    # TRAIN mode on purpose (as in port_tagger): paddle 3.3.1's nn.LSTM / nn.GRU run in eval mode
    # cannot run backward on CPU ("Tensor holds no memory" in RnnGradNode). Nothing here depends
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
    return (paddle.to_tensor(tokens), paddle.to_tensor(lengths)), {}


def loss(output):
    # [B, T, 7] logits, zero at the pads: a mean of squares depends on every real position
    return (output**2).mean()

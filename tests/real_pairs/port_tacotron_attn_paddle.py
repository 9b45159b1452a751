"""Hand-written port, paddle side: a Tacotron-2-style decoder core (written by "person A").

The decoder is unrolled for 6 teacher-forced steps over a fixed encoder memory [2, 10, 32] with
memory lengths [10, 7]. Sizes: 8 mel channels, prenet 8 -> 16 -> 16, attention LSTMCell
(16 + 32 -> 32), attention dim 16, location conv 2 -> 4 filters of width 5, decoder LSTMCell
(32 + 32 -> 32), frame projection 64 -> 8 and stop-token projection 64 -> 1.

    root `TacotronDecoder`
      prenet             `Prenet`: `layers` = LayerList of two Linear(.., 16); F.relu inline;
                         dropout is OFF (eval: the Tacotron-2 always-on prenet dropout is not
                         ported). Called ONCE on all decoder inputs [2, 6, 8] (go frame + the
                         first 5 target frames).
      attention_rnn      paddle.nn.LSTMCell(48, 32); called as cell(x, (h, c)), returns
                         (out, (h, c)); weight_ih [128, 48], gate order i, f, g, o (the same
                         layout as torch's, checked on a small cell).
      attention          `LocationSensitiveAttention`:
                           query_layer    Linear(32, 16, no bias)
                           memory_layer   Linear(32, 16, no bias), called ONCE by the root on
                                          the memory (processed memory [2, 10, 16])
                           location_layer `LocationLayer`: `location_conv` Conv1D(2, 4, 5,
                                          padding=2, no bias, data_format="NLC", i.e. it takes
                                          the [B, T, 2] stack of (previous, cumulative) weights
                                          with NO transpose), `location_dense` Linear(4, 16, no
                                          bias)
                           v              a raw create_parameter vector [16]:
                                          energies = sum(tanh(q + k + loc) * v, -1)
                         masked softmax: energies of padded memory steps set to -1e9 with
                         paddle.where BEFORE F.softmax.
      decoder_rnn        paddle.nn.LSTMCell(64, 32)
      linear_projection  Linear(64, 8): the mel frame from [decoder h, context]
      stop_head          `StopHead`: `linear` Linear(64, 1) + F.sigmoid inline.
    Registration order differs from the call order: attention is registered BEFORE
    attention_rnn, the output heads before decoder_rnn.

Per step t: x = prenet_out[:, t]; (h1, c1) = attention_rnn(concat(x, context), (h1, c1));
context, w = attention(h1, memory, processed, concat(w_prev, w_cum), mask); w_cum += w;
(h2, c2) = decoder_rnn(concat(h1, context), (h2, c2)); y = concat(h2, context); frame =
linear_projection(y), stop = stop_head(y). Output: (concat(frames, stops) [2, 6, 9], alignments
[2, 6, 10]).

PADIFF_BUG (this side's bugs; the torch side's names are accepted and ignored, any other name
raises ValueError):
  paddle_mask_after_softmax -> the padding mask is applied AFTER the softmax (weights of padded
                               steps zeroed, not renormalised), in LocationSensitiveAttention
  paddle_stop_no_sigmoid    -> StopHead returns the logit (F.sigmoid forgotten)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_MELS, PRENET, ENC, ATT_RNN, ATT_DIM, LOC_F, LOC_K, DEC_RNN = 8, 16, 32, 32, 16, 4, 5, 32
BATCH, T_ENC, STEPS = 2, 10, 6
LENGTHS = (10, 7)
OWN_BUGS = {"paddle_mask_after_softmax", "paddle_stop_no_sigmoid"}
OTHER_BUGS = {"torch_loc_conv_causal_pad", "torch_prenet_last_relu_missing"}


class Prenet(nn.Layer):
    def __init__(self, in_dim, sizes):
        super().__init__()
        dims = [in_dim] + sizes
        self.layers = nn.LayerList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])

    def forward(self, x):
        for linear in self.layers:
            x = F.relu(linear(x))  # dropout off (eval)
        return x


class LocationLayer(nn.Layer):
    def __init__(self, n_filters, kernel_size, attention_dim):
        super().__init__()
        self.location_conv = nn.Conv1D(2, n_filters, kernel_size, padding=(kernel_size - 1) // 2,
                                       bias_attr=False, data_format="NLC")
        self.location_dense = nn.Linear(n_filters, attention_dim, bias_attr=False)

    def forward(self, attention_weights_cat):
        # attention_weights_cat: [B, T, 2] (previous, cumulative)
        return self.location_dense(self.location_conv(attention_weights_cat))


class LocationSensitiveAttention(nn.Layer):
    def __init__(self, rnn_dim, embed_dim, attention_dim, n_filters, kernel_size, mask_after=False):
        super().__init__()
        self.mask_after = mask_after
        self.query_layer = nn.Linear(rnn_dim, attention_dim, bias_attr=False)
        self.memory_layer = nn.Linear(embed_dim, attention_dim, bias_attr=False)
        self.v = self.create_parameter([attention_dim], default_initializer=nn.initializer.Uniform(-0.5, 0.5))
        self.location_layer = LocationLayer(n_filters, kernel_size, attention_dim)

    def forward(self, query, memory, processed_memory, attention_weights_cat, mask):
        q = self.query_layer(query).unsqueeze(1)  # [B, 1, A]
        loc = self.location_layer(attention_weights_cat)  # [B, T, A]
        energies = (paddle.tanh(q + processed_memory + loc) * self.v).sum(-1)  # [B, T]
        if self.mask_after:
            weights = F.softmax(energies, axis=-1)
            weights = weights * mask.astype(weights.dtype)
        else:
            energies = paddle.where(mask, energies, paddle.full_like(energies, -1e9))
            weights = F.softmax(energies, axis=-1)
        context = paddle.bmm(weights.unsqueeze(1), memory).squeeze(1)  # [B, E]
        return context, weights


class StopHead(nn.Layer):
    def __init__(self, in_dim, with_sigmoid=True):
        super().__init__()
        self.with_sigmoid = with_sigmoid
        self.linear = nn.Linear(in_dim, 1)

    def forward(self, x):
        logit = self.linear(x)
        return F.sigmoid(logit) if self.with_sigmoid else logit


class TacotronDecoder(nn.Layer):
    def __init__(self, mask_after=False, stop_sigmoid=True):
        super().__init__()
        self.prenet = Prenet(N_MELS, [PRENET, PRENET])
        self.attention = LocationSensitiveAttention(ATT_RNN, ENC, ATT_DIM, LOC_F, LOC_K, mask_after)
        self.attention_rnn = nn.LSTMCell(PRENET + ENC, ATT_RNN)
        self.linear_projection = nn.Linear(DEC_RNN + ENC, N_MELS)
        self.stop_head = StopHead(DEC_RNN + ENC, stop_sigmoid)
        self.decoder_rnn = nn.LSTMCell(ATT_RNN + ENC, DEC_RNN)

    def forward(self, memory, memory_lengths, frames):
        b, t_enc = memory.shape[0], memory.shape[1]
        mask = paddle.arange(t_enc).unsqueeze(0) < memory_lengths.unsqueeze(1)  # [B, T] True = valid
        go = paddle.zeros([b, 1, N_MELS], dtype=memory.dtype)
        decoder_inputs = self.prenet(paddle.concat([go, frames[:, :-1]], axis=1))  # [B, S, P]
        processed_memory = self.attention.memory_layer(memory)

        att_h, att_c = paddle.zeros([b, ATT_RNN]), paddle.zeros([b, ATT_RNN])
        dec_h, dec_c = paddle.zeros([b, DEC_RNN]), paddle.zeros([b, DEC_RNN])
        w_prev, w_cum = paddle.zeros([b, t_enc]), paddle.zeros([b, t_enc])
        context = paddle.zeros([b, ENC])
        outs, aligns = [], []
        for t in range(frames.shape[1]):
            x = paddle.concat([decoder_inputs[:, t], context], axis=-1)
            _, (att_h, att_c) = self.attention_rnn(x, (att_h, att_c))
            w_cat = paddle.stack([w_prev, w_cum], axis=-1)  # [B, T, 2] for the NLC conv
            context, w_prev = self.attention(att_h, memory, processed_memory, w_cat, mask)
            w_cum = w_cum + w_prev
            _, (dec_h, dec_c) = self.decoder_rnn(paddle.concat([att_h, context], axis=-1), (dec_h, dec_c))
            y = paddle.concat([dec_h, context], axis=-1)
            outs.append(paddle.concat([self.linear_projection(y), self.stop_head(y)], axis=-1))
            aligns.append(w_prev)
        return paddle.stack(outs, axis=1), paddle.stack(aligns, axis=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tacotron_attn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TacotronDecoder(mask_after=bug == "paddle_mask_after_softmax", stop_sigmoid=bug != "paddle_stop_no_sigmoid")
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(21)
    memory = rng.standard_normal((BATCH, T_ENC, ENC)).astype("float32")
    frames = rng.standard_normal((BATCH, STEPS, N_MELS)).astype("float32")
    return memory, np.array(LENGTHS, dtype="int64"), frames


def inputs():
    memory, lengths, frames = _arrays()
    return (paddle.to_tensor(memory), paddle.to_tensor(lengths), paddle.to_tensor(frames)), {}


def loss(output):
    # (frames + stop [2, 6, 9], alignments [2, 6, 10])
    return (output[0] ** 2).mean()

"""Hand-written port, paddle side: a tiny BiGRU-CRF sequence tagger (written by "person A",
PaddleNLP-flavoured, but with the CRF written by hand).

    word_emb   nn.Embedding(40, 16, padding_idx=0)
    bigru      nn.GRU(16, 16, direction="bidirect"), batch-major, called with sequence_length=
               (the reverse direction starts at each row's last real token; pads give zeros)
    fc         nn.Linear(32, 5): the emissions [B, T, 5]
    crf        LinearChainCrf: `transitions` [5, 5] stored [from, to], `start_transitions` [5],
               `end_transitions` [5] (all create_parameter); forward(emissions, lengths, tags)
               returns the negative log-likelihood of the GIVEN tag path per sequence:
                 score(y) = start[y_0] + sum_t emit[t, y_t] + sum_{t>0} trans[y_{t-1}, y_t]
                            + end[y_{L-1}]
                 log Z     = forward algorithm: alpha_0 = start + emit_0,
                             alpha_t[j] = logsumexp_i(alpha_{t-1}[i] + trans[i, j]) + emit_t[j],
                             kept unchanged where t >= L (paddle.where on the length mask),
                             log Z = logsumexp(alpha + end)
                 nll       = log Z - score(y)
               The gold path score uses one-hot masks (paddle.nn.functional.one_hot) and sums.

Registration order: crf is registered BEFORE fc (the emission layer is called first).
Inputs: token ids [2, 10] (right-padded with 0), lengths [10, 7], gold tags [2, 10] (0 at pads).
Output: (nll [2], emissions [2, 10, 5]).

Gate conventions (checked by experiment, /tmp/h42/gru_check.py): paddle's nn.GRU stores
weight_ih_l0[_reverse] [48, 16], weight_hh_l0 [48, 16], bias_ih / bias_hh [48] with the SAME
names, gate order (r, z, n) and reset-gate placement as torch's nn.GRU: a straight copy
reproduces torch to 1.5e-7 (a copy with r and z swapped is 0.72 off).

Train mode (as port_rnn_tagger): paddle's nn.GRU in eval mode cannot run backward on CPU.
Nothing depends on the mode (no dropout).

PADIFF_BUG (this side's bugs; the torch side's names are accepted and ignored, any other name
raises ValueError):
  paddle_no_start_end  -> the CRF is built with with_start_stop_tag=False: start_transitions and
                          end_transitions exist (and are loaded) but are never added, in the
                          gold score nor in log Z
  paddle_viterbi_max   -> the forward algorithm reduces with max instead of logsumexp (the
                          porter copied the Viterbi recursion): log Z becomes the best-path score
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, EMB, HIDDEN, TAGS = 40, 16, 16, 5
BATCH, SEQ, PAD = 2, 10, 0
LENGTHS = (10, 7)
OWN_BUGS = ("paddle_no_start_end", "paddle_viterbi_max")
OTHER_BUGS = ("torch_transitions_from_to", "torch_gru_unpacked")


class LinearChainCrf(nn.Layer):
    def __init__(self, num_tags, with_start_stop_tag=True, use_max=False):
        super().__init__()
        self.num_tags = num_tags
        self.with_start_stop_tag = with_start_stop_tag
        self.use_max = use_max
        init = nn.initializer.Uniform(-0.5, 0.5)
        self.transitions = self.create_parameter([num_tags, num_tags], default_initializer=init)  # [from, to]
        self.start_transitions = self.create_parameter([num_tags], default_initializer=init)
        self.end_transitions = self.create_parameter([num_tags], default_initializer=init)

    def _reduce(self, x, axis):
        if self.use_max:
            return paddle.max(x, axis=axis)
        return paddle.logsumexp(x, axis=axis)

    def _gold_score(self, emissions, lengths, tags):
        _b, t, n = emissions.shape
        mask = (paddle.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).astype(emissions.dtype)  # [b, t]
        onehot = F.one_hot(tags, n)  # [b, t, n]
        score = ((emissions * onehot).sum(-1) * mask).sum(1)
        # transitions between consecutive real tokens: onehot_{t-1}^T trans onehot_t
        trans = paddle.matmul(onehot[:, :-1], self.transitions)  # [b, t-1, n] rows trans[y_{t-1}, :]
        score = score + ((trans * onehot[:, 1:]).sum(-1) * mask[:, 1:]).sum(1)
        if self.with_start_stop_tag:
            last = F.one_hot(lengths - 1, t).astype(emissions.dtype)  # [b, t]
            last_tag = (onehot * last.unsqueeze(-1)).sum(1)  # [b, n]
            score = score + (onehot[:, 0] * self.start_transitions).sum(-1)
            score = score + (last_tag * self.end_transitions).sum(-1)
        return score

    def _log_partition(self, emissions, lengths):
        _b, t, _n = emissions.shape
        alpha = emissions[:, 0]
        if self.with_start_stop_tag:
            alpha = alpha + self.start_transitions
        for i in range(1, t):
            # [b, from, 1] + [from, to] -> reduce over from
            nxt = self._reduce(alpha.unsqueeze(2) + self.transitions, axis=1) + emissions[:, i]
            keep = (lengths > i).unsqueeze(1)
            alpha = paddle.where(keep, nxt, alpha)
        if self.with_start_stop_tag:
            alpha = alpha + self.end_transitions
        return paddle.logsumexp(alpha, axis=1)

    def forward(self, emissions, lengths, tags):
        return self._log_partition(emissions, lengths) - self._gold_score(emissions, lengths, tags)


class BiGRUCrf(nn.Layer):
    def __init__(self, with_start_stop_tag=True, use_max=False):
        super().__init__()
        self.word_emb = nn.Embedding(VOCAB, EMB, padding_idx=PAD)
        self.bigru = nn.GRU(EMB, HIDDEN, direction="bidirect")
        self.crf = LinearChainCrf(TAGS, with_start_stop_tag, use_max)
        self.fc = nn.Linear(2 * HIDDEN, TAGS)

    def forward(self, token_ids, lengths, tags):
        x = self.word_emb(token_ids)
        x, _ = self.bigru(x, sequence_length=lengths)
        emissions = self.fc(x)
        return self.crf(emissions, lengths, tags), emissions


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_bigru_crf paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = BiGRUCrf(with_start_stop_tag=bug != "paddle_no_start_end", use_max=bug == "paddle_viterbi_max")
    m.train()  # see the docstring: nothing depends on the mode
    return m


def _arrays():
    rng = np.random.default_rng(29)
    tokens = rng.integers(1, VOCAB, size=(BATCH, SEQ)).astype("int64")
    tags = rng.integers(0, TAGS, size=(BATCH, SEQ)).astype("int64")
    for b, n in enumerate(LENGTHS):
        tokens[b, n:] = PAD
        tags[b, n:] = 0
    return tokens, np.array(LENGTHS, dtype="int64"), tags


def inputs():
    tokens, lengths, tags = _arrays()
    return (paddle.to_tensor(tokens), paddle.to_tensor(lengths), paddle.to_tensor(tags)), {}


def loss(output):
    nll, _emissions = output
    return nll.mean()

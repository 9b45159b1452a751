"""Hand-written port, torch side: the same tiny BiGRU-CRF tagger (written by "person B",
after the PyTorch "Advanced: BiLSTM-CRF" tutorial, independently of port_bigru_crf_paddle.py).

    embedding   nn.Embedding(40, 16, padding_idx=0)
    gru         nn.GRU(16, 16, bidirectional=True, batch_first=True) on a PackedSequence
                (pack_padded_sequence(enforce_sorted=False) / pad_packed_sequence(total_length=10))
    hidden2tag  nn.Linear(32, 5): the emissions [B, T, 5]
    crf         CRF: the tutorial's convention, `transitions[i, j]` = score of moving TO tag i
                FROM tag j, i.e. stored [to, from]; `start_transitions` [5], `end_transitions` [5]
                registered BEFORE `transitions` (all nn.Parameter, randn * 0.1)
                  _score:      start[y_0] + emit[0, y_0] + sum over real steps of
                               transitions[y_t, y_{t-1}] + emit[t, y_t] (advanced indexing, the
                               mask multiplies each step), + end[y_{L-1}] (gathered with lengths - 1)
                  _normalizer: alpha = start + emit_0; per step
                               next[b, to] = logsumexp_from(alpha[b, 1, from] + transitions[to, from])
                               + emit_t, alpha = torch.where(mask_t, next, alpha);
                               log Z = logsumexp(alpha + end)
                returns log Z - score per sequence.

Inputs: token ids [2, 10], lengths [10, 7], gold tags [2, 10]. Output: (nll [2], emissions).
Train mode to match the paddle twin (no dropout anywhere).

PADIFF_BUG (this side's bugs; the paddle side's names are accepted and ignored, any other name
raises ValueError):
  torch_transitions_from_to -> the forward algorithm (only there) broadcasts the [to, from]
                               matrix as if it were [from, to]: alpha.unsqueeze(2) + transitions
                               reduced over dim 1, i.e. it uses the TRANSPOSED transitions in log Z
                               while the gold score uses them correctly
  torch_gru_unpacked        -> the GRU is run on the padded batch (no pack_padded_sequence): the
                               lengths are ignored, the reverse direction of the short row starts
                               at its last pad and runs over 3 pad embeddings first
"""
import os

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

VOCAB, EMB, HIDDEN, TAGS = 40, 16, 16, 5
BATCH, SEQ, PAD = 2, 10, 0
LENGTHS = (10, 7)
OWN_BUGS = ("torch_transitions_from_to", "torch_gru_unpacked")
OTHER_BUGS = ("paddle_no_start_end", "paddle_viterbi_max")


class CRF(nn.Module):
    def __init__(self, num_tags, from_to_bug=False):
        super().__init__()
        self.num_tags = num_tags
        self.from_to_bug = from_to_bug
        self.start_transitions = nn.Parameter(torch.randn(num_tags) * 0.1)
        self.end_transitions = nn.Parameter(torch.randn(num_tags) * 0.1)
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags) * 0.1)  # [to, from]

    def _score(self, emissions, tags, mask, lengths):
        B, T, _ = emissions.shape
        batch = torch.arange(B)
        score = self.start_transitions[tags[:, 0]] + emissions[batch, 0, tags[:, 0]]
        for t in range(1, T):
            step = self.transitions[tags[:, t], tags[:, t - 1]] + emissions[batch, t, tags[:, t]]
            score = score + step * mask[:, t]
        last_tags = tags[batch, lengths - 1]
        return score + self.end_transitions[last_tags]

    def _normalizer(self, emissions, mask):
        T = emissions.shape[1]
        alpha = self.start_transitions + emissions[:, 0]  # [B, tags]
        for t in range(1, T):
            if self.from_to_bug:
                nxt = torch.logsumexp(alpha.unsqueeze(2) + self.transitions, dim=1)
            else:
                nxt = torch.logsumexp(alpha.unsqueeze(1) + self.transitions, dim=2)  # [B, to, from]
            nxt = nxt + emissions[:, t]
            alpha = torch.where(mask[:, t].unsqueeze(1).bool(), nxt, alpha)
        return torch.logsumexp(alpha + self.end_transitions, dim=1)

    def forward(self, emissions, tags, lengths):
        T = emissions.shape[1]
        mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).to(emissions.dtype)
        return self._normalizer(emissions, mask) - self._score(emissions, tags, mask, lengths)


class BiGRU_CRF(nn.Module):
    def __init__(self, from_to_bug=False, unpacked=False):
        super().__init__()
        self.unpacked = unpacked
        self.embedding = nn.Embedding(VOCAB, EMB, padding_idx=PAD)
        self.gru = nn.GRU(EMB, HIDDEN, bidirectional=True, batch_first=True)
        self.hidden2tag = nn.Linear(2 * HIDDEN, TAGS)
        self.crf = CRF(TAGS, from_to_bug)

    def _features(self, tokens, lengths):
        embeds = self.embedding(tokens)
        if self.unpacked:
            out, _ = self.gru(embeds)
        else:
            packed = pack_padded_sequence(embeds, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, _ = self.gru(packed)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        return self.hidden2tag(out)

    def forward(self, tokens, lengths, tags):
        feats = self._features(tokens, lengths)
        return self.crf(feats, tags, lengths), feats


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_bigru_crf torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = BiGRU_CRF(from_to_bug=bug == "torch_transitions_from_to", unpacked=bug == "torch_gru_unpacked")
    return m.train()  # matches the paddle twin; no dropout


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
    return (torch.from_numpy(tokens), torch.from_numpy(lengths), torch.from_numpy(tags)), {}


def loss(output):
    nll, _emissions = output
    return nll.mean()

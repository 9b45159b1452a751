"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_sgns_adamax_train_paddle.py) the way common PyTorch word2vec repos write SGNS.

    SGNS: registers ivectors (nn.Embedding 40 x 16), ovectors (nn.Embedding 40 x 16),
        drop (nn.Dropout 0.1, on the centre vectors)
    forward(iword [B], owords [B], nwords [B, K]) -> (pos_score [B], neg_score [B, K])
        the context and the K negatives are looked up in ONE ovectors call on
        cat([owords[:, None], nwords], 1) [B, 1 + K]; the scores are one batched matrix product
        bmm(ovecs [B, 1 + K, D], ivec[:, :, None]) -> [B, 1 + K], split into column 0 and columns 1:

Data: the same batches as the paddle side (default_rng(3200 + step), same recipe, the unigram ** 0.75
noise distribution).
Loss: binary_cross_entropy_with_logits on the [B, 1 + K] logits against targets [1, 0, ..., 0],
reduction "sum", divided by the batch size (= sum over the pair and its K negatives, mean over
pairs: the same number as -(log_sigmoid(pos) + sum_k log_sigmoid(-neg_k)).mean()).
Optimizer: torch.optim.Adamax(lr 1e-3, betas (0.9, 0.999), eps 1e-12) - lr passed explicitly:
torch's Adamax default lr is 2e-3, paddle's 1e-3.

PADIFF_BUG (this side only):
  torch_lr_default -> Adamax(model.parameters(), eps=1e-12): the learning rate left at torch's
              default 2e-3 (person B assumed the frameworks share the default; paddle's is 1e-3)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_lr_default"} | {"paddle_neg_mean", "paddle_drop_unset"}  # the paddle side's, ignored here
VOCAB, DIM, BATCH, NEG = 40, 16, 16, 5
DROPOUT, LR, EPS = 0.1, 1e-3, 1e-12


def unigram_table():
    freq = 1000.0 / np.arange(1, VOCAB + 1)
    wf = np.power(freq, 0.75)
    return wf / wf.sum()


def sample(step):
    rng = np.random.default_rng(3200 + step)
    iword = rng.integers(0, VOCAB, BATCH)
    shift = rng.choice(np.array([-2, -1, 1, 2]), BATCH)
    owords = (iword + shift) % VOCAB
    nwords = rng.choice(VOCAB, size=(BATCH, NEG), p=unigram_table())
    return (torch.from_numpy(iword.astype(np.int64)), torch.from_numpy(owords.astype(np.int64)),
            torch.from_numpy(nwords.astype(np.int64)))


class SGNS(nn.Module):
    def __init__(self, vocab_size=VOCAB, embedding_size=DIM, dropout=DROPOUT):
        super().__init__()
        self.ivectors = nn.Embedding(vocab_size, embedding_size)
        self.ovectors = nn.Embedding(vocab_size, embedding_size)
        self.drop = nn.Dropout(dropout)

    def forward(self, iword, owords, nwords):
        ivec = self.drop(self.ivectors(iword))  # [B, D]
        ovecs = self.ovectors(torch.cat([owords.unsqueeze(1), nwords], dim=1))  # [B, 1 + K, D]
        logits = torch.bmm(ovecs, ivec.unsqueeze(2)).squeeze(2)  # [B, 1 + K]
        return logits[:, 0], logits[:, 1:]


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SGNS()
    m.train()
    return m


def inputs(step=0):
    return sample(step), {}


def loss(output):
    pos, neg = output
    logits = torch.cat([pos.unsqueeze(1), neg], dim=1)
    targets = torch.zeros_like(logits)
    targets[:, 0] = 1.0
    return F.binary_cross_entropy_with_logits(logits, targets, reduction="sum") / logits.shape[0]


def optimizer(model):
    if bug(BUGS) == "torch_lr_default":
        return torch.optim.Adamax(model.parameters(), eps=EPS)
    return torch.optim.Adamax(model.parameters(), lr=LR, betas=(0.9, 0.999), eps=EPS)

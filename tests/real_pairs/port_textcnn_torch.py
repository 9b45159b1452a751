"""Hand-written port, torch side: Kim-style multichannel TextCNN sentence classifier (written by "person B").

The same math as port_textcnn_paddle.py, re-implemented by hand: input `input_ids` [2, 12]
(positional int64, padding id 0 at the end of both sentences), a frozen static and a trainable
dynamic embedding table (50 x 16), kernel sizes 2 / 3 / 4 with 8 filters each over both tables,
ReLU and max over time, concatenation [2, 24] in kernel order 2, 3, 4, dropout 0.5 (eval:
identity), Linear(24 -> 5). Output: logits [2, 5].

Torch idioms on this side:
- `KimCNN` registers `static_embed` (nn.Embedding, weight requires_grad=False; the forward
  casts its lookup with .float(), as the table may be stored in another dtype), `dynamic_embed`
  (nn.Embedding(50, 16, padding_idx=0): in torch that only zeroes row 0 at init and its
  gradient; the lookup returns whatever row 0 holds), `encoder` (`MultiKernelConv`), `dropout`
  and `classifier` (Linear(24, 5)).
- the lookups are concatenated along the FEATURE axis, static first: [N, T, 2E], then
  transposed to [N, 2E, T] for Conv1d (input channels 0:16 = static, 16:32 = dynamic).
- `MultiKernelConv` registers the convolutions as separately named attributes `conv_k2`,
  `conv_k3`, `conv_k4` (nn.Conv1d(32, 8, k)), then ONE shared `pool` (nn.AdaptiveMaxPool1d(1))
  and ONE shared `act` (nn.ReLU), and computes act(pool(conv(x))): max BEFORE the ReLU (the same
  function, relu and max commute).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_static_fp16 -> the frozen static table is stored in float16 (STATIC_DTYPE) to save
                       memory; its lookup is cast back to float32, so every static vector is
                       rounded to half precision (precision-level)
  torch_pool_avg    -> the shared pool is nn.AdaptiveAvgPool1d(1) instead of
                       nn.AdaptiveMaxPool1d(1)
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB_SIZE, EMBED_DIM, MAX_LEN, NUM_CLASSES = 50, 16, 12, 5
FILTER_SIZES, NUM_FILTERS = (2, 3, 4), 8
PAD_ID = 0
BATCH = 2
OWN_BUGS = {"torch_static_fp16", "torch_pool_avg"}
OTHER_BUGS = {"paddle_padding_idx", "paddle_dropout_downscale"}


class MultiKernelConv(nn.Module):
    def __init__(self, in_channels, avg_pool=False):
        super().__init__()
        self.conv_k2 = nn.Conv1d(in_channels, NUM_FILTERS, kernel_size=2)
        self.conv_k3 = nn.Conv1d(in_channels, NUM_FILTERS, kernel_size=3)
        self.conv_k4 = nn.Conv1d(in_channels, NUM_FILTERS, kernel_size=4)
        self.pool = nn.AdaptiveAvgPool1d(1) if avg_pool else nn.AdaptiveMaxPool1d(1)
        self.act = nn.ReLU()

    def forward(self, x):  # [N, 2E, T]
        feats = []
        for conv in (self.conv_k2, self.conv_k3, self.conv_k4):
            feats.append(self.act(self.pool(conv(x)).squeeze(-1)))  # [N, F]
        return torch.cat(feats, dim=1)


class KimCNN(nn.Module):
    def __init__(self, static_dtype=torch.float32, avg_pool=False):
        super().__init__()
        self.static_embed = nn.Embedding(VOCAB_SIZE, EMBED_DIM, dtype=static_dtype)
        self.static_embed.weight.requires_grad_(False)
        self.dynamic_embed = nn.Embedding(VOCAB_SIZE, EMBED_DIM, padding_idx=PAD_ID)
        self.encoder = MultiKernelConv(2 * EMBED_DIM, avg_pool)
        self.dropout = nn.Dropout(0.5)
        self.classifier = nn.Linear(NUM_FILTERS * len(FILTER_SIZES), NUM_CLASSES)

    def forward(self, input_ids):
        emb = torch.cat([self.static_embed(input_ids).float(), self.dynamic_embed(input_ids)], dim=-1)
        h = self.encoder(emb.transpose(1, 2))  # [N, 24]
        return self.classifier(self.dropout(h))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_textcnn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = KimCNN(static_dtype=torch.float16 if bug == "torch_static_fp16" else torch.float32,
               avg_pool=bug == "torch_pool_avg")
    return m.eval()


def _ids():
    rng = np.random.default_rng(7)
    ids = rng.integers(1, VOCAB_SIZE, (BATCH, MAX_LEN)).astype("int64")
    ids[0, -1:] = PAD_ID
    ids[1, -3:] = PAD_ID
    return ids


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()

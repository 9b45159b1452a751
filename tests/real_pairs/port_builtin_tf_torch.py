"""Hand-written port, torch side: the same tiny text classifier on torch's BUILT-IN transformer
layers (written by "person B", independently of port_builtin_tf_paddle.py).

    tok_emb (50 x 32, padding_idx 0), pos_emb (16 x 32); position ids made inline with arange
    encoder = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu",
                                         batch_first=True, norm_first=True), 2,
        norm=torch.nn.LayerNorm(32), enable_nested_tensor=False)
        inside: torch.nn.MultiheadAttention with ONE packed in_proj_weight [96, 32] (rows
        q | k | v, torch's [out, in] layout) and in_proj_bias [96]; its out_proj is never called
        as a module (F.multi_head_attention_forward uses its weight directly); the layers are
        deep copies of the prototype
    masked mean pooling (inline), pool_dense (Linear 32->32) + torch.tanh inline, head (Linear 32->5)

MASK CONVENTION (torch): `src_key_padding_mask` [B, T] bool, True = IGNORE this key (a float
mask is added to the scores). This side passes `input_ids == 0`. paddle's bool mask has the
opposite polarity (True = attend).

Fast path: in eval mode under torch.no_grad() with no forward hooks attached,
TransformerEncoderLayer.forward calls the fused torch._transformer_encoder_layer_fwd and none of
its submodules (self_attn, linear1, linear2, norm1, norm2) runs as a module. Any forward hook on a
module inside the layer (or with grad enabled) turns the fast path off. Same math either way.

PADIFF_BUG (this side's bugs):
  ffn_relu      -> the porter leaves out activation="gelu": torch's default FFN activation is relu
  torch_ln_eps  -> the porter copies a BERT config: eps 1e-12 in every LayerNorm of the encoder
                   (norm1 / norm2 of each layer and the final encoder.norm; paddle's and torch's
                   default is 1e-5) - a precision-level difference
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, MAX_POS, D_MODEL, HEADS, FFN, LAYERS, CLASSES = 50, 16, 32, 4, 64, 2, 5
BATCH, SEQ, PAD = 2, 10, 0
LENGTHS = (8, 5)
LABELS = (3, 1)

OWN_BUGS = ("ffn_relu", "torch_ln_eps")
OTHER_BUGS = ("paddle_mask_inverted",)


class TransformerClassifier(nn.Module):
    def __init__(self, activation="gelu", layer_norm_eps=1e-5):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL, padding_idx=PAD)
        self.pos_emb = nn.Embedding(MAX_POS, D_MODEL)
        layer = nn.TransformerEncoderLayer(
            D_MODEL,
            HEADS,
            dim_feedforward=FFN,
            dropout=0.0,
            activation=activation,
            layer_norm_eps=layer_norm_eps,
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(
            layer, LAYERS, norm=nn.LayerNorm(D_MODEL, eps=layer_norm_eps), enable_nested_tensor=False
        )
        self.pool_dense = nn.Linear(D_MODEL, D_MODEL)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.tok_emb(input_ids) + self.pos_emb(pos)[None]
        pad = input_ids == PAD  # True = ignore
        x = self.encoder(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1)
        return self.head(torch.tanh(self.pool_dense(pooled)))


def model():
    torch.manual_seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_builtin_tf: unknown PADIFF_BUG {bug!r}")
    m = TransformerClassifier(
        activation="relu" if bug == "ffn_relu" else "gelu",
        layer_norm_eps=1e-12 if bug == "torch_ln_eps" else 1e-5,
    )
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(19)
    ids = rng.integers(1, VOCAB, size=(BATCH, SEQ)).astype("int64")
    for b, n in enumerate(LENGTHS):
        ids[b, n:] = PAD
    return ids


def inputs():
    return (torch.from_numpy(_arrays()),), {}


def loss(output):
    # cross entropy of the [B, 5] logits against fixed labels
    return F.cross_entropy(output, torch.tensor(LABELS, dtype=torch.int64))

"""The decoder of cistable_paddle.py written the way another library writes it: cisrope_torch.py's
model as it is (``wq``/``wk``/``wv`` rotated in interleaved pairs by a complex ``freqs_cis`` the
model computes once and hands to every attention; the head tied to the embedding).

PADIFF_BUG: paddle_scale_by_dim is the other side's (accepted, ignored)."""
import torch
from _common import bug
from cisrope_torch import Transformer, inputs, loss

__all__ = ["inputs", "loss", "model"]


def model():
    if bug() not in ("", "paddle_scale_by_dim"):
        raise ValueError(f"cistable torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Transformer().eval()

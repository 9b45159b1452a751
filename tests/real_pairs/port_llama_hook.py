"""port_llama transform: rotary embeddings use different pair layouts on the two sides.

paddle (HF / paddlenlp layout) rotates HALF-SPLIT pairs: within each head of `head_dim` dims,
dim i pairs with dim i + head_dim/2 (rotate_half). torch (Meta layout) rotates INTERLEAVED
pairs: dims 2i, 2i+1 form one complex number (view_as_complex). The same model therefore has
its query / key projection outputs permuted within each head: torch output row
h*head_dim + 2i + c  =  paddle output column h*head_dim + c*head_dim/2 + i  (c = 0, 1).
This is the inverse of the `permute` in HF's convert_llama_weights_to_hf.py; the q.k dot
product is unchanged by it, so v / o need nothing.

Transform: "rope permute: paddle transposed, half-split -> interleaved, N heads of D"
  torch_weight = paddle_weight.T.reshape(N, 2, D // 2, in).transpose(0, 2, 1, 3).reshape(N * D, in)
"""
import re

import numpy as np

_ROPE = re.compile(r"^rope permute: paddle transposed, half-split -> interleaved, (\d+) heads of (\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _ROPE.match(transform)
    if m is None:
        return None
    heads, dim = int(m.group(1)), int(m.group(2))
    w = paddle_array.T  # [out, in]
    n_in = w.shape[1]
    out = w.reshape(heads, 2, dim // 2, n_in).transpose(0, 2, 1, 3).reshape(heads * dim, n_in)
    return np.ascontiguousarray(out)

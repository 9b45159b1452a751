"""Hand-written port, paddle side: a tiny Linformer encoder classifier (written by "person A").

Linformer (Wang et al. 2020, "Self-Attention with Linear Complexity"): keys and values are
projected along the SEQUENCE axis from n = 16 positions down to k = 8 rows by learned matrices
E (keys) and F (values), shared across heads within a layer (one E and one F per layer, applied
after the key / value Linears), so each head's attention matrix is n x k instead of n x n.

Sizes: vocab 50, n = 16 (fixed: E and F are n -> k), k = 8, d_model 32, 2 heads of 16,
FFN 32 -> 64 -> 32 (erf GELU), 2 post-LN layers (BERT / RoBERTa style), LayerNorm eps 1e-5,
CLS pooler (first token, Linear + tanh), 3 classes, batch 2. Output: logits [2, 3].

Paddle idioms on this side:
- root `LinformerClassifier`: `embeddings` (`LinformerEmbeddings`: `word_embeddings`,
  `position_embeddings` nn.Embedding(16, 32) looked up with paddle.arange, `layer_norm`),
  `layers` (LayerList of `LinformerLayer`), `pooler` (Linear; tanh inline), `classifier`.
- `LinformerLayer` registers `attn`, `linear1`, `linear2`, then `norm1`, `norm2`; forward:
  h = norm1(x + attn(x)); out = norm2(h + linear2(F.gelu(linear1(h)))).
- `LinformerSelfAttention`: SEPARATE `q_proj`, `k_proj`, `v_proj` Linears (32 -> 32), the
  sequence projections as MODULES `e_proj` and `f_proj` = nn.Linear(16, 8, bias_attr=False)
  (weight [n, k]) applied to the keys / values transposed to [B, d, n] and transposed back;
  explicit matmul with scale 16 ** -0.5 (head dim), F.softmax, `out_proj`.

The torch side (port_linformer_torch.py) was written independently: a packed qkv Linear, E and F
as raw nn.Parameters [k, n] used with torch.matmul, F.scaled_dot_product_attention,
nn.Sequential MLP and pooler, and a raw position-embedding parameter.

Planted bugs (PADIFF_BUG) on this side; the torch side's bug names are accepted and ignored,
any other name raises ValueError:
  paddle_ef_swapped          -> the keys are projected with f_proj and the values with e_proj
  paddle_ffn_residual_missing -> norm2(linear2(gelu(linear1(h)))): the FFN's residual "h +" is
                                 dropped in LinformerLayer.forward
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, SEQ, PROJ_K, D_MODEL, HEADS, D_FF, LAYERS, CLASSES = 50, 16, 8, 32, 2, 64, 2, 3
HEAD_DIM = D_MODEL // HEADS
BATCH = 2
OWN_BUGS = {"paddle_ef_swapped", "paddle_ffn_residual_missing"}
OTHER_BUGS = {"torch_scale_by_k"}


class LinformerEmbeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, D_MODEL, weight_attr=nn.initializer.Normal(0.0, 0.5))
        self.position_embeddings = nn.Embedding(SEQ, D_MODEL, weight_attr=nn.initializer.Normal(0.0, 0.5))
        self.layer_norm = nn.LayerNorm(D_MODEL)

    def forward(self, input_ids):
        pos = paddle.arange(input_ids.shape[1], dtype="int64").unsqueeze(0)
        return self.layer_norm(self.word_embeddings(input_ids) + self.position_embeddings(pos))


class LinformerSelfAttention(nn.Layer):
    def __init__(self, ef_swapped=False):
        super().__init__()
        self.ef_swapped = ef_swapped
        self.q_proj = nn.Linear(D_MODEL, D_MODEL)
        self.k_proj = nn.Linear(D_MODEL, D_MODEL)
        self.v_proj = nn.Linear(D_MODEL, D_MODEL)
        self.e_proj = nn.Linear(SEQ, PROJ_K, bias_attr=False)
        self.f_proj = nn.Linear(SEQ, PROJ_K, bias_attr=False)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL)
        self.scale = HEAD_DIM**-0.5

    def _seq_project(self, proj, t):
        # [B, n, d] -> [B, d, n] -> Linear(n, k) -> [B, d, k] -> [B, k, d]
        return proj(t.transpose([0, 2, 1])).transpose([0, 2, 1])

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q_proj(x).reshape([b, n, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        key_proj, value_proj = (self.f_proj, self.e_proj) if self.ef_swapped else (self.e_proj, self.f_proj)
        k = self._seq_project(key_proj, self.k_proj(x))
        v = self._seq_project(value_proj, self.v_proj(x))
        k = k.reshape([b, PROJ_K, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = v.reshape([b, PROJ_K, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        scores = paddle.matmul(q, k, transpose_y=True) * self.scale  # [B, H, n, k]
        probs = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, n, D_MODEL])
        return self.out_proj(ctx)


class LinformerLayer(nn.Layer):
    def __init__(self, ef_swapped=False, no_ffn_residual=False):
        super().__init__()
        self.no_ffn_residual = no_ffn_residual
        self.attn = LinformerSelfAttention(ef_swapped)
        self.linear1 = nn.Linear(D_MODEL, D_FF)
        self.linear2 = nn.Linear(D_FF, D_MODEL)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        h = self.norm1(x + self.attn(x))
        ff = self.linear2(F.gelu(self.linear1(h)))
        if self.no_ffn_residual:
            return self.norm2(ff)
        return self.norm2(h + ff)


class LinformerClassifier(nn.Layer):
    def __init__(self, ef_swapped=False, no_ffn_residual=False):
        super().__init__()
        self.embeddings = LinformerEmbeddings()
        self.layers = nn.LayerList([LinformerLayer(ef_swapped, no_ffn_residual) for _ in range(LAYERS)])
        self.pooler = nn.Linear(D_MODEL, D_MODEL)
        self.classifier = nn.Linear(D_MODEL, CLASSES)

    def forward(self, input_ids):
        x = self.embeddings(input_ids)
        for layer in self.layers:
            x = layer(x)
        pooled = paddle.tanh(self.pooler(x[:, 0]))
        return self.classifier(pooled)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_linformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = LinformerClassifier(
        ef_swapped=bug == "paddle_ef_swapped", no_ffn_residual=bug == "paddle_ffn_residual_missing"
    )
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(33)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 3]
    return (output**2).mean()

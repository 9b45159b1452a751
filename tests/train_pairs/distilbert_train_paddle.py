"""DistilBERT sequence classification in TRAINING mode, paddlenlp side: tiny random config (no
download), dropout 0.1 (hidden and attention), model.train(), cross-entropy over 3 labels,
the WHOLE embeddings block FROZEN (word and position embeddings and their LayerNorm:
`stop_gradient = True`), the attention key biases frozen too, and RMSProp (rho 0.9, momentum
0.5, epsilon 1e-24 inside the root) over the trainable tensors. Same batch every step
(sample 1 padded after 5 tokens). Twin: distilbert_train_torch.py. Ground truth:
distilbert_train_truth.json (run with --steps 4).

Conventions of this port (by design, not bugs):
- paddle RMSProp: r = rho r + (1 - rho) g^2; v = momentum v + lr g / sqrt(r + epsilon);
  w -= v (epsilon INSIDE the square root). torch RMSprop: g / (sqrt(r) + eps) (eps OUTSIDE),
  the buffer v = momentum v + g / (...), w -= lr v: the same at a constant lr. The port uses
  torch eps 1e-12 and paddle epsilon 1e-24 (= eps^2), where the two placements agree to far
  below fp32 rounding for every gradient above ~1e-9. Defaults differ: paddle rho 0.95,
  epsilon 1e-6; torch alpha 0.99, eps 1e-8 - all passed explicitly.
- paddlenlp builds DistilBERT on paddle.nn.TransformerEncoderLayer, which has a dropout after
  the attention output projection (`dropout1`) that HF's DistilBERT block does not have: the
  clean twin sets every layer's dropout1.p = 0 (HF: attention probabilities and FFN output).
- attention mask: paddlenlp casts a 2-D 0/1 mask to FLOAT and adds it as is (no masking at
  all); the spec passes the additive form [B, 1, 1, S] ((mask - 1) * 1e4), HF the 0/1 mask.
- the attention key biases get an exactly-zero gradient (softmax is shift invariant): RMSProp's
  first update would turn their rounding noise into +-lr/sqrt(1 - rho) steps of independent
  sign on each side, so they are frozen on both sides (as the bart/opt train pairs do).

PADIFF_BUG (this side only):
  paddle_rho_default -> RMSProp(rho=0.95): paddle's default decay rate left in place where the
              torch reference uses alpha 0.9 (first update lr g / sqrt(0.05 g^2) instead of
              lr g / sqrt(0.1 g^2))
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, SEQ, bug, randomize_paddle
from paddlenlp.transformers import DistilBertConfig, DistilBertForSequenceClassification

BUGS = {"paddle_rho_default"} | {"pos_emb_trainable", "sum_loss"}  # the torch side's, ignored here
CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, hidden_act="gelu",
    hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, initializer_range=0.02,
    pad_token_id=0, num_labels=3,
)
LR, RHO, MOMENTUM, EPS_PADDLE = 1e-3, 0.9, 0.5, 1e-24
LABELS = np.array([2, 0], "int64")


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = DistilBertForSequenceClassification(DistilBertConfig(**CONFIG))
    randomize_paddle(m)
    for layer in m.distilbert.encoder.layers:
        layer.dropout1.p = 0.0  # no dropout after the attention output in HF's DistilBERT
        layer.self_attn.k_proj.bias.stop_gradient = True
    for p in m.distilbert.embeddings.parameters():  # frozen embeddings
        p.stop_gradient = True
    m.train()
    return m


def _arrays():
    rng = np.random.default_rng(11)
    ids = rng.integers(1, 1000, (BATCH, SEQ)).astype("int64")  # no pad id (0)
    mask = np.ones((BATCH, SEQ), "int64")
    ids[1, 5:] = 0  # second sample padded after 5 tokens
    mask[1, 5:] = 0
    return ids, mask


def inputs():
    ids, mask = _arrays()
    additive = ((mask - 1) * 1e4).astype("float32")[:, None, None, :]  # [B, 1, 1, S]
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(additive)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 3]
    return F.cross_entropy(logits, paddle.to_tensor(LABELS))


def optimizer(model):
    rho = 0.95 if bug(BUGS) == "paddle_rho_default" else RHO
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.RMSProp(learning_rate=LR, rho=rho, epsilon=EPS_PADDLE, momentum=MOMENTUM,
                                    centered=False, parameters=params)

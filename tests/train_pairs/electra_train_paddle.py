"""ELECTRA token classification in TRAINING mode, paddlenlp side: tiny random config (no
download; embedding_size 16 != hidden 32, so both sides have an embeddings_project Linear),
dropout 0.1 (hidden and attention), model.train(), token-level cross-entropy over 5 tags
with the padded positions labelled -100 (ignored), plain Adam (lr 1e-3, betas (0.9, 0.999),
eps 1e-8, no weight decay) with gradient clipping by GLOBAL norm 0.5 (paddle:
grad_clip=paddle.nn.ClipGradByGlobalNorm(0.5) in the optimizer).
Twin: electra_train_torch.py. Ground truth: electra_train_truth.json (run with --steps 3).

paddle quirk (by design, worked around): paddle.nn.functional.cross_entropy(reduction="mean")
only divides by the number of NON-ignored labels when ignore_index >= 0; with the usual
ignore_index=-100 it divides by all labels (paddle 3.3.1, loss.py: `if ignore_index >= 0:
... count`, else `mean_all`). The clean loss therefore sums the per-token losses and divides by
the number of labelled tokens itself, which is what torch's mean does.

The attention mask is passed as int64 0/1 [batch, seq]: paddlenlp's ElectraModel only
unsqueezes it to [batch, 1, 1, seq] and paddle's MultiHeadAttention turns an integer mask into
an additive one ((mask - 1) * 1e9). (A FLOAT 0/1 mask would be added as is: no masking.)

PADIFF_BUG (this side only):
  paddle_clip_by_value -> grad_clip=paddle.nn.ClipGradByValue(0.5): every gradient ELEMENT is
              clipped to [-0.5, 0.5] instead of all gradients scaled together to global norm 0.5
              (a per-tensor paddle.nn.ClipGradByNorm would be the other wrong choice, but it has
              no float64 CPU kernel in paddle 3.3.1, so it could not be checked in float64)
  paddle_ce_mean_all -> the loss is paddle's default F.cross_entropy(logits, labels) (ignore_index
              -100, reduction "mean"), which in paddle 3.3.1 divides by ALL 16 positions when
              ignore_index < 0 (ignored positions count as loss 0), not by the 13 labelled ones
              as torch does: loss and gradients x 13/16
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, bug, randomize_paddle
from paddlenlp.transformers import ElectraConfig, ElectraForTokenClassification

BUGS = {"paddle_clip_by_value", "paddle_ce_mean_all"} | {"keep_prob"}  # the torch side's, ignored here
CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.02, pad_token_id=0, layer_norm_eps=1e-12, num_labels=5,
)
NUM_TAGS, CLIP = 5, 0.5


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = ElectraForTokenClassification(ElectraConfig(**CONFIG))
    randomize_paddle(m)
    m.train()
    return m


def _arrays():
    rng = np.random.default_rng(7)
    ids = rng.integers(1, 1000, (BATCH, SEQ)).astype("int64")  # no pad id (0) ...
    types = np.zeros((BATCH, SEQ), "int64")
    mask = np.ones((BATCH, SEQ), "int64")
    tags = rng.integers(0, NUM_TAGS, (BATCH, SEQ)).astype("int64")
    ids[1, 5:] = 0  # ... except the padding: the second sample has 5 tokens
    mask[1, 5:] = 0
    labels = np.where(mask == 1, tags, -100)  # padded positions ignored by the loss
    return ids, types, mask, labels, tags


def inputs():
    ids, types, mask, _, _ = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "token_type_ids": paddle.to_tensor(types),
                "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 8, 5]
    labels = _arrays()[3].reshape(-1)
    if bug(BUGS) == "paddle_ce_mean_all":  # paddle's mean: sum / all 16 positions
        return F.cross_entropy(logits.reshape([-1, NUM_TAGS]), paddle.to_tensor(labels), ignore_index=-100)
    per_token = F.cross_entropy(logits.reshape([-1, NUM_TAGS]), paddle.to_tensor(labels), ignore_index=-100,
                                reduction="none")  # 0 at the ignored positions
    return per_token.sum() / float((labels != -100).sum())  # mean over the 13 labelled positions


def optimizer(model):
    clip = paddle.nn.ClipGradByValue(CLIP) if bug(BUGS) == "paddle_clip_by_value" else paddle.nn.ClipGradByGlobalNorm(CLIP)
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Adam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                 grad_clip=clip)

"""RoBERTa sequence classification in TRAINING mode, paddlenlp side: tiny random config (no
download), dropout 0.1 (hidden and attention), model.train(), cross-entropy over 3 labels,
AdamW (betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices only) driven by a linear
warm-up / linear decay schedule (peak lr 1e-3, 2 warm-up steps, 5 steps in all:
paddlenlp.transformers.LinearDecayWithWarmup passed as the optimizer's learning_rate), a NEW
batch every step (inputs(step)), <s> ... </s> + padding (pad id 1) with a padding mask.
Twin: roberta_train_torch.py. Ground truth: roberta_train_truth.json (run with --steps 5).

paddlenlp quirk (by design, not a bug): paddlenlp's RobertaForSequenceClassification applies
an extra `self.dropout` to the WHOLE sequence output before its classification head (which
drops the <s> features again); HF's class (and fairseq's) has no such dropout. The clean twin
sets that module's p to 0 so both sides drop at the same places.
The pad row of the word embedding is zero (paddle's Embedding(padding_idx) outputs zeros for
the pad id whatever the row holds; HF initialises that row to zero).

PADIFF_BUG (this side only):
  paddle_warmup_float -> LinearDecayWithWarmup(lr, 5, warmup=2.0): a float warm-up is read by
              paddlenlp as a PROPORTION of the total steps (floor(2.0 * 5) = 10 warm-up
              steps) instead of 2 steps: lr factors 0, .1, .2, .3, .4 instead of 0, .5, 1,
              2/3, 1/3
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, WD, bug, randomize_paddle
from paddlenlp.transformers import LinearDecayWithWarmup, RobertaConfig, RobertaForSequenceClassification

BUGS = {"paddle_warmup_float"} | {"lambda_off_by_one", "no_train_mode"}  # the torch side's, ignored here
CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=1,
    hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    layer_norm_eps=1e-5, initializer_range=0.02, pad_token_id=1, bos_token_id=0, eos_token_id=2,
    num_labels=3,
)
TOTAL_STEPS, WARMUP = 5, 2
LENGTHS = [6, 5, 8, 4, 7]  # the second sample's length at each step (the first is never padded)
_LABELS = [np.zeros(BATCH, "int64")]  # the labels of the batch last handed out by inputs()


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = RobertaForSequenceClassification(RobertaConfig(**CONFIG))
    randomize_paddle(m)
    w = m.roberta.embeddings.word_embeddings.weight
    w.set_value(paddle.concat([w[:1], paddle.zeros_like(w[1:2]), w[2:]]))  # pad row 1 = 0
    m.dropout.p = 0.0  # paddlenlp's extra dropout on the whole sequence output (not in HF)
    m.train()
    return m


def _arrays(step):
    rng = np.random.default_rng(100 + step)
    ids = rng.integers(3, 1000, (BATCH, SEQ)).astype("int64")  # no <s>/pad/</s> (0, 1, 2)
    mask = np.ones((BATCH, SEQ), "int64")
    ids[:, 0] = 0  # <s>
    ids[0, -1] = 2  # </s>
    n = LENGTHS[step % len(LENGTHS)]
    ids[1, n - 1] = 2
    ids[1, n:] = 1  # pad
    mask[1, n:] = 0
    labels = rng.integers(0, 3, BATCH).astype("int64")
    return ids, mask, labels


def inputs(step=0):
    ids, mask, labels = _arrays(step)
    _LABELS[0] = labels
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 3]
    return F.cross_entropy(logits, paddle.to_tensor(_LABELS[0]))


def optimizer(model):
    warmup = float(WARMUP) if bug(BUGS) == "paddle_warmup_float" else WARMUP
    sched = LinearDecayWithWarmup(LR, TOTAL_STEPS, warmup)
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    opt = paddle.optimizer.AdamW(
        learning_rate=sched, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params, weight_decay=WD,
        apply_decay_param_fun=lambda name: name in decay)
    return opt, sched

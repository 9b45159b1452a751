"""RoBERTa sequence classification in TRAINING mode, HF transformers side: tiny random config
(no download), eager attention, dropout 0.1 (hidden and attention), model.train(),
cross-entropy over 3 labels, AdamW (betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on
matrices only, two parameter groups) driven by transformers.get_linear_schedule_with_warmup
(a LambdaLR: peak lr 1e-3, 2 warm-up steps, 5 steps in all), a NEW batch every step
(inputs(step)), <s> ... </s> + padding (pad id 1) with a padding mask.
Twin: roberta_train_paddle.py. Ground truth: roberta_train_truth.json (run with --steps 5).

PADIFF_BUG (this side only):
  lambda_off_by_one -> a hand-written LambdaLR whose lambda counts steps from 1 (the linear
              warm-up/decay formula evaluated at step + 1): lr factors .5, 1, 2/3, 1/3, 0
              instead of 0, .5, 1, 2/3, 1/3 (the schedule runs one step ahead)
  no_train_mode -> the model is left in eval mode (what from_pretrained returns; the
              porter's own loop never calls model.train()): no dropout anywhere on this side
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, WD, bug, torch_param_groups
from transformers import RobertaConfig, RobertaForSequenceClassification, get_linear_schedule_with_warmup

BUGS = {"lambda_off_by_one", "no_train_mode"} | {"paddle_warmup_float"}  # the paddle side's, ignored here
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
    b = bug(BUGS)
    torch.manual_seed(0)
    m = RobertaForSequenceClassification(RobertaConfig(**CONFIG, attn_implementation="eager"))
    if b == "no_train_mode":
        m.eval()  # as from_pretrained leaves it; model.train() never called
    else:
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
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # SequenceClassifierOutput
    return F.cross_entropy(logits, torch.from_numpy(_LABELS[0]))


def _linear_warmup_decay(step):
    """HF's linear schedule: step / warmup during warm-up, then linear decay to 0 at the end."""
    if step < WARMUP:
        return step / max(1, WARMUP)
    return max(0.0, (TOTAL_STEPS - step) / max(1, TOTAL_STEPS - WARMUP))


def optimizer(model):
    opt = torch.optim.AdamW(torch_param_groups(model), lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=WD)
    if bug(BUGS) == "lambda_off_by_one":  # steps counted from 1
        return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _linear_warmup_decay(s + 1))
    return opt, get_linear_schedule_with_warmup(opt, WARMUP, TOTAL_STEPS)

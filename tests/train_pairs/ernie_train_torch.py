"""ERNIE masked-LM in TRAINING mode, HF transformers side: ErnieForMaskedLM, tiny random config
(no download), eager attention, dropout 0.1 (hidden and attention), model.train(), masked-LM
cross-entropy (labels -100 except at the 3 of 16 masked positions), decoder weight tied to the
word embeddings (HF `tie_weights()`: `cls.predictions.decoder.weight` IS
`ernie.embeddings.word_embeddings.weight`, and `decoder.bias` is `cls.predictions.bias`), AdamW
(lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01) with the HF no-decay list: parameters
whose name contains "bias" or "LayerNorm.weight" go to a group with weight_decay 0.0 (the
run_mlm.py / Trainer way). Twin: ernie_train_paddle.py. Ground truth: ernie_train_truth.json.

PADIFF_BUG (this side only):
  lowercase_no_decay -> the no-decay list copied from the PaddleNLP recipe, ["bias", "norm"],
                        applied to HF names: "norm" never matches "LayerNorm" (case), so the
                        6 LayerNorm scales are decayed on the torch side
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, WD, bug, token_ids
from transformers import ErnieConfig, ErnieForMaskedLM

BUGS = {"lowercase_no_decay"} | {"paddle_keep_prob", "paddle_ce_mean"}  # the paddle side's, ignored here
VOCAB, MASK_ID = 1000, 3
CONFIG = dict(
    vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.02, pad_token_id=0, layer_norm_eps=1e-12,
    position_embedding_type="absolute", use_task_id=False,
)
MASKED = [(0, 2), (0, 5), (1, 3)]  # 3 of 16 positions


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = ErnieForMaskedLM(ErnieConfig(**CONFIG, attn_implementation="eager"))
    m.train()
    return m


def _arrays():
    ids = token_ids(VOCAB)  # ids >= 4: no pad (0) or [MASK] (3) id
    labels = np.full((BATCH, SEQ), -100, "int64")
    inp = ids.copy()
    for i, j in MASKED:
        labels[i, j] = ids[i, j]
        inp[i, j] = MASK_ID
    types = np.zeros((BATCH, SEQ), "int64")
    mask = np.ones((BATCH, SEQ), "int64")
    mask[1, 6:] = 0  # second sample padded after 6 tokens
    return inp, types, mask, labels


def inputs():
    ids, types, mask, _ = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types),
                "attention_mask": torch.from_numpy(mask)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # MaskedLMOutput
    labels = torch.from_numpy(_arrays()[3])
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)


def optimizer(model):
    # the paddle recipe's list ["bias", "norm"] on HF names: "norm" is not in "LayerNorm" (case)
    no_decay = ["bias", "norm"] if bug(BUGS) == "lowercase_no_decay" else ["bias", "LayerNorm.weight"]
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [{"params": [p for n, p in named if not any(nd in n for nd in no_decay)], "weight_decay": WD},
              {"params": [p for n, p in named if any(nd in n for nd in no_decay)], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=WD)

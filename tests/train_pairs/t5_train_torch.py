"""T5 seq2seq LM in TRAINING mode, HF transformers side: T5ForConditionalGeneration, tiny random
config (no download), dropout_rate 0.1, model.train(), teacher-forced cross-entropy on the
labels (decoder_input_ids given explicitly: labels shifted right, start token 0), AdamW (lr 1e-3,
betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices only, two parameter groups).
Twin: t5_train_paddle.py. Ground truth: t5_train_truth.json.

PADIFF_BUG (this side only):
  ff_dropout -> decoder block 1's feed-forward dropout has p 0.2 instead of 0.1
  adam_l2    -> torch.optim.Adam(weight_decay=...) instead of AdamW: the decay is added to the
                gradient (L2, then normalised by Adam) instead of decoupled from it
  lr_default -> AdamW learning rate 5e-5 (HF TrainingArguments' default, the value one gets
                when the recipe's learning rate is not carried over) instead of 1e-3
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, bug, token_ids, torch_adamw, torch_param_groups
from transformers import T5Config, T5ForConditionalGeneration

BUGS = {"ff_dropout", "adam_l2", "lr_default"} | {"enc_eval"}  # the paddle side's, ignored here
VOCAB = 1000
CONFIG = dict(
    vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32, relative_attention_max_distance=128,
    dropout_rate=0.1, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="relu", use_cache=False, pad_token_id=0, eos_token_id=1,
    decoder_start_token_id=0, tie_word_embeddings=True,
)


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = T5ForConditionalGeneration(T5Config(**CONFIG))
    if b == "ff_dropout":
        m.decoder.block[1].layer[2].dropout.p = 0.2
    m.train()
    return m


def _arrays():
    ids = token_ids(VOCAB, seed=0, low=2)  # no pad/eos (0, 1)
    mask = np.ones((BATCH, SEQ), "int64")
    mask[1, 6:] = 0  # second source padded after 6 tokens
    labels = token_ids(VOCAB, seed=1, low=2)
    dec = np.concatenate([np.zeros((BATCH, 1), "int64"), labels[:, :-1]], axis=1)  # shift right, start 0
    return ids, mask, dec, labels


def inputs():
    ids, mask, dec, _ = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask),
                "decoder_input_ids": torch.from_numpy(dec)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # Seq2SeqLMOutput
    labels = torch.from_numpy(_arrays()[3])
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


def optimizer(model):
    if bug(BUGS) == "adam_l2":
        return torch.optim.Adam(torch_param_groups(model), lr=LR, betas=(BETA1, BETA2), eps=EPS)
    if bug(BUGS) == "lr_default":
        return torch.optim.AdamW(torch_param_groups(model), lr=5e-5, betas=(BETA1, BETA2), eps=EPS)
    return torch_adamw(model)

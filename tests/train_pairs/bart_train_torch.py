"""BART seq2seq LM in TRAINING mode, HF transformers side: BartForConditionalGeneration, tiny
random config (no download), fp32, eager attention, dropout 0.1, attention dropout 0.1,
activation dropout 0.0, model.train(); tied embeddings (HF's default: lm_head.weight,
encoder/decoder embed_tokens are model.shared); teacher forcing: labels with -100 on the padded
target positions, decoder_input_ids = HF's `shift_tokens_right(labels, pad_token_id,
decoder_start_token_id)` (start token 2, -100 turned back into the pad id); source padded
(attention_mask), target of sample 1 padded after 6 tokens; cross-entropy (ignore_index -100);
the attention key biases frozen on both sides (zero gradient in exact arithmetic); AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices and embeddings only,
two parameter groups) with clip_grad_norm_(1.0) in clip_grad(). 3 steps.
Twin: bart_train_paddle.py. Ground truth: bart_train_truth.json.

PADIFF_BUG (this side only):
  pad_in_loss -> the labels keep the tokenizer's pad id 1 on the padded target positions instead
                 of -100: the two pad positions of sample 1 are trained to predict the pad token
                 (the decoder inputs are unchanged: shift_tokens_right gives the same ids)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, CLIP_NORM, SEQ, bug, token_ids, torch_adamw
from transformers import BartConfig, BartForConditionalGeneration
from transformers.models.bart.modeling_bart import shift_tokens_right

BUGS = {"pad_in_loss"} | {"paddle_act_dropout", "paddle_decay_pname"}  # the paddle side's, ignored here
VOCAB, PAD, START = 1000, 1, 2
CONFIG = dict(
    vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.1, attention_dropout=0.1, activation_dropout=0.0, init_std=0.02,
    pad_token_id=PAD, bos_token_id=0, eos_token_id=2, decoder_start_token_id=START,
    scale_embedding=False, tie_word_embeddings=True,
)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = BartForConditionalGeneration(BartConfig(**CONFIG, attn_implementation="eager"))
    for name, prm in m.named_parameters():  # frozen: zero gradient in exact arithmetic (softmax is shift invariant)
        if name.endswith("k_proj.bias"):
            prm.requires_grad_(False)
    m.train()
    return m


def _arrays():
    ids = token_ids(VOCAB, seed=0, low=3)  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((BATCH, SEQ), "int64")
    ids[1, 6:], mask[1, 6:] = PAD, 0  # second source padded after 6 tokens
    labels = token_ids(VOCAB, seed=1, low=3)
    labels[1, 6:] = PAD if bug(BUGS) == "pad_in_loss" else -100  # second target padded after 6 tokens
    return ids, mask, labels


def inputs():
    ids, mask, labels = _arrays()
    dec = shift_tokens_right(torch.from_numpy(labels), PAD, START)
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask), "decoder_input_ids": dec}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # Seq2SeqLMOutput
    labels = torch.from_numpy(_arrays()[2])
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)


def optimizer(model):
    return torch_adamw(model)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)

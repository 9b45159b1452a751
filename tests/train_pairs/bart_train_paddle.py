"""BART seq2seq LM in TRAINING mode, paddlenlp side: BartForConditionalGeneration, tiny random
config (no download), fp32, dropout 0.1, attention dropout 0.1, activation dropout 0.0 (HF's
default, passed explicitly: paddlenlp's default is 0.1), model.train(); tied embeddings: the LM
head weight IS the shared token embedding (`m.lm_head_weight = m.bart.shared.weight`;
paddlenlp creates `lm_head_weight` as a separate parameter, HF ties lm_head to shared);
teacher forcing: decoder_input_ids = labels shifted right with the decoder start token 2 by
paddlenlp's own `shift_tokens_right(labels, decoder_start_token_id)` (applied to the padded
labels: paddlenlp's shift has no -100 handling); source padded (attention_mask), target of
sample 1 padded after 6 tokens; cross-entropy with ignore_index = pad id 1 (paddle only excludes
ignored targets from the mean when ignore_index >= 0; with -100 it averages over every
position); the attention key biases frozen on both sides (zero gradient in exact arithmetic:
Adam would turn rounding noise into +-lr updates); AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices and
embeddings only) with `grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0)`. 3 steps.
Twin: bart_train_torch.py (HF BartForConditionalGeneration). Ground truth: bart_train_truth.json.

PADIFF_BUG (this side only):
  paddle_act_dropout -> the config dict lacks `activation_dropout`: paddlenlp's default 0.1 is
                        used (HF's reference value: 0.0), a dropout after every FFN activation
  paddle_decay_pname -> AdamW's apply_decay_param_fun written with the usual structured-name
                        filter (`not any(nd in name for nd in ["bias", "norm"])`), but paddle
                        passes the parameter's generated `.name` (`linear_3.b_0`,
                        `layer_norm_0.w_0`): "bias" never matches, so every Linear bias is
                        decayed (LayerNorm tensors still match "norm")
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, CLIP_NORM, EPS, LR, SEQ, WD, bug, randomize_paddle, token_ids
from paddlenlp.transformers import BartConfig, BartForConditionalGeneration
from paddlenlp.transformers.bart.modeling import shift_tokens_right

BUGS = {"paddle_act_dropout", "paddle_decay_pname"} | {"pad_in_loss"}  # the torch side's, ignored here
VOCAB, PAD, START = 1000, 1, 2
CONFIG = dict(
    vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.1, attention_dropout=0.1, activation_dropout=0.0, init_std=0.02,
    pad_token_id=PAD, bos_token_id=0, eos_token_id=2, decoder_start_token_id=START,
    scale_embedding=False,
)


def model():
    b = bug(BUGS)
    paddle.seed(0)
    cfg = dict(CONFIG)
    if b == "paddle_act_dropout":
        cfg.pop("activation_dropout")  # -> paddlenlp's default 0.1
    m = BartForConditionalGeneration(BartConfig(**cfg))
    m.lm_head_weight = m.bart.shared.weight  # tie the LM head to the token embedding, as HF does
    randomize_paddle(m)
    for name, prm in m.named_parameters():  # frozen: zero gradient in exact arithmetic (softmax is shift invariant)
        if name.endswith("k_proj.bias"):
            prm.stop_gradient = True
    m.train()
    return m


def _arrays():
    ids = token_ids(VOCAB, seed=0, low=3)  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((BATCH, SEQ), "int64")
    ids[1, 6:], mask[1, 6:] = PAD, 0  # second source padded after 6 tokens
    labels = token_ids(VOCAB, seed=1, low=3)
    labels[1, 6:] = PAD  # second target padded after 6 tokens (the tokenizer's padded ids)
    return ids, mask, labels


def inputs():
    ids, mask, labels = _arrays()
    dec = shift_tokens_right(paddle.to_tensor(labels), START)
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask), "decoder_input_ids": dec}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare lm_logits [2, 8, 1000]
    labels = paddle.to_tensor(_arrays()[2])
    return F.cross_entropy(logits.reshape([-1, VOCAB]), labels.reshape([-1]), ignore_index=PAD)


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    if bug(BUGS) == "paddle_decay_pname":
        decay = lambda name: not any(nd in name for nd in ["bias", "norm"])  # noqa: E731  (name is p.name)
    else:
        names = {p.name for p in params if p.ndim >= 2}
        decay = lambda name: name in names  # noqa: E731
    return paddle.optimizer.AdamW(
        learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params, weight_decay=WD,
        apply_decay_param_fun=decay, grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP_NORM),
    )

"""T5 seq2seq LM in TRAINING mode, paddlenlp side: T5ForConditionalGeneration, tiny random config
(no download), dropout_rate 0.1 (T5's default), model.train(), teacher-forced cross-entropy on
the labels (decoder_input_ids = labels shifted right, start token 0), AdamW (lr 1e-3, betas
(0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices only). Norm scales are drawn as
1 + N(0, 0.1) (paddlenlp starts them at 1). Twin: t5_train_torch.py. Ground truth:
t5_train_truth.json.

PADIFF_BUG (this side only):
  enc_eval -> the encoder left in eval mode after model.train() (a porter "freezing" the
              encoder): no dropout anywhere in the encoder, the decoder trains with dropout
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, SEQ, bug, paddle_adamw, token_ids
from paddlenlp.transformers import T5Config, T5ForConditionalGeneration

BUGS = {"enc_eval"} | {"ff_dropout", "adam_l2", "lr_default"}  # the torch side's, ignored here
VOCAB = 1000
CONFIG = dict(
    vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32,
    relative_attention_max_distance=128,  # paddlenlp ignores it (hard-coded 128)
    dropout_rate=0.1, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="relu", use_cache=False, pad_token_id=0, eos_token_id=1,
    decoder_start_token_id=0, tie_word_embeddings=True,
)


def _perturb_norms(m):
    paddle.seed(1)
    for _name, p in m.named_parameters():
        if p.ndim == 1:
            p.set_value((1.0 + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = T5ForConditionalGeneration(T5Config(**CONFIG))
    _perturb_norms(m)
    m.train()
    if b == "enc_eval":
        m.t5.encoder.eval()
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
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask),
                "decoder_input_ids": paddle.to_tensor(dec)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # (lm_logits, encoder output)
    labels = paddle.to_tensor(_arrays()[3])
    return F.cross_entropy(logits.reshape([-1, VOCAB]), labels.reshape([-1]))


def optimizer(model):
    return paddle_adamw(model)

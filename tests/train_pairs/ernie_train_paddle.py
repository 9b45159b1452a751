"""ERNIE masked-LM in TRAINING mode, paddlenlp side: ErnieForMaskedLM, tiny random config (no
download), dropout 0.1 (hidden and attention), model.train(), masked-LM cross-entropy (labels
-100 except at the 3 of 16 masked positions, ~19 %), decoder weight tied to the word embeddings
(paddlenlp `tie_weights()`: `decoder.weight = word_embeddings.weight`, one Parameter), AdamW
(lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01) whose no-decay list is written the
PaddleNLP way: by the parameter's STRUCTURED name (`named_parameters()`), names containing "bias"
or "norm" are not decayed, and `apply_decay_param_fun` receives the parameter's `.name`
(`linear_0.w_0`), so the decayed set is built as a list of `p.name` (PaddleNLP's run_pretrain).
The loss mean over the masked tokens is written out (see loss()): paddle's own mean does not
ignore the -100 labels in its denominator.
Twin: ernie_train_torch.py (HF ErnieForMaskedLM). Ground truth: ernie_train_truth.json.

The pooler: paddlenlp's ErnieForMaskedLM builds ErnieModel WITH a pooler (run in every forward,
its output unused by the MLM head: no gradient), HF's ErnieForMaskedLM builds it without one.
The pooler's two tensors are frozen here (stop_gradient) so the trainable sets match; that
changes no number (they never get a gradient).

PADIFF_BUG (this side only):
  paddle_keep_prob   -> hidden_dropout_prob=0.9: the porter took a keep probability (0.9, TF-era
                        `keep_prob`) for the drop probability; every hidden dropout (embeddings,
                        after attention, after the FFN) drops 90 %, attention dropout unchanged
  paddle_ce_mean     -> the loss is F.cross_entropy(logits, labels, ignore_index=-100) with its
                        default reduction "mean": paddle 3.3.1 divides by the number of
                        non-ignored labels only for ignore_index >= 0; with -100 it takes the
                        mean over all 16 positions (13 of them zero): loss and gradients are 3/16
                        of the mean over the masked tokens (paddlenlp's own ErnieForMaskedLM
                        `labels=` loss, CrossEntropyLoss(), does the same)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, WD, bug, randomize_paddle, token_ids
from paddlenlp.transformers import ErnieConfig, ErnieForMaskedLM

BUGS = {"paddle_keep_prob", "paddle_ce_mean"} | {"lowercase_no_decay"}  # the torch side's, ignored here
VOCAB, MASK_ID = 1000, 3
CONFIG = dict(
    vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.02, pad_token_id=0, layer_norm_eps=1e-12,
)
MASKED = [(0, 2), (0, 5), (1, 3)]  # 3 of 16 positions


def model():
    b = bug(BUGS)
    paddle.seed(0)
    cfg = dict(CONFIG, hidden_dropout_prob=0.9) if b == "paddle_keep_prob" else CONFIG
    m = ErnieForMaskedLM(ErnieConfig(**cfg))
    randomize_paddle(m)
    for p in m.ernie.pooler.parameters():  # HF's MLM model has no pooler (unused by the MLM loss)
        p.stop_gradient = True
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
    return (), {"input_ids": paddle.to_tensor(ids), "token_type_ids": paddle.to_tensor(types),
                "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 8, 1000]
    labels = paddle.to_tensor(_arrays()[3]).reshape([-1])
    if bug(BUGS) == "paddle_ce_mean":  # paddle's mean with a negative ignore_index divides by all 16
        return F.cross_entropy(logits.reshape([-1, VOCAB]), labels, ignore_index=-100)
    # paddle 3.3.1: reduction="mean" divides by the count of non-ignored labels only when
    # ignore_index >= 0; with -100 it is mean_all (sum / 16). The mean over the masked tokens,
    # as torch (and HF's loss) compute it, is written out:
    per_token = F.cross_entropy(logits.reshape([-1, VOCAB]), labels, ignore_index=-100, reduction="none")
    return per_token.sum() / (labels != -100).astype(per_token.dtype).sum()


def optimizer(model):
    no_decay = ["bias", "norm"]
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay_params = [p.name for n, p in model.named_parameters()
                    if not p.stop_gradient and not any(nd in n for nd in no_decay)]
    return paddle.optimizer.AdamW(
        learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params, weight_decay=WD,
        apply_decay_param_fun=lambda name: name in decay_params,
    )

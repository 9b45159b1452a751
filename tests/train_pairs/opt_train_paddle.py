"""OPT causal LM in TRAINING mode, paddlenlp side: OPTForCausalLM, tiny random config (no
download), fp32, pre-LN, relu, model.train(); dropout: attention probabilities 0.1, hidden 0.0
(see opt_train_truth.json "conventions" and NOTES-set9-h8.md for why not the other way round);
the attention key biases frozen on both sides (their gradient is zero in exact arithmetic);
a NEW batch every step (`inputs(step)`); next-token cross-entropy on logits[:, :-1] vs
ids[:, 1:] (computed here: paddlenlp's OPT loss does not shift the labels, and paddle's
mean over an ignore_index of -100 counts the ignored positions); plain Adam (lr 1e-3, betas
(0.9, 0.999), eps 1e-8, no weight decay, no clipping) with a cosine schedule
`paddle.optimizer.lr.CosineAnnealingDecay(1e-3, T_max=4)` passed as the optimizer's
learning_rate (the loop steps it once after every optimizer step). 4 steps.
Twin: opt_train_torch.py (HF OPTForCausalLM). Ground truth: opt_train_truth.json.

PADIFF_BUG (this side only):
  paddle_sched_detached -> the CosineAnnealingDecay is created and stepped, but Adam gets the
                           float 1e-3 as learning_rate: the schedule never reaches the optimizer
                           (constant lr 1e-3; update 1 agrees, update 2 does not)
"""
import paddle
import paddle.nn.functional as F
from _train_common import BETA1, BETA2, EPS, LR, bug, randomize_paddle, token_ids
from paddlenlp.transformers import OPTConfig, OPTForCausalLM

BUGS = {"paddle_sched_detached"} | {"sched_early_step", "dropout_swap"}  # torch's, ignored here
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 32, 2, 4, 64, 64
T_MAX = 4


def model():
    bug(BUGS)
    paddle.seed(0)
    cfg = OPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=FFN, word_embed_proj_dim=HIDDEN, max_position_embeddings=MAX_POS,
        hidden_act="relu", normalize_before=True, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.1,
        use_cache=False, dtype="float32",
    )
    m = OPTForCausalLM(cfg)  # lm_head.decoder_weight is its own parameter (not tied), as HF with tie_word_embeddings=False
    randomize_paddle(m)
    for layer in m.opt.decoder.layers:  # frozen: zero gradient in exact arithmetic (softmax is shift invariant)
        layer.self_attn.k_proj.bias.stop_gradient = True
    m.train()
    return m


def _ids(step):
    # a new batch each step, from ids 4..63 only: consecutive batches share tokens, so embedding
    # rows moved by update k are read again by step k's forward
    return token_ids(64, seed=100 + step)


_STEP = [0]  # the step of the last inputs() call: loss() takes that batch's labels


def inputs(step=0):
    _STEP[0] = step
    return (), {"input_ids": paddle.to_tensor(_ids(step))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 8, 1000]
    labels = paddle.to_tensor(_ids(_STEP[0])[:, 1:])  # next token
    return F.cross_entropy(logits[:, :-1].reshape([-1, VOCAB]), labels.reshape([-1]))


def optimizer(model):
    sched = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=T_MAX)
    lr = LR if bug(BUGS) == "paddle_sched_detached" else sched
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Adam(learning_rate=lr, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params)
    return opt, sched

"""Mixtral (sparse MoE) causal LM in TRAINING mode, paddlenlp side: MixtralForCausalLM, tiny
random config (no download): hidden 32, FFN 64, 2 layers, 4 heads (2 kv heads), 4 experts, top-2,
attention dropout 0.1 (the only dropout Mixtral has; both libraries default to 0.0, set to 0.1
here on both), model.train(). The loss is the library's own: labels passed to the model
(paddlenlp convention: labels already shifted, ids[:, 1:] with -100 appended; its criterion
averages the positive per-token losses) and, with output_router_logits=True, the router
load-balancing auxiliary loss (Switch Transformer, paddlenlp `load_balancing_loss_func`) added
with router_aux_loss_coef 0.02. AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay
0.01 on the matrices, via apply_decay_param_fun over the parameters' `.name`).
Twin: mixtral_train_torch.py (HF MixtralForCausalLM). Ground truth: mixtral_train_truth.json.

Compatibility (as tests/real_pairs/mixtral_paddle.py): paddlenlp 2.8.1's MixtralSparseMoeBlock
does `idx, top_x = paddle.where(mask)` and expects paddle 2.x results ([N, 1]); paddle 3.x returns
[N]. The spec gives that one module a `paddle` proxy whose one-argument `where` unsqueezes its
results; everything else is the real paddle (backward unaffected: the indices carry no gradient).

PADIFF_BUG (this side only):
  paddle_dropout_key  -> the attention dropout given under the BERT-era key
                         `attention_probs_dropout_prob=0.1`: paddlenlp's config accepts the unknown
                         key silently and MixtralAttention reads `config.attention_dropout`, which
                         stays at its default 0.0: no attention dropout on the paddle side
  paddle_decay_fn_names -> apply_decay_param_fun written for structured names
                         (`lambda n: n.endswith("weight") and "norm" not in n`), but paddle passes
                         the parameter's `.name` (`linear_0.w_0`, `embedding_0.w_0`): nothing ends
                         with "weight", so no tensor is decayed on the paddle side
"""
import numpy as np
import paddle
from _train_common import BETA1, BETA2, EPS, LR, WD, bug, token_ids

BUGS = {"paddle_dropout_key", "paddle_decay_fn_names"} | {"aux_coef_default"}  # the torch side's, ignored here
VOCAB = 1000
CONFIG = dict(
    vocab_size=VOCAB, hidden_size=32, intermediate_size=64, max_position_embeddings=64, seq_length=64,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_act="silu",
    initializer_range=0.1, rms_norm_eps=1e-5, rope_theta=10000.0, num_local_experts=4,
    num_experts_per_tok=2, tie_word_embeddings=False, use_cache=False,
    use_flash_attention=False, pad_token_id=0, bos_token_id=1, eos_token_id=2,
    output_router_logits=True, router_aux_loss_coef=0.02,
)


class _PaddleWhere2x:
    """`paddle` for paddlenlp's mixtral module: one-argument where() returns [N, 1] like paddle 2.x."""

    def __getattr__(self, name):
        return getattr(paddle, name)

    @staticmethod
    def where(condition, x=None, y=None, name=None):
        if x is None and y is None:
            return tuple(t.unsqueeze(-1) for t in paddle.nonzero(condition, as_tuple=True))
        return paddle.where(condition, x, y, name=name)


def _patch_where():
    import paddlenlp.transformers.mixtral.modeling as mm

    if not isinstance(mm.paddle, _PaddleWhere2x):
        mm.paddle = _PaddleWhere2x()


def model():
    from paddlenlp.transformers import MixtralConfig, MixtralForCausalLM

    b = bug(BUGS)
    _patch_where()
    paddle.seed(0)
    drop = {"attention_probs_dropout_prob": 0.1} if b == "paddle_dropout_key" else {"attention_dropout": 0.1}
    m = MixtralForCausalLM(MixtralConfig(**CONFIG, **drop, dtype="float32"))
    paddle.seed(1)  # RMSNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 1); matrices N(0, 0.1)
    for _name, p in m.named_parameters():
        if p.ndim == 1:
            p.set_value((1.0 + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))
    m.train()
    return m


def inputs():
    ids = token_ids(VOCAB)
    labels = np.concatenate([ids[:, 1:], np.full((ids.shape[0], 1), -100, "int64")], axis=1)  # shifted
    return (), {"input_ids": paddle.to_tensor(ids), "labels": paddle.to_tensor(labels),
                "use_cache": False, "return_dict": True}


def loss(output):
    return output["loss"]  # cross-entropy + router_aux_loss_coef * aux_loss, computed by the model


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    if bug(BUGS) == "paddle_decay_fn_names":
        decay_fn = lambda n: n.endswith("weight") and "norm" not in n  # noqa: E731 (gets "linear_0.w_0")
    else:
        decay = {p.name for p in params if p.ndim >= 2}
        decay_fn = lambda n: n in decay  # noqa: E731
    return paddle.optimizer.AdamW(
        learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params, weight_decay=WD,
        apply_decay_param_fun=decay_fn,
    )

"""GPT-J causal LM in TRAINING mode, paddlenlp side: tiny random config (no download), dropout
0.1 (embeddings, attention probabilities, residual: attention output and MLP output),
model.train(), next-token cross-entropy, and plain Adam with COUPLED L2 weight decay on every
tensor: `paddle.optimizer.Adam(weight_decay=paddle.regularizer.L2Decay(0.01))` (the decay
term 0.01 w is added to the gradient before Adam's moments, i.e. the loss gains
0.5 * 0.01 * |w|^2 - not AdamW's decoupled decay). A NEW batch every step (inputs(step),
no padding).
Twin: gptj_train_torch.py. Ground truth: gptj_train_truth.json (run with --steps 3).

Conventions of this port (by design, not bugs):
- paddle L2Decay(coeff) == torch Adam(weight_decay=coeff): both add coeff * w to the gradient
  inside the optimizer (paddle's docstring writes the penalty as 0.5 * coeff * sum(w^2)); the
  recorded gradients are the raw ones (before the decay term) on both sides.
- paddlenlp 2.8.1 keeps the causal mask `attn.bias` as a float32 tril buffer and calls
  paddle.where(bias, ...); paddle 3.x needs a bool condition. A bool BUFFER is not enough in
  training checks: `model.to(dtype="float64")` casts every buffer, bool included, back to
  float. The spec therefore keeps the bool mask as a plain attribute outside the layer's
  buffers (same values; `attn.bias` is no longer a recorded buffer).

PADIFF_BUG (this side only):
  paddle_l1decay -> weight_decay=paddle.regularizer.L1Decay(0.01): 0.01 * sign(w) added to the
              gradient instead of 0.01 * w (the wrong regularizer class picked)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, SEQ, bug, randomize_paddle
from paddlenlp.transformers import GPTJConfig, GPTJForCausalLM

BUGS = {"paddle_l1decay"} | {"l2_in_loss", "embd_pdrop_default"}  # the torch side's, ignored here
CONFIG = dict(
    vocab_size=1000, n_positions=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=64,
    activation_function="gelu_new", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
    layer_norm_epsilon=1e-5, initializer_range=0.02, use_cache=False, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 0.01
_IDS = [None]  # the ids of the batch last handed out by inputs()


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = GPTJForCausalLM(GPTJConfig(**CONFIG, dtype="float32"))
    randomize_paddle(m)
    for block in m.transformer.h:  # the causal mask as a bool tensor outside the buffers (see above)
        mask = block.attn.bias.astype("bool")
        del block.attn._buffers["bias"]
        object.__setattr__(block.attn, "bias", mask)
    m.train()
    return m


def _ids(step):
    return np.random.default_rng(50 + step).integers(4, 1000, (BATCH, SEQ)).astype("int64")  # no pad/bos/eos


def inputs(step=0):
    _IDS[0] = _ids(step)  # a new batch every step
    return (), {"input_ids": paddle.to_tensor(_IDS[0]), "use_cache": False}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # [2, 8, 1000]
    v = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape([-1, v]), paddle.to_tensor(_IDS[0][:, 1:].reshape(-1)))


def optimizer(model):
    reg = paddle.regularizer.L1Decay(WD) if bug(BUGS) == "paddle_l1decay" else paddle.regularizer.L2Decay(WD)
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Adam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                 weight_decay=reg)

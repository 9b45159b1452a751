"""GPT-J causal LM in TRAINING mode, HF transformers side: tiny random config (no download),
eager attention, dropout 0.1 (embd_pdrop, attn_pdrop, resid_pdrop), model.train(), next-token
cross-entropy, and torch.optim.Adam(weight_decay=0.01): COUPLED L2 decay (0.01 w added to the
gradient before the moments) on every tensor, as the paddle reference's L2Decay(0.01). A NEW
batch every step (inputs(step), no padding). Twin: gptj_train_paddle.py. Ground truth: gptj_train_truth.json
(run with --steps 3).

PADIFF_BUG (this side only):
  l2_in_loss -> the decay written into the loss instead of the optimizer: loss + 0.01 *
              sum(w^2) over every parameter (paddle's 0.5 factor dropped: twice the decay) and
              Adam without weight_decay; the loss and every raw gradient change
  embd_pdrop_default -> GPTJConfig built without embd_pdrop: HF's default 0.0 (the port
              passed resid_pdrop and attn_pdrop only), so no dropout on the embeddings
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, SEQ, bug
from transformers import GPTJConfig, GPTJForCausalLM

BUGS = {"l2_in_loss", "embd_pdrop_default"} | {"paddle_l1decay"}  # the paddle side's, ignored here
CONFIG = dict(
    vocab_size=1000, n_positions=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=64,
    activation_function="gelu_new", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
    layer_norm_epsilon=1e-5, initializer_range=0.02, use_cache=False, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 0.01
_IDS = [None]  # the ids of the batch last handed out by inputs()
_MODEL = []  # the model last built (the l2_in_loss bug reads its parameters in loss())


def model():
    config = dict(CONFIG)
    if bug(BUGS) == "embd_pdrop_default":
        del config["embd_pdrop"]  # HF GPTJConfig's default: 0.0
    torch.manual_seed(0)
    m = GPTJForCausalLM(GPTJConfig(**config, attn_implementation="eager"))
    m.train()
    _MODEL[:] = [m]
    return m


def _ids(step):
    return np.random.default_rng(50 + step).integers(4, 1000, (BATCH, SEQ)).astype("int64")  # no pad/bos/eos


def inputs(step=0):
    _IDS[0] = _ids(step)  # a new batch every step
    return (), {"input_ids": torch.from_numpy(_IDS[0]), "use_cache": False}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # [2, 8, 1000]
    v = logits.shape[-1]
    ce = F.cross_entropy(logits[:, :-1].reshape(-1, v), torch.from_numpy(_IDS[0][:, 1:].reshape(-1)))
    if bug(BUGS) == "l2_in_loss":
        ce = ce + WD * sum((p * p).sum() for p in _MODEL[0].parameters() if p.requires_grad)
    return ce


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    if bug(BUGS) == "l2_in_loss":
        return torch.optim.Adam(params, lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=0.0)
    return torch.optim.Adam(params, lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=WD)

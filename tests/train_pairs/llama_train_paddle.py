"""LLaMA causal LM in TRAINING mode, paddlenlp side: LlamaForCausalLM, tiny random config (no
download), fp32, model.train() (paddlenlp's LLaMA has no dropout at all: the library default),
next-token cross-entropy, AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on
matrices only) with gradient clipping by global norm 1.0 (ClipGradByGlobalNorm).
Twin: llama_train_torch.py (HF LlamaForCausalLM). Ground truth: llama_train_truth.json.

PADIFF_BUG (this side only):
  beta2 -> AdamW beta2 0.99 instead of 0.999 (Adam's first update does not depend on the
           betas: visible from the second update on)
  paddle_wd -> AdamW weight_decay 0.1 (the LLaMA paper's pre-training value) instead of the
           pair's 0.01, on the same tensors (ndim >= 2)
"""
import paddle
import paddle.nn.functional as F
from _train_common import BETA1, BETA2, CLIP_NORM, EPS, LR, bug, paddle_adamw, randomize_paddle, token_ids
from paddlenlp.transformers import LlamaConfig, LlamaForCausalLM

BUGS = {"beta2", "paddle_wd"} | {"attn_dropout", "no_clip"}  # the torch side's, ignored here
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    bug(BUGS)
    paddle.seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=MAX_POS, seq_length=MAX_POS,
        rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False, use_cache=False, dtype="float32",
    )
    m = LlamaForCausalLM(cfg)
    randomize_paddle(m)
    m.train()
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids(VOCAB))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # a 1-tuple (logits,)
    labels = paddle.to_tensor(token_ids(VOCAB)[:, 1:])  # next token
    return F.cross_entropy(logits[:, :-1].reshape([-1, VOCAB]), labels.reshape([-1]))


def optimizer(model):
    if bug(BUGS) == "paddle_wd":  # paddle_adamw with weight_decay 0.1
        params = [p for p in model.parameters() if not p.stop_gradient]
        decay = {p.name for p in params if p.ndim >= 2}
        return paddle.optimizer.AdamW(
            learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params, weight_decay=0.1,
            apply_decay_param_fun=lambda name: name in decay, grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP_NORM),
        )
    return paddle_adamw(model, clip=True, beta2=0.99 if bug(BUGS) == "beta2" else 0.999)

"""GPT causal LM in TRAINING mode, paddlenlp side: GPTForCausalLM, tiny random config (no
download), fp32, dropout 0.1 (hidden and attention), model.train(), next-token cross-entropy,
AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices only) with
gradient clipping by global norm 1.0 (`grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0)`).
Twin: gpt_train_torch.py (HF GPT2LMHeadModel). Ground truth: gpt_train_truth.json.

PADIFF_BUG (this side only):
  eps -> AdamW epsilon 1e-6 instead of 1e-8
"""
import paddle
import paddle.nn.functional as F
from _train_common import bug, paddle_adamw, randomize_paddle, token_ids
from paddlenlp.transformers import GPTConfig, GPTForCausalLM

BUGS = {"eps"} | {"attn_dropout", "label_smoothing", "shift_twice"}  # the torch side's, ignored here
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    bug(BUGS)
    paddle.seed(0)
    cfg = GPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=FFN, max_position_embeddings=MAX_POS, hidden_activation="gelu",
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        use_cache=False, dtype="float32",
    )
    m = GPTForCausalLM(cfg)
    randomize_paddle(m)
    m.train()
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids(VOCAB))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 8, 1000]
    labels = paddle.to_tensor(token_ids(VOCAB)[:, 1:])  # next token
    return F.cross_entropy(logits[:, :-1].reshape([-1, VOCAB]), labels.reshape([-1]))


def optimizer(model):
    return paddle_adamw(model, clip=True, epsilon=1e-6 if bug(BUGS) == "eps" else 1e-8)

"""BLOOM pair, paddle side: paddlenlp BloomForCausalLM (tiny random config, fp32, no downloads).

Twin of bloom_torch.py (HF BloomForCausalLM). Ground truth: bloom_truth.json.
PADIFF_BUG (paddle side):
  paddle_gelu_erf -> layer 1's MLP activation (mlp.gelu_impl) is paddle's F.gelu, whose default is
                     the exact erf form, instead of BLOOM's tanh approximation (precision-level)
"""
import os

import paddle
from _decoders_common import randomize_paddle, token_ids

_BUG = os.environ.get("PADIFF_BUG", "")  # other bloom bugs (alibi, scale, residual_post_ln) are planted on the torch side
VOCAB, HIDDEN, LAYERS, HEADS = 1000, 64, 2, 4


def model():
    from paddlenlp.transformers import BloomConfig, BloomForCausalLM

    paddle.seed(0)
    cfg = BloomConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=LAYERS, n_head=HEADS, layer_norm_epsilon=1e-5,
        hidden_dropout=0.0, attention_dropout=0.0, use_cache=False, dtype="float32",
    )
    m = BloomForCausalLM(cfg)  # lm_head reuses bloom.word_embeddings.weight (tied)
    randomize_paddle(m)
    m.eval()
    if _BUG == "paddle_gelu_erf":
        # a porter "simplified" BloomGelu's hand-written tanh formula to the framework GELU
        m.bloom.h[1].mlp.gelu_impl.forward = lambda x: paddle.nn.functional.gelu(x)  # noqa: PLW0108  approximate=False
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids(VOCAB))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

"""GPT pair, paddle side: paddlenlp GPTForCausalLM (tiny random config, fp32, no downloads).

Twin of gpt_torch.py (HF GPT2LMHeadModel). Ground truth: gpt_truth.json.
PADIFF_BUG (this side): paddle_gelu_erf -> layer 1 MLP uses the exact erf GELU instead of the
            tanh approximation that GPT-2 (HF "gelu_new") uses
"""
import os

import paddle
from _decoders_common import randomize_paddle, token_ids

_BUG = os.environ.get("PADIFF_BUG", "")  # gpt bugs act, scale, mlp_residual are planted on the torch side
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    from paddlenlp.transformers import GPTConfig, GPTForCausalLM

    paddle.seed(0)
    cfg = GPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=FFN, max_position_embeddings=MAX_POS, hidden_activation="gelu",
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        use_cache=False, dtype="float32",
    )
    m = GPTForCausalLM(cfg)
    randomize_paddle(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_gelu_erf":
        # the layer calls self.activation(x, approximate=True); the port ignores the flag
        import paddle.nn.functional as F

        m.gpt.decoder.layers[1].activation = lambda x, approximate=False: F.gelu(x)
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids(VOCAB))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

"""OPT pair, paddle side: paddlenlp OPTForCausalLM (tiny random config, fp32, no downloads).

Twin of opt_torch.py (HF OPTForCausalLM). Ground truth: opt_truth.json.
PADIFF_BUG (this side): paddle_fc1_bias -> layer 1's first feed-forward projection (linear1, HF fc1)
            is applied without its bias (ported as a bias-free matmul)
"""
import os

import paddle
from _decoders_common import randomize_paddle, token_ids

_BUG = os.environ.get("PADIFF_BUG", "")  # opt bugs norm_order, scale, no_causal are planted on the torch side
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    from paddlenlp.transformers import OPTConfig, OPTForCausalLM

    paddle.seed(0)
    cfg = OPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=FFN, word_embed_proj_dim=HIDDEN, max_position_embeddings=MAX_POS,
        hidden_act="relu", normalize_before=True, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        use_cache=False, dtype="float32",
    )
    m = OPTForCausalLM(cfg)  # lm_head.decoder_weight is its own parameter (not tied)
    randomize_paddle(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_fc1_bias":
        import paddle.nn.functional as F

        fc1 = m.opt.decoder.layers[1].linear1
        fc1.forward = lambda x: F.linear(x, fc1.weight)  # bias left out
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids(VOCAB))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

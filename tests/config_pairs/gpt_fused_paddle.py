"""GPT with a fused q|k|v projection, paddle side: paddlenlp GPTForCausalLM built with
fuse_attention_qkv (qkv_proj packed head by head, [heads, q|k|v of the head]). Twin:
gpt2_torch.py (HF GPT2LMHeadModel, whose c_attn packs q|k|v of all heads: [q | k | v]).
"""
import paddle
from _common import VOCAB, randomize_paddle, token_ids

HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 64, 2, 4, 128, 64


def model():
    from paddlenlp.transformers import GPTConfig, GPTForCausalLM

    paddle.seed(0)
    cfg = GPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=FFN, max_position_embeddings=MAX_POS, hidden_activation="gelu",
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, use_cache=False, dtype="float32",
        fuse_attention_qkv=True,
    )
    return randomize_paddle(GPTForCausalLM(cfg)).eval()


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids())}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

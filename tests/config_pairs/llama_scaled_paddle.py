"""LLaMA with linearly scaled rotary positions, paddle side: paddlenlp LlamaForCausalLM with
rope_scaling_type "linear", factor 2 (its LlamaLinearScalingRotaryEmbedding keeps the base
frequencies and divides the positions by the factor). Twin: llama_scaled_torch.py (HF divides
the frequencies instead: another inv_freq buffer, the same tables)."""
import paddle
from _common import VOCAB, randomize_paddle, token_ids

HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 64, 2, 4, 128, 64


def model():
    from paddlenlp.transformers import LlamaConfig, LlamaForCausalLM

    paddle.seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=MAX_POS,
        seq_length=MAX_POS, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling_type="linear",
        rope_scaling_factor=2.0, tie_word_embeddings=False, use_cache=False, dtype="float32",
    )
    return randomize_paddle(LlamaForCausalLM(cfg)).eval()


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids())}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

"""LLaMA with fused projections, paddle side: paddlenlp LlamaForCausalLM built with
fuse_attention_qkv and fuse_attention_ffn (one qkv_proj packed head group by head group,
[kv_heads, q|k|v of the group]; one gate_up_fused_proj, [gate | up]), grouped-query attention
(4 heads, 2 key/value heads). Twin: llama_torch.py (HF, separate q/k/v and gate/up).
"""
import paddle
from _common import VOCAB, randomize_paddle, token_ids

HIDDEN, LAYERS, HEADS, KV_HEADS, FFN, MAX_POS = 64, 2, 4, 2, 128, 64


def model():
    from paddlenlp.transformers import LlamaConfig, LlamaForCausalLM

    paddle.seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=MAX_POS,
        seq_length=MAX_POS, rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False,
        use_cache=False, dtype="float32", fuse_attention_qkv=True, fuse_attention_ffn=True,
    )
    return randomize_paddle(LlamaForCausalLM(cfg)).eval()


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids())}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()


def optimizer(model):
    return paddle.optimizer.AdamW(learning_rate=1e-3, parameters=model.parameters(), weight_decay=0.01)

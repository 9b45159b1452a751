"""CodeGen pair, torch side: HF transformers CodeGenForCausalLM (tiny random config, fp32).

Twin of codegen_paddle.py (paddlenlp CodeGenForCausalLM). Ground truth: codegen_truth.json.
PADIFF_BUG (torch side):
  qkv_order -> layer 0 attention reads the packed qkv_proj output as (q, k, v) per model-parallel
               chunk instead of CodeGen's (q, v, k)
  act       -> layer 1 MLP activation is ReLU instead of tanh GELU (gelu_new)
  rope_q_only -> layer 0 attention applies the rotary embedding to the query only: the key's
                 rotary slice is left unrotated (the porter dropped the k_rot line)
"""
import os
import types

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, n_positions=64, n_ctx=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=64,
    activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    layer_norm_epsilon=1e-5, initializer_range=0.1, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


def _forward_qkv_order(self, hidden_states, layer_past=None, attention_mask=None, position_ids=None,
                       head_mask=None, use_cache=False, output_attentions=False, cache_position=None):
    """CodeGenAttention.forward (no cache, rotary_dim set) with the packed split read as q, k, v."""
    from transformers.models.codegen.modeling_codegen import apply_rotary_pos_emb

    qkv = self.qkv_proj(hidden_states)
    mp_num = 4
    qkv_split = qkv.reshape(qkv.shape[:-1] + (mp_num, -1))
    local_dim = self.head_dim * self.num_attention_heads // mp_num
    query, key, value = torch.split(qkv_split, local_dim, dim=-1)  # BUG: CodeGen packs q, v, k
    query = self._split_heads(query, self.num_attention_heads, self.head_dim, mp_num=mp_num)
    key = self._split_heads(key, self.num_attention_heads, self.head_dim, mp_num=mp_num)
    value = self._split_heads(value, self.num_attention_heads, self.head_dim, mp_num=mp_num)
    value = value.permute(0, 2, 1, 3)
    sincos = self.embed_positions.to(position_ids.device)[position_ids]
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    r = self.rotary_dim
    key = torch.cat([apply_rotary_pos_emb(key[..., :r], sin, cos), key[..., r:]], dim=-1)
    query = torch.cat([apply_rotary_pos_emb(query[..., :r], sin, cos), query[..., r:]], dim=-1)
    key = key.permute(0, 2, 1, 3)
    query = query.permute(0, 2, 1, 3)
    attn_output, attn_weights = self._attn(query, key, value, attention_mask, head_mask)
    attn_output = self._merge_heads(attn_output, self.num_attention_heads, self.head_dim)
    attn_output = self.out_proj(attn_output)
    attn_output = self.resid_dropout(attn_output)
    return attn_output, attn_weights


def _forward_rope_q_only(self, hidden_states, layer_past=None, attention_mask=None, position_ids=None,
                         head_mask=None, use_cache=False, output_attentions=False, cache_position=None):
    """CodeGenAttention.forward (no cache, rotary_dim set) with the key's rotary slice never rotated."""
    from transformers.models.codegen.modeling_codegen import apply_rotary_pos_emb

    qkv = self.qkv_proj(hidden_states)
    mp_num = 4
    qkv_split = qkv.reshape(qkv.shape[:-1] + (mp_num, -1))
    local_dim = self.head_dim * self.num_attention_heads // mp_num
    query, value, key = torch.split(qkv_split, local_dim, dim=-1)
    query = self._split_heads(query, self.num_attention_heads, self.head_dim, mp_num=mp_num)
    key = self._split_heads(key, self.num_attention_heads, self.head_dim, mp_num=mp_num)
    value = self._split_heads(value, self.num_attention_heads, self.head_dim, mp_num=mp_num)
    value = value.permute(0, 2, 1, 3)
    sincos = self.embed_positions.to(position_ids.device)[position_ids]
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    r = self.rotary_dim
    q_rot = apply_rotary_pos_emb(query[:, :, :, :r], sin, cos)
    query = torch.cat([q_rot, query[:, :, :, r:]], dim=-1)  # BUG: key[..., :r] is not rotated
    key = key.permute(0, 2, 1, 3)
    query = query.permute(0, 2, 1, 3)
    attn_output, attn_weights = self._attn(query, key, value, attention_mask, head_mask)
    attn_output = self._merge_heads(attn_output, self.num_attention_heads, self.head_dim)
    attn_output = self.out_proj(attn_output)
    attn_output = self.resid_dropout(attn_output)
    return attn_output, attn_weights


def model():
    from transformers import CodeGenConfig, CodeGenForCausalLM

    torch.manual_seed(0)
    m = CodeGenForCausalLM(CodeGenConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "qkv_order":
        attn = m.transformer.h[0].attn
        attn.forward = types.MethodType(_forward_qkv_order, attn)
    elif bug == "act":
        m.transformer.h[1].mlp.act = torch.nn.ReLU()
    elif bug == "rope_q_only":
        attn = m.transformer.h[0].attn
        attn.forward = types.MethodType(_forward_rope_q_only, attn)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos ids
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask),
                "use_cache": False}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

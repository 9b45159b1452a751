"""Hand-written port, torch side: a tiny Phi-1 / Phi-2 style decoder LM (written by "person B").

The same math as port_phi_paddle.py, re-implemented by hand in the style of the original
"MixFormer" Phi code (MixFormerSequentialForCausalLM): input_ids [2, 12] (positional), vocab 64,
width 32, 4 heads of 8, MLP hidden 128, 2 parallel blocks
    h = ln(x);  x = x + mixer(h) + mlp(h)
a final LayerNorm and a biased LM head; logits [2, 12, 64]. Partial rotary on the first 4 of each
head's 8 q / k features, base 10000, causal softmax with scale 1/sqrt(8), gelu_new MLP.

Torch idioms on this side:
- root `MixFormerSequentialForCausalLM`: ONE nn.Sequential `layers`, called once with the ids:
  `layers.0` = `Embedding` (holding `wte`), `layers.1` / `layers.2` = `ParallelBlock`,
  `layers.3` = `CausalLMHead` (holding the final LayerNorm `ln` and the biased `linear`).
- `ParallelBlock` registers `ln`, `mixer`, `mlp`.
- `MHA` (the mixer): ONE fused `Wqkv` Linear(32, 96, bias), output laid out q | k | v
  (`view(b, seq_len, 3, heads, 8)`), then `out_proj`. The rotary is INLINE (a plain function, no
  module), GPT-J INTERLEAVED style: rotary features (2i, 2i + 1) form a pair, rotated by
  position * inv_freq[i], from non-persistent `cos_cached` / `sin_cached` buffers [16, 2] built in
  __init__. Scores via einsum in [b, heads, t, s], a -inf triu mask built inline.
- `MLP`: `fc1`, `act` (a hand-written `NewGELUActivation` module), `fc2`.

Because this side pairs rotary features (2i, 2i + 1) and the paddle side pairs (i, i + 2), the q
and k rows of `Wqkv` are the paddle q_proj / k_proj columns with the 4 rotary features of each
head re-ordered [0, 2, 1, 3] (port_phi_hook.py); q . k is unchanged by this permutation.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_qkv_view_heads_first -> the mixer splits Wqkv's output with view(b, seq_len, heads, 3, 8)
                                and unbind(3) (a per-head interleaved layout) instead of
                                view(b, seq_len, 3, heads, 8) and unbind(2)
  torch_residual_after_ln    -> ParallelBlock overwrites the input with ln(x) before taking the
                                residual, so it returns ln(x) + mixer + mlp instead of x + ...
"""
import math
import os

import numpy as np
import torch
from torch import nn

N_VOCAB, N_EMBD, N_HEAD, N_INNER, N_LAYER = 64, 32, 4, 128, 2
HEAD_DIM = N_EMBD // N_HEAD
ROTARY_DIM, ROTARY_BASE, MAX_POS = 4, 10000.0, 16
LN_EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_qkv_view_heads_first", "torch_residual_after_ln"}
OTHER_BUGS = {"paddle_gelu_exact", "paddle_rotary_freq_headdim"}


def apply_rotary_emb_interleaved(x, cos, sin):
    """x [b, seq_len, h, d]; cos / sin [seq_len, rotary_dim / 2]; pairs (2i, 2i + 1) of the first rotary_dim."""
    rot = cos.shape[-1] * 2
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    x1, x2 = x_rot[..., 0::2], x_rot[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    out = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
    return torch.cat([out, x_pass], dim=-1)


class NewGELUActivation(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Embedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(N_VOCAB, N_EMBD)

    def forward(self, input_ids):
        return self.wte(input_ids)


class MHA(nn.Module):
    def __init__(self, heads_first=False):
        super().__init__()
        self.heads_first = heads_first
        inv_freq = 1.0 / (ROTARY_BASE ** (torch.arange(0, ROTARY_DIM, 2, dtype=torch.float32) / ROTARY_DIM))
        t = torch.arange(MAX_POS, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        self.register_buffer("cos_cached", torch.cos(freqs), persistent=False)
        self.register_buffer("sin_cached", torch.sin(freqs), persistent=False)
        self.Wqkv = nn.Linear(N_EMBD, 3 * N_EMBD)
        self.out_proj = nn.Linear(N_EMBD, N_EMBD)

    def forward(self, x):
        b, seq_len, _ = x.shape
        qkv = self.Wqkv(x)
        if self.heads_first:
            q, k, v = qkv.view(b, seq_len, N_HEAD, 3, HEAD_DIM).unbind(dim=3)
        else:
            q, k, v = qkv.view(b, seq_len, 3, N_HEAD, HEAD_DIM).unbind(dim=2)
        cos, sin = self.cos_cached[:seq_len], self.sin_cached[:seq_len]
        q = apply_rotary_emb_interleaved(q, cos, sin)
        k = apply_rotary_emb_interleaved(k, cos, sin)
        softmax_scale = 1.0 / math.sqrt(HEAD_DIM)
        scores = torch.einsum("bthd,bshd->bhts", q, k * softmax_scale)
        causal_mask = torch.triu(torch.full((seq_len, seq_len), float("-inf"), device=x.device), 1)
        scores = scores + causal_mask
        attention = torch.softmax(scores, dim=-1)
        ctx = torch.einsum("bhts,bshd->bthd", attention, v).reshape(b, seq_len, N_EMBD)
        return self.out_proj(ctx)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_EMBD, N_INNER)
        self.act = NewGELUActivation()
        self.fc2 = nn.Linear(N_INNER, N_EMBD)

    def forward(self, hidden_states):
        return self.fc2(self.act(self.fc1(hidden_states)))


class ParallelBlock(nn.Module):
    def __init__(self, heads_first=False, residual_after_ln=False):
        super().__init__()
        self.residual_after_ln = residual_after_ln
        self.ln = nn.LayerNorm(N_EMBD, eps=LN_EPS)
        self.mixer = MHA(heads_first)
        self.mlp = MLP()

    def forward(self, hidden_states):
        if self.residual_after_ln:
            hidden_states = self.ln(hidden_states)
            residual = hidden_states
        else:
            residual = hidden_states
            hidden_states = self.ln(hidden_states)
        attn_outputs = self.mixer(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return attn_outputs + feed_forward_hidden_states + residual


class CausalLMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(N_EMBD, eps=LN_EPS)
        self.linear = nn.Linear(N_EMBD, N_VOCAB)

    def forward(self, hidden_states):
        return self.linear(self.ln(hidden_states))


class MixFormerSequentialForCausalLM(nn.Module):
    def __init__(self, heads_first=False, residual_after_ln=False):
        super().__init__()
        modules = [Embedding()]
        modules += [ParallelBlock(heads_first, residual_after_ln) for _ in range(N_LAYER)]
        modules.append(CausalLMHead())
        self.layers = nn.Sequential(*modules)

    def forward(self, input_ids):
        return self.layers(input_ids)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_phi torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MixFormerSequentialForCausalLM(heads_first=bug == "torch_qkv_view_heads_first",
                                       residual_after_ln=bug == "torch_residual_after_ln")
    return m.eval()


def _ids():
    rng = np.random.default_rng(23)
    return rng.integers(0, N_VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny Transformer-XL decoder with relative positional attention
and a segment memory (written by "person B", after the original kimiyoung/transformer-xl code).

The same math as port_transformer_xl_paddle.py. Sizes: vocab 40, d_model 32, 4 heads of 8,
d_inner 64, 2 layers, qlen 6, mem_len 5, batch 2, post-LN (pre_lnorm=False), LayerNorm eps 1e-5,
untied (per layer) r_w_bias / r_r_bias. No dropout (eval).

Inputs: `data` [2, 6] int64 (batch-major, transposed inside) and `mems` [2 layers, mlen 5,
batch 2, 32] float32 (TIME-major, as the original code keeps them). Output: `(logits [2, 6, 40],
new_mems)` with new_mems a list of 2 tensors [5, 2, 32].

Torch idioms on this side (time-major [len, bsz, ...] everywhere inside):
- root `MemTransformerLM`: `word_emb` (`AdaptiveEmbedding` with div_val 1: `emb_layers` =
  ModuleList[nn.Embedding(40, 32)], the sqrt(32) scale inside it, no projection), `pos_emb`
  (`PositionalEmbedding`, an `inv_freq` buffer = 1 / 10000 ** (arange(0, 32, 2) / 32)), `layers`
  (ModuleList of `RelPartialLearnableDecoderLayer`), `out_layer` nn.Linear(32, 40). The
  dec_attn_mask = triu(ones(qlen, klen), diagonal=1 + mlen)[:, :, None] is built inline.
- `RelPartialLearnableDecoderLayer`: `dec_attn`, `pos_ff`; each includes its own residual and
  LayerNorm (post-LN), as in the original code.
- `RelPartialLearnableMultiHeadAttn`: ONE packed `qkv_net` Linear(32, 96, bias=False) applied to
  cat([mems, w]) (the query rows are the last qlen), `r_net`, `o_net` (bias-free), `layer_norm`,
  and `r_r_bias` / `r_w_bias` [4, 8] registered LAST (in that order). AC / BD by einsum
  ('ibnd,jbnd->ijbn', 'ibnd,jnd->ijbn'), the classic pad + reshape `_rel_shift` on BD, score
  * 1 / sqrt(8), masked_fill(-inf), softmax over the key axis (dim 1).
- `PositionwiseFF`: `CoreNet` = nn.Sequential(Linear, ReLU, Dropout(0), Linear, Dropout(0)),
  `layer_norm`.

Planted bug (PADIFF_BUG), see port_transformer_xl_truth.json; the paddle side's bug names are
accepted and ignored, any other name raises ValueError:
  torch_bias_swapped -> r_w_bias and r_r_bias swapped in the attention: the content term AC uses
                        q + r_r_bias and the position term BD uses q + r_w_bias
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_TOKEN, D_MODEL, N_HEAD, D_INNER, N_LAYER = 40, 32, 4, 64, 2
D_HEAD = D_MODEL // N_HEAD
TGT_LEN, MEM_LEN, BSZ = 6, 5, 2
EPS = 1e-5
OWN_BUGS = {"torch_bias_swapped"}
OTHER_BUGS = {"paddle_rel_shift_direction", "paddle_pos_interleaved"}


class PositionalEmbedding(nn.Module):
    def __init__(self, demb):
        super().__init__()
        inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, pos_seq, bsz=None):
        sinusoid_inp = torch.outer(pos_seq, self.inv_freq)
        pos_emb = torch.cat([sinusoid_inp.sin(), sinusoid_inp.cos()], dim=-1)
        if bsz is not None:
            return pos_emb[:, None, :].expand(-1, bsz, -1)
        return pos_emb[:, None, :]


class PositionwiseFF(nn.Module):
    def __init__(self, d_model, d_inner, dropout=0.0):
        super().__init__()
        self.CoreNet = nn.Sequential(
            nn.Linear(d_model, d_inner), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(d_inner, d_model), nn.Dropout(dropout),
        )
        self.layer_norm = nn.LayerNorm(d_model, eps=EPS)

    def forward(self, inp):
        return self.layer_norm(inp + self.CoreNet(inp))


class RelPartialLearnableMultiHeadAttn(nn.Module):
    def __init__(self, n_head, d_model, d_head, swap_biases=False):
        super().__init__()
        self.n_head, self.d_head = n_head, d_head
        self.swap_biases = swap_biases
        self.qkv_net = nn.Linear(d_model, 3 * n_head * d_head, bias=False)
        self.r_net = nn.Linear(d_model, n_head * d_head, bias=False)
        self.o_net = nn.Linear(n_head * d_head, d_model, bias=False)
        self.layer_norm = nn.LayerNorm(d_model, eps=EPS)
        self.scale = 1 / (d_head ** 0.5)
        self.r_r_bias = nn.Parameter(torch.zeros(n_head, d_head))
        self.r_w_bias = nn.Parameter(torch.zeros(n_head, d_head))

    @staticmethod
    def _rel_shift(x):
        zero_pad = x.new_zeros((x.size(0), 1, *x.size()[2:]))
        x_padded = torch.cat([zero_pad, x], dim=1)
        x_padded = x_padded.view(x.size(1) + 1, x.size(0), *x.size()[2:])
        return x_padded[1:].view_as(x)

    def forward(self, w, r, attn_mask=None, mems=None):
        qlen, rlen, bsz = w.size(0), r.size(0), w.size(1)
        cat = torch.cat([mems, w], 0) if mems is not None else w
        w_heads = self.qkv_net(cat)
        r_head_k = self.r_net(r)
        w_head_q, w_head_k, w_head_v = torch.chunk(w_heads, 3, dim=-1)
        w_head_q = w_head_q[-qlen:]
        klen = w_head_k.size(0)
        w_head_q = w_head_q.view(qlen, bsz, self.n_head, self.d_head)
        w_head_k = w_head_k.view(klen, bsz, self.n_head, self.d_head)
        w_head_v = w_head_v.view(klen, bsz, self.n_head, self.d_head)
        r_head_k = r_head_k.view(rlen, self.n_head, self.d_head)

        content_bias, position_bias = self.r_w_bias, self.r_r_bias
        if self.swap_biases:
            content_bias, position_bias = position_bias, content_bias
        rw_head_q = w_head_q + content_bias
        AC = torch.einsum("ibnd,jbnd->ijbn", rw_head_q, w_head_k)  # qlen x klen x bsz x n_head
        rr_head_q = w_head_q + position_bias
        BD = torch.einsum("ibnd,jnd->ijbn", rr_head_q, r_head_k)
        BD = self._rel_shift(BD)

        attn_score = (AC + BD) * self.scale
        if attn_mask is not None:
            attn_score = attn_score.masked_fill(attn_mask[:, :, :, None], -float("inf"))
        attn_prob = F.softmax(attn_score, dim=1)
        attn_vec = torch.einsum("ijbn,jbnd->ibnd", attn_prob, w_head_v)
        attn_vec = attn_vec.contiguous().view(qlen, bsz, self.n_head * self.d_head)
        attn_out = self.o_net(attn_vec)
        return self.layer_norm(w + attn_out)


class RelPartialLearnableDecoderLayer(nn.Module):
    def __init__(self, swap_biases=False):
        super().__init__()
        self.dec_attn = RelPartialLearnableMultiHeadAttn(N_HEAD, D_MODEL, D_HEAD, swap_biases)
        self.pos_ff = PositionwiseFF(D_MODEL, D_INNER)

    def forward(self, dec_inp, r, dec_attn_mask=None, mems=None):
        output = self.dec_attn(dec_inp, r, attn_mask=dec_attn_mask, mems=mems)
        return self.pos_ff(output)


class AdaptiveEmbedding(nn.Module):
    """div_val = 1 and no cutoffs: a single table, d_proj == d_embed so no projection."""

    def __init__(self, n_token, d_embed, d_proj):
        super().__init__()
        self.emb_scale = d_proj ** 0.5
        self.emb_layers = nn.ModuleList([nn.Embedding(n_token, d_embed)])
        self.emb_projs = nn.ParameterList()

    def forward(self, inp):
        return self.emb_layers[0](inp) * self.emb_scale


class MemTransformerLM(nn.Module):
    def __init__(self, swap_biases=False):
        super().__init__()
        self.word_emb = AdaptiveEmbedding(N_TOKEN, D_MODEL, D_MODEL)
        self.pos_emb = PositionalEmbedding(D_MODEL)
        self.layers = nn.ModuleList([RelPartialLearnableDecoderLayer(swap_biases) for _ in range(N_LAYER)])
        self.out_layer = nn.Linear(D_MODEL, N_TOKEN)
        self.mem_len = MEM_LEN

    def _update_mems(self, hids, mems, mlen, qlen):
        with torch.no_grad():
            end_idx = mlen + qlen
            beg_idx = max(0, end_idx - self.mem_len)
            return [torch.cat([mems[i], hids[i]], dim=0)[beg_idx:end_idx].detach() for i in range(len(hids))]

    def forward(self, data, mems):
        dec_inp = data.t()  # [qlen, bsz]
        qlen, _ = dec_inp.size()
        word_emb = self.word_emb(dec_inp)
        mlen = mems[0].size(0)
        klen = mlen + qlen
        dec_attn_mask = torch.triu(word_emb.new_ones(qlen, klen), diagonal=1 + mlen).bool()[:, :, None]

        hids = []
        pos_seq = torch.arange(klen - 1, -1, -1.0, dtype=word_emb.dtype)
        pos_emb = self.pos_emb(pos_seq)
        core_out = word_emb
        for i, layer in enumerate(self.layers):
            hids.append(core_out)
            core_out = layer(core_out, pos_emb, dec_attn_mask=dec_attn_mask, mems=mems[i])
        new_mems = self._update_mems(hids, mems, mlen, qlen)
        logits = self.out_layer(core_out)  # [qlen, bsz, n_token]
        return logits.transpose(0, 1), new_mems


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_transformer_xl torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MemTransformerLM(swap_biases=bug == "torch_bias_swapped")
    return m.eval()


def _data():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, N_TOKEN, (BSZ, TGT_LEN)).astype("int64")
    mems = rng.standard_normal((N_LAYER, BSZ, MEM_LEN, D_MODEL)).astype("float32")
    return ids, np.ascontiguousarray(mems.transpose(0, 2, 1, 3))  # time-major [layer, mlen, bsz, d]


def inputs():
    ids, mems = _data()
    return (torch.from_numpy(ids), torch.from_numpy(mems)), {}


def loss(output):
    # output = (logits [2, 6, 40], new_mems); the memory carries no gradient
    return (output[0] ** 2).mean()

"""Hand-written port, paddle side: a tiny attention-based GRU encoder-decoder for translation (written by "person A").

Inputs (positional, batch-first, int64): source ids `src` [2, 7] and the teacher-forced target
input ids `trg` [2, 5] (BOS = 1 first, then the gold tokens shifted right; numpy rng seed 35,
ids 3..19). Output: logits [2, 5, 20], one row per target position. No padding, no mask.

Sizes: source and target vocab 20, embedding 12, encoder GRU 16 per direction (outputs 32),
decoder GRU 16, attention size 16.

Model (Bahdanau additive attention, teacher forcing over the fixed target length):
  encoder   e = Emb_src(src); a bidirectional GRU over e -> H [B, 7, 32] = [fwd | bwd] per step;
            last = [fwd final state | bwd final state] [B, 32]
  bridge    s_0 = tanh(W_b last + b_b) [B, 16]
  step t    y = Emb_trg(trg[:, t]) [B, 12]
            score_j = v . tanh(W_q s_{t-1} + W_k H_j + b_k); a = softmax_j(score); c = sum_j a_j H_j
            s_t = GRU([y | c], s_{t-1})   (torch's GRU equations: r, z, n = tanh(W_in x + b_in +
            r * (W_hn s + b_hn)), s_t = (1 - z) * n + z * s_{t-1})
            logits_t = W_o [s_t | c | y] + b_o

Paddle idioms on this side (PaddleNLP seq2seq example flavour):
- root `Seq2SeqAttnModel` registers `encoder`, `bridge` Linear(32, 16), `decoder`; tanh inline.
- `Seq2SeqEncoder`: `embedder`, and TWO unidirectional nn.GRU(12, 16): `fwd_gru` on the
  embeddings and `bwd_gru` on the time-reversed embeddings (paddle.flip), whose outputs are flipped
  back and concatenated after the forward ones. Returns (outputs [B, 7, 32], last [B, 32]).
- `Seq2SeqDecoder` is called ONCE with the whole target: `embedder` (all 5 steps at once),
  `attention`, `cell`, `output_layer` Linear(60, 20); the 5-step loop is inside its forward and
  the attention keys W_k H + b_k are computed ONCE before the loop by calling
  `attention.key_proj` directly.
- `AdditiveAttention`: SEPARATE projections `query_proj` Linear(16, 16, no bias) and `key_proj`
  Linear(32, 16), and `v` a plain [16] parameter (create_parameter); forward(query, keys, values)
  returns (context [B, 32], weights [B, 7]).
- `GRUDecoderCell` is hand-written: `input_proj` Linear(44, 48) and `hidden_proj` Linear(16, 48)
  whose 48 output columns hold the gates in the order [z | r | n] (update, reset, candidate; the
  Keras order), split with paddle.split. (paddle's and torch's own GRU weights hold [r | z | n].)
- model() gives the embeddings N(0, 1), `v` N(0, 1) and every Linear bias N(0, 0.2) (seeded).

The torch side (port_gru_nmt_torch.py) was written independently (bentrevett pytorch-seq2seq
style): sequence-first tensors inside, one bidirectional nn.GRU with the bridge inside the
encoder, a decoder module called once per step around a one-step nn.GRU, and ONE packed attention
Linear over [s | H_j].

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gru_update_flip      -> GRUDecoderCell mixes the states the other way round:
                                 s_t = z * n + (1 - z) * s_{t-1}
  paddle_bwd_not_flipped_back -> the encoder forgets to flip the backward GRU's outputs back to
                                 source order before the concat (the final states are unaffected)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, EMB, HID, ATTN = 20, 12, 16, 16
BATCH, SRC_LEN, TRG_LEN = 2, 7, 5
BOS = 1
OWN_BUGS = {"paddle_gru_update_flip", "paddle_bwd_not_flipped_back"}
OTHER_BUGS = {"torch_rnn_input_order", "torch_attn_softmax_bf16"}


class Seq2SeqEncoder(nn.Layer):
    def __init__(self, vocab_size, embed_dim, hidden_size, flip_back=True):
        super().__init__()
        self.flip_back = flip_back
        self.embedder = nn.Embedding(vocab_size, embed_dim)
        self.fwd_gru = nn.GRU(embed_dim, hidden_size)
        self.bwd_gru = nn.GRU(embed_dim, hidden_size)

    def forward(self, src):
        emb = self.embedder(src)  # [B, S, E]
        fwd_out, fwd_h = self.fwd_gru(emb)
        bwd_out, bwd_h = self.bwd_gru(paddle.flip(emb, axis=[1]))
        if self.flip_back:
            bwd_out = paddle.flip(bwd_out, axis=[1])
        outputs = paddle.concat([fwd_out, bwd_out], axis=-1)  # [B, S, 2H]
        last = paddle.concat([fwd_h[-1], bwd_h[-1]], axis=-1)  # [B, 2H]
        return outputs, last


class AdditiveAttention(nn.Layer):
    def __init__(self, query_size, key_size, attn_size):
        super().__init__()
        self.query_proj = nn.Linear(query_size, attn_size, bias_attr=False)
        self.key_proj = nn.Linear(key_size, attn_size)
        self.v = self.create_parameter([attn_size], default_initializer=nn.initializer.Normal(0.0, 1.0))

    def forward(self, query, keys, values):
        # query [B, Hd]; keys [B, S, A] (already projected); values [B, S, 2H]
        energy = paddle.tanh(self.query_proj(query).unsqueeze(1) + keys)
        scores = paddle.matmul(energy, self.v)  # [B, S]
        weights = F.softmax(scores, axis=-1)
        context = paddle.matmul(weights.unsqueeze(1), values).squeeze(1)  # [B, 2H]
        return context, weights


class GRUDecoderCell(nn.Layer):
    """GRU cell with gates packed [z | r | n] (reset applied after the hidden projection)."""

    def __init__(self, input_size, hidden_size, flip_update=False):
        super().__init__()
        self.flip_update = flip_update
        self.input_proj = nn.Linear(input_size, 3 * hidden_size)
        self.hidden_proj = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, inputs, state):
        x_z, x_r, x_n = paddle.split(self.input_proj(inputs), 3, axis=-1)
        h_z, h_r, h_n = paddle.split(self.hidden_proj(state), 3, axis=-1)
        z = F.sigmoid(x_z + h_z)
        r = F.sigmoid(x_r + h_r)
        n = paddle.tanh(x_n + r * h_n)
        if self.flip_update:
            return z * n + (1.0 - z) * state
        return (1.0 - z) * n + z * state


class Seq2SeqDecoder(nn.Layer):
    def __init__(self, vocab_size, embed_dim, hidden_size, enc_size, attn_size, flip_update=False):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, embed_dim)
        self.attention = AdditiveAttention(hidden_size, enc_size, attn_size)
        self.cell = GRUDecoderCell(embed_dim + enc_size, hidden_size, flip_update)
        self.output_layer = nn.Linear(hidden_size + enc_size + embed_dim, vocab_size)

    def forward(self, trg, enc_outputs, state):
        keys = self.attention.key_proj(enc_outputs)  # [B, S, A], once for all steps
        trg_emb = self.embedder(trg)  # [B, T, E]
        logits = []
        for t in range(trg.shape[1]):
            y = trg_emb[:, t]
            context, _ = self.attention(state, keys, enc_outputs)
            state = self.cell(paddle.concat([y, context], axis=-1), state)
            logits.append(self.output_layer(paddle.concat([state, context, y], axis=-1)))
        return paddle.stack(logits, axis=1)  # [B, T, V]


class Seq2SeqAttnModel(nn.Layer):
    def __init__(self, flip_update=False, flip_back=True):
        super().__init__()
        self.encoder = Seq2SeqEncoder(VOCAB, EMB, HID, flip_back)
        self.bridge = nn.Linear(2 * HID, HID)
        self.decoder = Seq2SeqDecoder(VOCAB, EMB, HID, 2 * HID, ATTN, flip_update)

    def forward(self, src, trg):
        enc_outputs, last = self.encoder(src)
        state = paddle.tanh(self.bridge(last))
        return self.decoder(trg, enc_outputs, state)


def _trained_look(m):
    rng = np.random.default_rng(135)
    for emb in (m.encoder.embedder, m.decoder.embedder):
        emb.weight.set_value(rng.normal(0.0, 1.0, emb.weight.shape).astype("float32"))
    m.decoder.attention.v.set_value(rng.normal(0.0, 1.0, [ATTN]).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gru_nmt paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Seq2SeqAttnModel(flip_update=bug == "paddle_gru_update_flip",
                         flip_back=bug != "paddle_bwd_not_flipped_back")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(35)
    src = rng.integers(3, VOCAB, size=(BATCH, SRC_LEN)).astype("int64")
    trg = rng.integers(3, VOCAB, size=(BATCH, TRG_LEN)).astype("int64")
    trg[:, 0] = BOS
    return src, trg


def inputs():
    src, trg = _ids()
    return (paddle.to_tensor(src), paddle.to_tensor(trg)), {}


def loss(output):
    # logits [2, 5, 20]
    return (output**2).mean()

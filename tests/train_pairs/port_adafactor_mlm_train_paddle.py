"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny masked-language
model encoder (BERT-like, post-LN) trained 3 steps with a hand-written Adafactor.

    MaskedLMEncoder: registers mlm_head (MLMHead: transform Linear 32 -> 32, norm LayerNorm,
        output_bias [96] by create_parameter; the decoder is an inline matmul with the word
        embedding, tied), word_embed (Embedding 96 x 32), pos_embed (create_parameter [16, 32] on
        the root, sliced), embed_norm (LayerNorm), embed_dropout (Dropout 0.1),
        encoder (paddle's built-in nn.TransformerEncoder of 2 nn.TransformerEncoderLayer: self_attn
        = nn.MultiHeadAttention with q_proj/k_proj/v_proj/out_proj, k_proj's bias removed after
        construction (bias = None), attention-probability dropout inline F.dropout; linear1, dropout (activation dropout, p 0), linear2, norm1, norm2,
        dropout1, dropout2; activation F.gelu functional, post-LN)
    forward(input_ids [B, S] int64, attention_mask [B, S] int64) -> logits [B, S, 96]

Config: vocab 96 (0 [PAD], 1 [CLS], 2 [SEP], 3 [MASK]), hidden 32, 2 layers, 4 heads, FFN 64,
max positions 16, hidden dropout 0.1, attention dropout 0.1, no activation dropout, LayerNorm eps
1e-12, exact GELU. The padding mask enters as an additive float mask (1 - mask) * -1e4, [B, 1, 1, S].
Data: inputs(step): batch 4 x 12 from default_rng(13400 + step): lengths 12, 12, 10, 7 ([CLS] ...
[SEP] then [PAD]), 20 % of the ordinary tokens selected (at least one per row), 80/10/10 -> [MASK] /
random token / kept; labels = the original id at the selected positions, -100 elsewhere (kept by the
spec for loss()).
Loss: cross entropy over the selected positions only: per-token losses (reduction "none",
ignore_index -100) summed and divided by the number of selected positions. paddle's
F.cross_entropy(..., ignore_index=-100) with its default reduction "mean" divides by ALL positions
(ignored ones included; checked on paddle 3.3.1), not by the selected ones as torch does.
Optimizer: Adafactor written by hand (paddle ships none): lr 1e-3 fixed (relative step off, no
parameter scaling), eps1 1e-30 (added to g^2), clip threshold 1.0 (update divided by
max(1, RMS(update))), decay rate -0.8 (beta2_t = 1 - t^-0.8, t counted from 1), no first moment, no
weight decay; second moments factored for tensors of 2 or more dims (row and column means of
g^2 + eps1, V = R C / mean(R)), full for 1-D tensors.
Init (person A, "trained-looking"): numpy default_rng(134) by parameter name: matrices N(0, 0.15)
(word embedding N(0, 0.3)), biases N(0, 0.05), LayerNorm scales 1 + N(0, 0.1), output bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_ce_mean_all        -> the loss is F.cross_entropy(logits, labels, ignore_index=-100) with
                               paddle's default "mean": divided by all 48 positions, not by the
                               selected ones (torch semantics assumed)
  paddle_act_dropout_default -> nn.TransformerEncoderLayer built without act_dropout=0.0: paddle
                               then uses `dropout` (0.1) after the FFN activation too
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ce_mean_all", "paddle_act_dropout_default"} | {"torch_step_off_by_one"}  # torch side's, ignored
VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 96, 32, 2, 4, 64, 16
PAD, CLS, SEP, MASK = 0, 1, 2, 3
HIDDEN_DROPOUT, ATTN_DROPOUT, LN_EPS = 0.1, 0.1, 1e-12
BATCH, SEQ, LENGTHS, MLM_PROB = 4, 12, (12, 12, 10, 7), 0.2
LR, EPS1, CLIP_THRESHOLD, DECAY_RATE = 1e-3, 1e-30, 1.0, -0.8

_LABELS = {}


def make_batch(step):
    """(input_ids, attention_mask, labels) as int64 numpy arrays, the MLM collator of person A."""
    rng = np.random.default_rng(13400 + step)
    ids = np.full((BATCH, SEQ), PAD, dtype="int64")
    for row, n in enumerate(LENGTHS):
        ids[row, 0] = CLS
        ids[row, 1:n - 1] = rng.integers(4, VOCAB, n - 2)
        ids[row, n - 1] = SEP
    ordinary = ids >= 4
    u = rng.random((BATCH, SEQ))
    picked = (u < MLM_PROB) & ordinary
    for row in range(BATCH):
        if not picked[row].any():  # at least one prediction per row
            picked[row, np.argmin(np.where(ordinary[row], u[row], 2.0))] = True
    how = rng.random((BATCH, SEQ))
    rand_tok = rng.integers(4, VOCAB, (BATCH, SEQ))
    inp = ids.copy()
    inp[picked & (how < 0.8)] = MASK
    swap = picked & (how >= 0.8) & (how < 0.9)
    inp[swap] = rand_tok[swap]
    labels = np.where(picked, ids, -100).astype("int64")
    return inp, (ids != PAD).astype("int64"), labels


class MLMHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.transform = nn.Linear(HIDDEN, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.output_bias = self.create_parameter([VOCAB], is_bias=True)

    def forward(self, h, word_weight):
        h = self.norm(F.gelu(self.transform(h)))
        return paddle.matmul(h, word_weight, transpose_y=True) + self.output_bias


class MaskedLMEncoder(nn.Layer):
    def __init__(self, act_dropout_default=False):
        super().__init__()
        self.mlm_head = MLMHead()
        self.word_embed = nn.Embedding(VOCAB, HIDDEN)
        self.pos_embed = self.create_parameter([MAX_POS, HIDDEN])
        self.embed_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.embed_dropout = nn.Dropout(HIDDEN_DROPOUT)
        kw = dict(dropout=HIDDEN_DROPOUT, activation="gelu", attn_dropout=ATTN_DROPOUT, layer_norm_eps=LN_EPS)
        if not act_dropout_default:
            kw["act_dropout"] = 0.0
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(HIDDEN, HEADS, FFN, **kw), LAYERS)
        for layer in self.encoder.layers:
            # no key bias (as Whisper): it adds the same number to every score of a query's row, the
            # softmax cancels it, its exact gradient is 0 - only rounding noise, which Adafactor's
            # g / sqrt(g^2 + 1e-30) would turn into full-size updates of random sign
            layer.self_attn.k_proj.bias = None

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        x = self.word_embed(input_ids) + self.pos_embed[:seq]
        x = self.embed_dropout(self.embed_norm(x))
        add_mask = ((1.0 - attention_mask.astype(x.dtype)) * -1e4).unsqueeze([1, 2])
        x = self.encoder(x, src_mask=add_mask)
        return self.mlm_head(x, self.word_embed.weight)


def _init(m):
    rng = np.random.default_rng(134)
    for name, p in m.named_parameters():
        if name == "word_embed.weight":
            v = rng.normal(0.0, 0.3, p.shape)
        elif p.ndim >= 2:
            v = rng.normal(0.0, 0.15, p.shape)
        elif name == "mlm_head.output_bias":
            v = rng.normal(0.0, 0.1, p.shape)
        elif name.endswith("bias"):
            v = rng.normal(0.0, 0.05, p.shape)
        else:  # LayerNorm scales
            v = 1.0 + rng.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype("float32"))


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = MaskedLMEncoder(act_dropout_default=(b == "paddle_act_dropout_default"))
    _init(m)
    m.train()
    return m


def inputs(step=0):
    inp, mask, labels = make_batch(step)
    _LABELS["labels"] = labels
    return (paddle.to_tensor(inp), paddle.to_tensor(mask)), {}


def loss(output):
    logits = output.reshape([-1, VOCAB])
    labels = paddle.to_tensor(_LABELS["labels"]).reshape([-1])
    if bug(BUGS) == "paddle_ce_mean_all":
        return F.cross_entropy(logits, labels, ignore_index=-100)
    per_token = F.cross_entropy(logits, labels, ignore_index=-100, reduction="none")
    n_pred = int((_LABELS["labels"] != -100).sum())
    return per_token.sum() / n_pred


class Adafactor(paddle.optimizer.Optimizer):
    """Adafactor (Shazeer & Stern 2018), no momentum, fixed step size, written from the paper."""

    def __init__(self, parameters, learning_rate=LR, eps1=EPS1, clip_threshold=CLIP_THRESHOLD,
                 decay_rate=DECAY_RATE):
        super().__init__(learning_rate=learning_rate, parameters=parameters)
        self._eps1, self._clip, self._decay = eps1, clip_threshold, decay_rate
        self._moments = {}

    @paddle.no_grad()
    def step(self):
        lr = self.get_lr()
        for p in self._parameter_list:
            if p.stop_gradient or p.grad is None:
                continue
            g = p.grad
            st = self._moments.setdefault(p.name, {"t": 0})
            st["t"] += 1
            rho = 1.0 - st["t"] ** self._decay  # beta2_t; 0 at t = 1
            g2 = g * g + self._eps1
            if g.ndim >= 2:
                row = g2.mean(axis=-1)
                col = g2.mean(axis=-2)
                if "row" in st:
                    row = rho * st["row"] + (1.0 - rho) * row
                    col = rho * st["col"] + (1.0 - rho) * col
                st["row"], st["col"] = row, col
                v_hat = row.unsqueeze(-1) * col.unsqueeze(-2) / row.mean(axis=-1, keepdim=True).unsqueeze(-1)
            else:
                v_hat = g2 if "v" not in st else rho * st["v"] + (1.0 - rho) * g2
                st["v"] = v_hat
            u = g / paddle.sqrt(v_hat)
            rms = paddle.sqrt(paddle.mean(u * u))
            u = u / paddle.clip(rms / self._clip, min=1.0)
            p.set_value(p - lr * u)


def optimizer(model):
    return Adafactor([p for p in model.parameters() if not p.stop_gradient])

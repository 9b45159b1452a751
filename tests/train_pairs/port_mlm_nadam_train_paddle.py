"""Hand-written port in TRAINING mode, paddle side (written by "person A"): one masked-language-model
pretraining step of a tiny pre-LN BERT-style encoder, 3 steps with dynamic masking, NAdam.

    TinyMaskedLM: registers embeddings (MLMEmbeddings: word_embeddings [64, 32], position_embeddings
        [16, 32], dropout p 0.1), encoder (paddle.nn.TransformerEncoder of 2 TransformerEncoderLayer
        (d_model 32, 4 heads, FFN 64, gelu, normalize_before=True, dropout 0.1, attn_dropout 0.1,
        act_dropout 0.0, bias_attr=[False, None]: attention projections without biases) and a final
        LayerNorm `norm`), cls (MaskedLMHead: transform Linear 32 -> 32, gelu, layer_norm, decoder
        weight = THE word-embedding parameter (shared, paddlenlp's BertLMPredictionHead way),
        decoder_bias [64])
    forward(input_ids [4, 12], attention_mask [4, 12] bool) -> logits [4, 12, 64]

Data: inputs(step): default_rng(3400 + step): token ids in 4..63 (0 = [PAD], 1 = [MASK]); sample 3
is padded after 9 tokens; 2 positions per sample selected for prediction (among the real tokens),
80 % -> [MASK], 10 % -> a random token, 10 % kept (BERT's rule, drawn per step: dynamic masking).
Loss (fairseq's way): labels = original ids at the selected positions, the [PAD] id 0 elsewhere;
F.cross_entropy(logits [48, 64], labels [48], ignore_index=PAD_ID) (mean over the 8 selected: paddle
divides by the count of labels != ignore_index only when ignore_index >= 0, see the bug below).
Optimizer: paddle.optimizer.NAdam(learning_rate 2e-3, beta1 0.9, beta2 0.999, epsilon 1e-8,
momentum_decay 4e-3), no weight decay, no clipping.
Init (person A): paddle.seed(34) then every parameter redrawn (_train_common.randomize_paddle:
matrices N(0, 0.2), biases N(0, 0.1), LayerNorm scales 1 + N(0, 0.1)); the tied table drawn once.

PADIFF_BUG (this side only):
  paddle_ignore_minus100 -> labels -100 at the unselected positions and ignore_index=-100 (torch's
              habit): paddle 3.3.1's cross_entropy (reduction "mean", no weight) divides by the
              number of labels != ignore_index only `if ignore_index >= 0`; with -100 it takes
              mean_all over all 48 positions (the 40 ignored ones count as 0): the loss is 8/48 of
              the masked-token mean
  paddle_act_dropout -> TransformerEncoderLayer built without act_dropout=0.0: paddle falls back to
              `dropout` (0.1) for the dropout after the FFN activation, which the original has not
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_ignore_minus100", "paddle_act_dropout"} | {"torch_nadam_beta2"}  # the torch side's, ignored here
VOCAB, HIDDEN, HEADS, FFN, LAYERS, MAX_POS = 64, 32, 4, 64, 2, 16
BATCH, SEQ, N_PRED = 4, 12, 2
PAD_ID, MASK_ID, FIRST_REAL = 0, 1, 4
DROPOUT = 0.1
LR, BETA1, BETA2, EPS, MOMENTUM_DECAY = 2e-3, 0.9, 0.999, 1e-8, 4e-3
_LABELS = {}


def make_batch(step):
    """(input ids, attention mask, original ids, selected positions) as numpy, BERT's 80/10/10 masking."""
    rng = np.random.default_rng(3400 + step)
    ids = rng.integers(FIRST_REAL, VOCAB, (BATCH, SEQ)).astype("int64")
    valid = np.ones((BATCH, SEQ), dtype=bool)
    valid[3, 9:] = False
    ids[~valid] = PAD_ID
    sel = np.zeros((BATCH, SEQ), dtype=bool)
    for b in range(BATCH):
        sel[b, rng.choice(np.flatnonzero(valid[b]), N_PRED, replace=False)] = True
    r = rng.random((BATCH, SEQ))
    rand_tok = rng.integers(FIRST_REAL, VOCAB, (BATCH, SEQ)).astype("int64")
    inp = ids.copy()
    inp[sel & (r < 0.8)] = MASK_ID
    swap = sel & (r >= 0.8) & (r < 0.9)
    inp[swap] = rand_tok[swap]
    return inp, valid, ids, sel


class MLMEmbeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)
        self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, input_ids):
        pos = paddle.arange(input_ids.shape[1], dtype="int64").unsqueeze(0)
        return self.dropout(self.word_embeddings(input_ids) + self.position_embeddings(pos))


class MaskedLMHead(nn.Layer):
    def __init__(self, embedding_weights):
        super().__init__()
        self.transform = nn.Linear(HIDDEN, HIDDEN)
        self.layer_norm = nn.LayerNorm(HIDDEN)
        self.decoder_weight = embedding_weights  # tied: the word-embedding parameter itself
        self.decoder_bias = self.create_parameter([VOCAB], is_bias=True)

    def forward(self, hidden):
        h = self.layer_norm(F.gelu(self.transform(hidden)))
        return paddle.matmul(h, self.decoder_weight, transpose_y=True) + self.decoder_bias


class TinyMaskedLM(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embeddings = MLMEmbeddings()
        extra = {} if bug(BUGS) == "paddle_act_dropout" else {"act_dropout": 0.0}
        layer = nn.TransformerEncoderLayer(HIDDEN, HEADS, FFN, dropout=DROPOUT, activation="gelu",
                                           attn_dropout=DROPOUT, normalize_before=True,
                                           bias_attr=[False, None], **extra)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, norm=nn.LayerNorm(HIDDEN))
        self.cls = MaskedLMHead(self.embeddings.word_embeddings.weight)

    def forward(self, input_ids, attention_mask):
        x = self.embeddings(input_ids)
        mask = attention_mask.unsqueeze([1, 2])  # [B, 1, 1, T], True = attend
        return self.cls(self.encoder(x, src_mask=mask))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(34)
    m = TinyMaskedLM()
    randomize_paddle(m, std=0.2, seed=34)
    m.train()
    return m


def inputs(step=0):
    inp, valid, ids, sel = make_batch(step)
    _LABELS.update(ids=ids, sel=sel)
    return (paddle.to_tensor(inp), paddle.to_tensor(valid)), {}


def loss(output):
    ignore = -100 if bug(BUGS) == "paddle_ignore_minus100" else PAD_ID
    labels = paddle.to_tensor(np.where(_LABELS["sel"], _LABELS["ids"], ignore).astype("int64"))
    return F.cross_entropy(output.reshape([-1, VOCAB]), labels.reshape([-1]), ignore_index=ignore)


def optimizer(model):
    return paddle.optimizer.NAdam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                  momentum_decay=MOMENTUM_DECAY, parameters=model.parameters())

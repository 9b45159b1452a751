"""Hand-written port in TRAINING mode, paddle side (written by "person A"): LoRA fine-tuning of a
tiny pre-norm transformer classifier, 3 steps.

    word_emb Embedding(64, 32) + pos_emb [8, 32] (create_parameter), emb_drop (0.1)
    blocks: LayerList of 2 Block: ln1, attn (SelfAttention), res_drop (0.1), ln2, ffn_in 32->64,
            exact GELU, ffn_out 64->32, ffn_drop (0.1)
    SelfAttention (4 heads, head dim 8): q_proj, k_proj, v_proj, out_proj (Linear, weight [in, out]),
            and the LoRA adapters as SIBLING layers of the projections they adapt (the paddlenlp
            "merge later" layout written by hand): lora_dropout (0.1, ONE Dropout called twice:
            for q then for v), lora_A_q = Linear(32, 4, no bias) ([in, r]), lora_B_q = Linear(4, 32,
            no bias) ([r, out]), lora_A_v, lora_B_v;
            q = q_proj(x) + lora_B_q(lora_A_q(lora_dropout(x))) * scaling, same for v;
            scaling = lora_alpha / r = 8 / 4 = 2
    ln_f, mean over the 8 positions, classifier Linear(32, 3)
    LayerNorms are FrozenLayerNorm: F.layer_norm without affine, then * weight + bias (a workaround:
            paddle 3.3.1's LayerNorm kernel returns a wrong input gradient when its weight is frozen)
Dropout calls with p > 0 per forward: emb_drop, then per block lora q, lora v, res_drop, ffn_drop: 9.

FROZEN base: every tensor except the LoRA adapters and the classifier has stop_gradient=True
(embeddings, LayerNorms, q/k/v/out, FFN). Trainable: 8 LoRA matrices + classifier weight and bias.
Both A and B are drawn at random (B is NOT zero: step 0 already goes through the adapters).

Data: ids [2, 8] from default_rng(41) (vocab 64), labels [1, 2]; cross-entropy; the same batch
every step. Optimizer: AdamW(lr 1e-2, beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.01) on
the trainable tensors, decay on ndim >= 2 only (apply_decay_param_fun on p.name): LoRA matrices and
the classifier weight; no clipping.
Weights: person A's init (paddle.seed(0)): matrices and embeddings N(0, 0.2), biases N(0, 0.1),
LayerNorm scales 1 + N(0, 0.1); LoRA A N(0, 0.2), B N(0, 0.2).

PADIFF_BUG (this side only):
  paddle_adam_l2 -> paddle.optimizer.Adam(..., weight_decay=0.01): paddle's Adam turns a float
              weight_decay into L2Decay, added to the gradient before the moments (coupled, and on
              every trainable tensor), instead of AdamW's decoupled decay on the matrices
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_adam_l2"} | {"lora_drop_default", "bias_all"}  # the torch side's, ignored here
VOCAB, SEQ, HID, HEADS, FFN, LAYERS, LABELS = 64, 8, 32, 4, 64, 2, 3
R, ALPHA, LORA_DROP, DROP = 4, 8, 0.1, 0.1
LR, BETA1, BETA2, EPS, WD = 1e-2, 0.9, 0.999, 1e-8, 0.01

IDS = np.random.default_rng(41).integers(0, VOCAB, (2, SEQ)).astype("int64")
LABEL_IDS = np.array([1, 2], "int64")


class FrozenLayerNorm(nn.Layer):
    """LayerNorm for the frozen base, affine part written out. paddle 3.3.1 (CPU): nn.LayerNorm /
    F.layer_norm with a stop_gradient weight return a WRONG gradient for their input (1.2 abs on
    a [2, 8, 32] test against the same layer with a trainable weight), so the weight and bias are
    applied outside the kernel."""

    def __init__(self, dim, epsilon=1e-5):
        super().__init__()
        self.dim, self.epsilon = dim, epsilon
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))
        self.bias = self.create_parameter([dim], is_bias=True)

    def forward(self, x):
        return F.layer_norm(x, [self.dim], epsilon=self.epsilon) * self.weight + self.bias


class SelfAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HID, HID)
        self.k_proj = nn.Linear(HID, HID)
        self.v_proj = nn.Linear(HID, HID)
        self.out_proj = nn.Linear(HID, HID)
        self.lora_dropout = nn.Dropout(LORA_DROP)
        self.lora_A_q = nn.Linear(HID, R, bias_attr=False)
        self.lora_B_q = nn.Linear(R, HID, bias_attr=False)
        self.lora_A_v = nn.Linear(HID, R, bias_attr=False)
        self.lora_B_v = nn.Linear(R, HID, bias_attr=False)
        self.scaling = ALPHA / R

    def _heads(self, t):
        b, s, _ = t.shape
        return t.reshape([b, s, HEADS, HID // HEADS]).transpose([0, 2, 1, 3])

    def forward(self, x):
        q = self.q_proj(x) + self.lora_B_q(self.lora_A_q(self.lora_dropout(x))) * self.scaling
        k = self.k_proj(x)
        v = self.v_proj(x) + self.lora_B_v(self.lora_A_v(self.lora_dropout(x))) * self.scaling
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) / (HID // HEADS) ** 0.5, axis=-1)
        o = paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([x.shape[0], x.shape[1], HID])
        return self.out_proj(o)


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.ln1 = FrozenLayerNorm(HID)
        self.attn = SelfAttention()
        self.res_drop = nn.Dropout(DROP)
        self.ln2 = FrozenLayerNorm(HID)
        self.ffn_in = nn.Linear(HID, FFN)
        self.ffn_out = nn.Linear(FFN, HID)
        self.ffn_drop = nn.Dropout(DROP)

    def forward(self, x):
        x = x + self.res_drop(self.attn(self.ln1(x)))
        return x + self.ffn_drop(self.ffn_out(F.gelu(self.ffn_in(self.ln2(x)))))


class LoRAClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_emb = nn.Embedding(VOCAB, HID)
        self.pos_emb = self.create_parameter([SEQ, HID])
        self.emb_drop = nn.Dropout(DROP)
        self.blocks = nn.LayerList([Block() for _ in range(LAYERS)])
        self.ln_f = FrozenLayerNorm(HID)
        self.classifier = nn.Linear(HID, LABELS)

    def forward(self, ids):
        x = self.emb_drop(self.word_emb(ids) + self.pos_emb[: ids.shape[1]])
        for blk in self.blocks:
            x = blk(x)
        return self.classifier(self.ln_f(x).mean(axis=1))


def _init(m):
    paddle.seed(0)
    for name, p in m.named_parameters():
        if p.ndim >= 2:
            v = paddle.normal(0.0, 0.2, p.shape)
        elif name.endswith("bias"):
            v = paddle.normal(0.0, 0.1, p.shape)
        else:
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def _freeze_base(m):
    for name, p in m.named_parameters():
        p.stop_gradient = not (".lora_" in name or name.startswith("classifier."))


def model():
    bug(BUGS)
    paddle.seed(0)
    m = LoRAClassifier()
    _init(m)
    _freeze_base(m)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(IDS),), {}


def loss(output):
    return F.cross_entropy(output, paddle.to_tensor(LABEL_IDS))


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    if bug(BUGS) == "paddle_adam_l2":
        return paddle.optimizer.Adam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                     parameters=params, weight_decay=WD)
    decay = {p.name for p in params if p.ndim >= 2}
    return paddle.optimizer.AdamW(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                  weight_decay=WD, apply_decay_param_fun=lambda name: name in decay)

"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny language model
on a Simple Recurrent Unit (SRU, Lei et al.), the recurrence written as a Python loop over time,
trained 3 steps with SGD + momentum and global-norm clipping (0.25).

    word_emb Embedding(50, 16), lm_head Linear(16, 50) (registered before the recurrent layers,
    called last), emb_drop (0.1), layer_drop (0.2, between the two SRU layers), out_drop (0.1),
    layers: LayerList of 2 SRULayer(16)
    SRULayer (hidden = input = 16, so the highway term uses the layer input x):
        three projections w_x, w_f, w_r = Linear(16, 16, no bias) (weight [in, out]),
        v_f, v_r (the cell-state peepholes) and b_f, b_r: four [16] create_parameter tensors
        for t in 0..T-1 (c_0 = 0):
            f_t = sigmoid(w_f x_t + v_f * c_{t-1} + b_f)
            r_t = sigmoid(w_r x_t + v_r * c_{t-1} + b_r)
            c_t = f_t * c_{t-1} + (1 - f_t) * w_x x_t
            h_t = r_t * c_t + (1 - r_t) * x_t
    forward(ids): emb_drop(word_emb) -> layers.0 -> layer_drop -> layers.1 -> out_drop -> lm_head
Dropout calls with p > 0 per forward: emb_drop, layer_drop, out_drop (3, all [2, 8, 16]).

Data: ids [2, 8] from default_rng(41) (vocab 50); loss = next-token cross-entropy of logits[:, :-1]
against ids[:, 1:]; the same batch every step.
Optimizer: paddle.optimizer.Momentum(learning_rate=0.5, momentum=0.9) (velocity = 0.9 v + g,
p -= lr v; no weight decay, no nesterov) with grad_clip=ClipGradByGlobalNorm(0.25).
Weights: person A's init (paddle.seed(0)): embedding N(0, 1), matrices N(0, 0.3), v_f/v_r N(0, 0.3),
b_f/b_r and the head bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_rnn_dropout -> the between-layer dropout built from cfg["rnn_dropout"] (0.0: the SRU's
              variational dropout on the projection input, unused here) instead of cfg["dropout"]
              (0.2, the SRU's between-layer dropout): the two SRU arguments mixed up
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_rnn_dropout"} | {"clip_value", "dampening"}  # the torch side's, ignored here
CFG = {"vocab": 50, "hidden": 16, "layers": 2, "emb_dropout": 0.1, "dropout": 0.2, "rnn_dropout": 0.0,
       "out_dropout": 0.1}
LR, MOMENTUM, CLIP = 0.5, 0.9, 0.25

IDS = np.random.default_rng(41).integers(0, CFG["vocab"], (2, 8)).astype("int64")


class SRULayer(nn.Layer):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.w_x = nn.Linear(hidden, hidden, bias_attr=False)
        self.w_f = nn.Linear(hidden, hidden, bias_attr=False)
        self.w_r = nn.Linear(hidden, hidden, bias_attr=False)
        self.v_f = self.create_parameter([hidden])
        self.v_r = self.create_parameter([hidden])
        self.b_f = self.create_parameter([hidden], is_bias=True)
        self.b_r = self.create_parameter([hidden], is_bias=True)

    def forward(self, x):
        x_tilde, f_in, r_in = self.w_x(x), self.w_f(x), self.w_r(x)
        c = paddle.zeros([x.shape[0], self.hidden], dtype=x.dtype)
        hs = []
        for t in range(x.shape[1]):
            f = F.sigmoid(f_in[:, t] + self.v_f * c + self.b_f)
            r = F.sigmoid(r_in[:, t] + self.v_r * c + self.b_r)
            c = f * c + (1.0 - f) * x_tilde[:, t]
            hs.append(r * c + (1.0 - r) * x[:, t])
        return paddle.stack(hs, axis=1)


class SRULanguageModel(nn.Layer):
    def __init__(self, cfg, between_p):
        super().__init__()
        self.word_emb = nn.Embedding(cfg["vocab"], cfg["hidden"])
        self.lm_head = nn.Linear(cfg["hidden"], cfg["vocab"])
        self.emb_drop = nn.Dropout(cfg["emb_dropout"])
        self.layer_drop = nn.Dropout(between_p)
        self.out_drop = nn.Dropout(cfg["out_dropout"])
        self.layers = nn.LayerList([SRULayer(cfg["hidden"]) for _ in range(cfg["layers"])])

    def forward(self, ids):
        x = self.emb_drop(self.word_emb(ids))
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = self.layer_drop(x)
        return self.lm_head(self.out_drop(x))


def _init(m):
    paddle.seed(0)
    for name, p in m.named_parameters():
        if name.startswith("word_emb"):
            v = paddle.normal(0.0, 1.0, p.shape)
        elif p.ndim >= 2 or name.endswith(("v_f", "v_r")):
            v = paddle.normal(0.0, 0.3, p.shape)
        else:
            v = paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = SRULanguageModel(CFG, CFG["rnn_dropout"] if b == "paddle_rnn_dropout" else CFG["dropout"])
    _init(m)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(IDS),), {}


def loss(output):
    ids = paddle.to_tensor(IDS)
    return F.cross_entropy(output[:, :-1].reshape([-1, CFG["vocab"]]), ids[:, 1:].reshape([-1]))


def optimizer(model):
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=model.parameters(),
                                     grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP))

"""Hand-written port, paddle side: Slot Attention (Locatello et al. 2020) over a tiny CNN feature map (written by "person A").

Inputs (positional): `image` [2, 3, 16, 16] (NCHW, numpy rng seed 31, standard normal) and
`noise` [2, 4, 16] (numpy rng seed 32, standard normal), the Gaussian draw of the slot
initialisation, passed in so that the forward is deterministic. Output: per-slot property
predictions [2, 4, 8].

Network (the object-discovery encoder of the paper, shrunk):
  CNN     conv 5x5 (3 -> 16, pad 2) -> relu -> conv 5x5 (16 -> 16, pad 2) -> relu
  pos     soft position embedding: grid [H, W, 4] = (y, x, 1 - y, 1 - x) with y, x =
          linspace(0, 1, 16) (row index first), Dense(4 -> 16), added channels-last
  flatten [B, 256, 16], LayerNorm, Linear(16, 16) -> relu -> Linear(16, 16)
  slots   slots = mu + exp(log_sigma) * noise, 4 slots of 16
  3 iterations of:
          prev = slots; q = to_q(LN(slots)); k = to_k(LN(inputs)), v = to_v(LN(inputs))
          (k, v computed once, before the loop)
          attn = softmax over SLOTS of q k^T / sqrt(16), + 1e-8, renormalised over inputs
          updates = attn v
          slots = GRUCell(updates, prev)
          slots = slots + MLP(LN(slots))   (MLP 16 -> 32 -> relu -> 16)
  head    Linear(16, 8) per slot

Paddle idioms on this side:
- root `SlotAttentionModel`: `encoder` (`CNNEncoder`), `feat_norm` (nn.LayerNorm),
  `feat_fc1`, `feat_fc2` (nn.Linear, F.relu inline), `slot_attn` (`SlotAttention`), `head`.
- `CNNEncoder`: `conv1`, `conv2` (nn.Conv2D, F.relu inline), then the NCHW -> NHWC transpose,
  then its `pos_embed` child (`SoftPositionEmbed`, whose `dense` Linear(4, 16) is applied to a
  grid built inline in its forward), then the flatten.
- `SlotAttention` registers its three LayerNorms first (`norm_inputs`, `norm_slots`,
  `norm_mlp`), then separate `to_q`, `to_k`, `to_v` (bias_attr=False), then the framework's
  `gru` = nn.GRUCell(16, 16) (weights [48, 16], gates r | z | c), then `mlp` (nn.Sequential of
  Linear, ReLU, Linear), then the slot parameters `slots_mu`, `slots_log_sigma` [1, 1, 16]. The
  iteration loop is INLINE in its forward; the attention is computed slots-major ([B, 4, 256]),
  the GRUCell is called on [B * 4, 16] and returns (h, h).
- model() gives the LayerNorms, biases and slot parameters trained-looking values (seeded).

The torch side (port_slot_attention_torch.py) was written independently: a fused k|v Linear,
the iteration as a module of its own called three times, a hand-written GRU update with its own
Linear layers (gates in z | r | n order), the attention inputs-major, the position grid as a
buffer.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_softmax_over_inputs -> the attention softmax is taken over the inputs axis (axis=-1)
                                instead of over the slots (axis=1), as in ordinary attention
  paddle_mlp_norm_tf_eps     -> `norm_mlp` is built with epsilon=1e-3 (the TF / Keras
                                LayerNormalization default of the reference code) instead of 1e-5
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, IN_CH, HID = 16, 3, 16
NUM_SLOTS, SLOT_DIM, MLP_HID, ITERS = 4, 16, 32, 3
OUT_DIM = 8
ATTN_EPS = 1e-8
BATCH = 2
OWN_BUGS = {"paddle_softmax_over_inputs", "paddle_mlp_norm_tf_eps"}
OTHER_BUGS = {"torch_gru_blend_flipped", "torch_pos_grid_xy"}


def build_grid(resolution):
    h, w = resolution
    ys = paddle.linspace(0.0, 1.0, h)
    xs = paddle.linspace(0.0, 1.0, w)
    gy, gx = paddle.meshgrid(ys, xs)  # "ij": gy varies along rows
    grid = paddle.stack([gy, gx], axis=-1).unsqueeze(0)  # [1, H, W, 2]
    return paddle.concat([grid, 1.0 - grid], axis=-1)  # [1, H, W, 4]


class SoftPositionEmbed(nn.Layer):
    def __init__(self, hidden, resolution):
        super().__init__()
        self.resolution = resolution
        self.dense = nn.Linear(4, hidden)

    def forward(self, x):  # x: [B, H, W, C]
        return x + self.dense(build_grid(self.resolution))


class CNNEncoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(IN_CH, HID, 5, padding=2)
        self.conv2 = nn.Conv2D(HID, HID, 5, padding=2)
        self.pos_embed = SoftPositionEmbed(HID, (IMG, IMG))

    def forward(self, image):
        x = F.relu(self.conv1(image))
        x = F.relu(self.conv2(x))
        x = x.transpose([0, 2, 3, 1])  # NHWC
        x = self.pos_embed(x)
        return x.reshape([x.shape[0], -1, x.shape[-1]])  # [B, H*W, C]


class SlotAttention(nn.Layer):
    def __init__(self, num_slots, dim, iters, hidden, softmax_axis=1, mlp_eps=1e-5):
        super().__init__()
        self.num_slots, self.dim, self.iters = num_slots, dim, iters
        self.softmax_axis = softmax_axis
        self.scale = dim**-0.5
        self.norm_inputs = nn.LayerNorm(dim)
        self.norm_slots = nn.LayerNorm(dim)
        self.norm_mlp = nn.LayerNorm(dim, epsilon=mlp_eps)
        self.to_q = nn.Linear(dim, dim, bias_attr=False)
        self.to_k = nn.Linear(dim, dim, bias_attr=False)
        self.to_v = nn.Linear(dim, dim, bias_attr=False)
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        self.slots_mu = self.create_parameter([1, 1, dim], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.slots_log_sigma = self.create_parameter([1, 1, dim], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, inputs, noise):
        b = inputs.shape[0]
        slots = self.slots_mu + paddle.exp(self.slots_log_sigma) * noise  # [B, K, D]
        inputs = self.norm_inputs(inputs)
        k = self.to_k(inputs)  # [B, N, D]
        v = self.to_v(inputs)
        for _ in range(self.iters):
            slots_prev = slots
            q = self.to_q(self.norm_slots(slots))
            dots = paddle.matmul(q, k, transpose_y=True) * self.scale  # [B, K, N]
            attn = F.softmax(dots, axis=self.softmax_axis) + ATTN_EPS
            attn = attn / attn.sum(axis=-1, keepdim=True)  # weighted mean over the inputs
            updates = paddle.matmul(attn, v)  # [B, K, D]
            slots, _ = self.gru(updates.reshape([-1, self.dim]), slots_prev.reshape([-1, self.dim]))
            slots = slots.reshape([b, self.num_slots, self.dim])
            slots = slots + self.mlp(self.norm_mlp(slots))
        return slots


class SlotAttentionModel(nn.Layer):
    def __init__(self, softmax_axis=1, mlp_eps=1e-5):
        super().__init__()
        self.encoder = CNNEncoder()
        self.feat_norm = nn.LayerNorm(HID)
        self.feat_fc1 = nn.Linear(HID, HID)
        self.feat_fc2 = nn.Linear(HID, SLOT_DIM)
        self.slot_attn = SlotAttention(NUM_SLOTS, SLOT_DIM, ITERS, MLP_HID, softmax_axis, mlp_eps)
        self.head = nn.Linear(SLOT_DIM, OUT_DIM)

    def forward(self, image, noise):
        x = self.encoder(image)
        x = self.feat_fc2(F.relu(self.feat_fc1(self.feat_norm(x))))
        slots = self.slot_attn(x, noise)
        return self.head(slots)  # [B, K, OUT_DIM]


def _trained_look(m):
    rng = np.random.default_rng(37)
    for name, p in m.named_parameters():
        shape = tuple(p.shape)
        if "norm" in name and name.endswith(".weight"):
            p.set_value(rng.normal(1.0, 0.15, shape).astype("float32"))
        elif name.endswith(".bias") or name.endswith("bias_ih") or name.endswith("bias_hh"):
            p.set_value(rng.normal(0.0, 0.1, shape).astype("float32"))
        elif name.endswith("slots_mu"):
            p.set_value(rng.normal(0.0, 0.5, shape).astype("float32"))
        elif name.endswith("slots_log_sigma"):
            p.set_value(rng.normal(-0.7, 0.2, shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_slot_attention paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SlotAttentionModel(
        softmax_axis=-1 if bug == "paddle_softmax_over_inputs" else 1,
        mlp_eps=1e-3 if bug == "paddle_mlp_norm_tf_eps" else 1e-5,
    )
    _trained_look(m)
    m.eval()
    return m


def _arrays():
    image = np.random.default_rng(31).standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")
    noise = np.random.default_rng(32).standard_normal((BATCH, NUM_SLOTS, SLOT_DIM)).astype("float32")
    return image, noise


def inputs():
    return tuple(paddle.to_tensor(a) for a in _arrays()), {}


def loss(output):
    # per-slot property predictions [2, 4, 8]
    return (output**2).mean()

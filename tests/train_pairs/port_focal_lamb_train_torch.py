"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_focal_lamb_train_paddle.py) the torchvision RetinaNet way, with a hand-written LAMB.

    DenseDetector: registers body = Sequential(Conv2d 3 -> 8 (no bias), BatchNorm2d, ReLU,
        Conv2d 8 -> 16 stride 2 (no bias), BatchNorm2d, ReLU) (.0-.5), head; calls body, head
    RetinaLiteHead(in_channels, num_classes, drop_rate=0.2): registers conv (3x3 tower),
        bbox_pred (1x1 -> 4) BEFORE cls_logits (1x1 -> 3); forward: relu(conv(x)) and
        F.dropout(h, self.drop_rate, self.training) inline (no module), then
        cls_logits / bbox_pred, each flattened NCHW -> [B, H*W, K] with flatten(2).transpose(1, 2)
    forward(images [4, 3, 16, 16]) -> (class logits [4, 64, 3], box deltas [4, 64, 4])
model.train(): BatchNorm2d (momentum 0.1, eps 1e-5) uses batch statistics, dropout active.

Loss (torchvision.ops.sigmoid_focal_loss written out): p = sigmoid(x), ce = BCE-with-logits,
p_t = p y + (1 - p)(1 - y), loss = ce (1 - p_t)^2, alpha_t = 0.25 y + 0.75 (1 - y), summed and
divided by num_pos (positive locations, at least 1); box term
F.smooth_l1_loss(box[pos], target[pos], beta=1/9, reduction="sum") / num_pos (boolean indexing).
Optimizer: LAMB written by hand (a torch.optim.Optimizer subclass, below): Adam moments with bias
correction, r = m_hat / (sqrt(v_hat) + eps), update u = r + wd w, trust ratio ||w|| / ||u|| (1 when
either norm is 0) for groups with adapt=True; two parameter groups: tensors of ndim >= 2 (weight
decay 0.01, adapt) and 1-D tensors (biases, BatchNorm; weight decay 0, adapt=False - LAMB's
exclude_from_layer_adaptation as in the BERT recipe). lr 5e-3, betas (0.9, 0.999), eps 1e-6.
Data: the same batches as the paddle side (default_rng(7500 + step), the same recipe).

PADIFF_BUG (this side only):
  torch_bn_decayed -> the parameter groups built by NAME with the transformer recipe
              no_decay = ["bias", "LayerNorm.weight"]: the BatchNorm scales (body.1.weight,
              body.4.weight) land in the decay group: decayed AND layer-adapted
  torch_head_drop_default -> the builder forgets drop_rate=0.1 when it makes the head:
              RetinaLiteHead's own default drop_rate=0.2 is used
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_bn_decayed", "torch_head_drop_default"} | {"paddle_huber_delta"}  # paddle side's, ignored
BATCH, IMG, NUM_CLASSES, CH = 4, 16, 3, 16
LR, BETAS, EPS, WEIGHT_DECAY = 5e-3, (0.9, 0.999), 1e-6, 0.01
FOCAL_ALPHA, FOCAL_GAMMA, SMOOTH_BETA, DROP_RATE = 0.25, 2.0, 1.0 / 9.0, 0.1

_TARGETS = {}


def make_batch(step):
    rng = np.random.default_rng(7500 + step)
    images = rng.standard_normal((BATCH, 3, IMG, IMG)).astype(np.float32)
    n_loc = (IMG // 2) * (IMG // 2)
    positive = rng.random((BATCH, n_loc)) < 0.2
    labels = np.zeros((BATCH, n_loc, NUM_CLASSES), np.float32)
    c1 = rng.integers(0, NUM_CLASSES, (BATCH, n_loc))
    c2 = rng.integers(0, NUM_CLASSES, (BATCH, n_loc))
    multi = rng.random((BATCH, n_loc)) < 0.3
    b_idx, l_idx = np.nonzero(positive)
    labels[b_idx, l_idx, c1[b_idx, l_idx]] = 1.0
    m = multi[b_idx, l_idx]
    labels[b_idx[m], l_idx[m], c2[b_idx[m], l_idx[m]]] = 1.0
    deltas = (rng.standard_normal((BATCH, n_loc, 4)) * 0.5).astype(np.float32)
    return images, labels, deltas, positive


class RetinaLiteHead(nn.Module):
    def __init__(self, in_channels, num_classes, drop_rate=0.2):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)
        self.bbox_pred = nn.Conv2d(in_channels, 4, 1)
        self.cls_logits = nn.Conv2d(in_channels, num_classes, 1)
        self.drop_rate = drop_rate

    def forward(self, x):
        h = F.relu(self.conv(x))
        h = F.dropout(h, self.drop_rate, self.training)
        cls = self.cls_logits(h).flatten(2).transpose(1, 2)
        box = self.bbox_pred(h).flatten(2).transpose(1, 2)
        return cls, box


class DenseDetector(nn.Module):
    def __init__(self, head_drop):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, CH, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(CH), nn.ReLU(inplace=True),
        )
        self.head = RetinaLiteHead(CH, NUM_CLASSES) if head_drop is None else RetinaLiteHead(CH, NUM_CLASSES, drop_rate=head_drop)

    def forward(self, images):
        return self.head(self.body(images))


class Lamb(torch.optim.Optimizer):
    """LAMB (You et al. 2019), bias-corrected Adam direction, per-tensor trust ratio."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0, adapt=True):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, adapt=adapt))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                m_hat = exp_avg / (1.0 - beta1 ** t)
                v_hat = exp_avg_sq / (1.0 - beta2 ** t)
                update = m_hat / (v_hat.sqrt() + group["eps"])
                if group["weight_decay"] != 0:
                    update = update + group["weight_decay"] * p
                if group["adapt"]:
                    w_norm, u_norm = p.norm(), update.norm()
                    trust = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, torch.ones_like(w_norm))
                    update = update * trust
                p.add_(update, alpha=-group["lr"])
        return loss


def model():
    torch.manual_seed(0)
    m = DenseDetector(None if bug(BUGS) == "torch_head_drop_default" else DROP_RATE)
    m.train()
    return m


def inputs(step=0):
    images, labels, deltas, positive = make_batch(step)
    _TARGETS.update(labels=torch.from_numpy(labels), deltas=torch.from_numpy(deltas),
                    positive=torch.from_numpy(positive))
    return (torch.from_numpy(images),), {}


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * loss).sum()


def loss(output):
    cls_logits, bbox = output
    dt = cls_logits.dtype
    labels = _TARGETS["labels"].to(dt)
    deltas = _TARGETS["deltas"].to(dt)
    positive = _TARGETS["positive"]
    num_pos = max(1, int(positive.sum()))
    cls_loss = sigmoid_focal_loss(cls_logits, labels, FOCAL_ALPHA, FOCAL_GAMMA) / num_pos
    box_loss = F.smooth_l1_loss(bbox[positive], deltas[positive], beta=SMOOTH_BETA, reduction="sum") / num_pos
    return cls_loss + box_loss


def optimizer(model):
    if bug(BUGS) == "torch_bn_decayed":
        no_decay = ["bias", "LayerNorm.weight"]
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        decay = [p for n, p in named if not any(nd in n for nd in no_decay)]
        rest = [p for n, p in named if any(nd in n for nd in no_decay)]
    else:
        params = [p for p in model.parameters() if p.requires_grad]
        decay = [p for p in params if p.ndim >= 2]
        rest = [p for p in params if p.ndim < 2]
    return Lamb([{"params": decay, "weight_decay": WEIGHT_DECAY, "adapt": True},
                 {"params": rest, "weight_decay": 0.0, "adapt": False}], lr=LR, betas=BETAS, eps=EPS)

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_moco_train_paddle.py) the facebookresearch/moco (moco/builder.py) way.

    MoCo: registers encoder_q, encoder_k (base_encoder(num_classes=dim) each; every encoder_k
        parameter requires_grad=False, copied from encoder_q), then the buffers queue [dim, K]
        (columns are negatives, L2-normalised along dim 0) and queue_ptr (long [1]);
        forward(im_q, im_k) as builder.MoCo.forward: q = normalize(encoder_q(im_q)); under
        torch.no_grad(): _momentum_update_key_encoder(), k = normalize(encoder_k(im_k));
        l_pos = einsum('nc,nc->n'), l_neg = einsum('nc,ck->nk', q, queue);
        _dequeue_and_enqueue(k); returns the cat'ed logits [B, 1 + K] (no temperature here:
        it is applied in loss())
    base_encoder: SmallNet: features = Sequential(Conv2d(3, 8, 3, padding=1, bias=False),
        BatchNorm2d(8), ReLU(inplace), Conv2d(8, 16, 3, stride=2, padding=1, bias=False),
        BatchNorm2d(16), ReLU(inplace)), pooling functional (x.mean((2, 3))), and fc: the MoCo-v2
        --mlp head, Sequential(Linear(16, 16), ReLU(), Linear(16, dim)) (fc.0, fc.1, fc.2)
Inputs: the same per-step base images and augmentation draws as the paddle side (numpy,
default_rng(6000 + step)), cropped / flipped (torch.flip) / scaled / noised with torch ops.
Loss: nn.CrossEntropyLoss()(logits / T, zeros) with T = 0.2 (MoCo v2, --moco-t 0.2).
Optimizer: SGD(model.parameters(), lr 0.06, momentum 0.9, weight_decay 1e-4) (encoder_k has no
gradient, so SGD skips it) + CosineAnnealingLR(T_max=3) stepped after every update.

PADIFF_BUG (this side only):
  torch_t_v1  -> the temperature of main_moco.py's default, --moco-t 0.07 (MoCo v1), instead of
              MoCo v2's 0.2
  torch_no_wd -> SGD(..., momentum=0.9) without weight_decay=1e-4 (the port forgot --wd)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_t_v1", "torch_no_wd"} | {"paddle_ema_stats"}  # the paddle side's, ignored here
BATCH, K, DIM, IMG, CROP = 8, 32, 8, 10, 8
MOCO_M, MOCO_T = 0.99, 0.2
LR, MOMENTUM, WD, STEPS = 0.06, 0.9, 1e-4, 3


def draw(step):
    rng = np.random.default_rng(6000 + step)
    base = rng.standard_normal((BATCH, 3, IMG, IMG)).astype(np.float32)
    aug = []
    for _ in range(2):
        off = rng.integers(0, IMG - CROP + 1, (BATCH, 2))
        flip = rng.random(BATCH) < 0.5
        scale = rng.uniform(0.6, 1.4, BATCH).astype(np.float32)
        noise = (0.1 * rng.standard_normal((BATCH, 3, CROP, CROP))).astype(np.float32)
        aug.append((off, flip, scale, noise))
    return base, aug


def transform(x, off, flip, scale, noise):
    out = torch.empty(BATCH, 3, CROP, CROP)
    for i in range(BATCH):
        y0, x0 = int(off[i][0]), int(off[i][1])
        crop = x[i, :, y0:y0 + CROP, x0:x0 + CROP]
        out[i] = torch.flip(crop, dims=(2,)) if flip[i] else crop
    return out * torch.from_numpy(scale)[:, None, None, None] + torch.from_numpy(noise)


class SmallNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
        )
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class MoCo(nn.Module):
    def __init__(self, base_encoder, dim=DIM, K=K, m=MOCO_M, mlp=True):
        super().__init__()
        self.K, self.m = K, m
        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)
        if mlp:  # hack: brute-force replacement, as moco/builder.py
            dim_mlp = self.encoder_q.fc.weight.shape[1]
            self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
            self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0
        self.queue[:, ptr:ptr + batch_size] = keys.T
        ptr = (ptr + batch_size) % self.K
        self.queue_ptr[0] = ptr

    def forward(self, im_q, im_k):
        q = nn.functional.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = nn.functional.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1)
        self._dequeue_and_enqueue(k)
        return logits


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = MoCo(SmallNet)
    m.train()
    return m


def inputs(step=0):
    base, aug = draw(step)
    x = torch.from_numpy(base)
    return (transform(x, *aug[0]), transform(x, *aug[1])), {}


def loss(output):
    t = 0.07 if bug(BUGS) == "torch_t_v1" else MOCO_T
    labels = torch.zeros(output.shape[0], dtype=torch.long)
    return nn.CrossEntropyLoss()(output / t, labels)


def optimizer(model):
    wd = 0.0 if bug(BUGS) == "torch_no_wd" else WD
    opt = torch.optim.SGD(model.parameters(), LR, momentum=MOMENTUM, weight_decay=wd)
    return opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)

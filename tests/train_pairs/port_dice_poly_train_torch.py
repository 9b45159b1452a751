"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_dice_poly_train_paddle.py) in the milesial/Pytorch-UNet style.

    UNetLite: registers inc = Sequential(Conv2d(3, 8, 3, padding=1, bias=False), BatchNorm2d(8),
        ReLU(inplace=True)), down1 = Sequential(Conv2d(8, 16, 3, stride=2, padding=1, bias=False),
        BatchNorm2d(16), ReLU(inplace=True)), up1 = Up(16, 8), outc = Sequential(Dropout(0.1),
        Conv2d(8, 3, 1)); calls inc, down1, up1(x2, x1), outc
    Up: up (ConvTranspose2d(16, 8, 2, stride=2)), conv = Sequential(Conv2d(16, 8, 3, padding=1,
        bias=False), BatchNorm2d(8), ReLU(inplace=True)) over torch.cat([upsampled, skip], dim=1)
Same per-step batch as the paddle side (default_rng(3500 + step)); model.train().

Loss: F.cross_entropy(logits, labels) + dice_loss(logits, labels): the smp/kornia-style
multiclass soft Dice, probas = logits.softmax(dim=1), true_1_hot = one_hot(labels).permute(0, 3,
1, 2), intersection = sum(probas * true_1_hot, (0, 2, 3)), cardinality = sum(probas + true_1_hot,
(0, 2, 3)), 1 - mean((2 intersection + smooth) / (cardinality + smooth)), smooth 1.0.
Optimizer: AdamW over two parameter groups (conv / transposed-conv weights with weight_decay
0.01; BatchNorm weights/biases and conv biases with 0.0), lr 2e-3, betas (0.9, 0.999), eps 1e-8;
scheduler PolynomialLR(total_iters=10, power=0.9) stepped after every update.

PADIFF_BUG (this side only):
  dropout_default_p  -> outc's dropout built as nn.Dropout() (torch's default p = 0.5) instead of
              nn.Dropout(0.1)
  poly_power_default -> PolynomialLR(opt, total_iters=10) without power=0.9 (torch's default power
              is 1.0: a linear decay)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"dropout_default_p", "poly_power_default"} | {"paddle_softmax_axis"}  # paddle side's, ignored here
NUM_CLASSES, BATCH, SIZE = 3, 2, 16
LR, TOTAL_ITERS, POLY_POWER, WEIGHT_DECAY, SMOOTH = 2e-3, 10, 0.9, 0.01, 1.0

_TARGET = {}


def sample(step):
    rng = np.random.default_rng(3500 + step)
    x = rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype(np.float32)
    coarse = rng.integers(0, NUM_CLASSES, (BATCH, SIZE // 4, SIZE // 4))
    mask = coarse.repeat(4, axis=1).repeat(4, axis=2).astype(np.int64)
    return x, mask


def conv_bn_relu(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class Up(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = conv_bn_relu(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        return self.conv(torch.cat([x1, x2], dim=1))


class UNetLite(nn.Module):
    def __init__(self, n_classes=NUM_CLASSES):
        super().__init__()
        self.inc = conv_bn_relu(3, 8)
        self.down1 = conv_bn_relu(8, 16, stride=2)
        self.up1 = Up(16, 8)
        p = 0.1
        self.outc = nn.Sequential(nn.Dropout() if bug(BUGS) == "dropout_default_p" else nn.Dropout(p),
                                  nn.Conv2d(8, n_classes, kernel_size=1))

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        return self.outc(self.up1(x2, x1))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = UNetLite()
    m.train()
    return m


def inputs(step=0):
    x, mask = sample(step)
    _TARGET["mask"] = torch.from_numpy(mask)
    return (torch.from_numpy(x),), {}


def dice_loss(logits, true, smooth=SMOOTH):
    num_classes = logits.shape[1]
    true_1_hot = F.one_hot(true, num_classes).permute(0, 3, 1, 2).to(logits.dtype)
    probas = logits.softmax(dim=1)
    dims = (0, 2, 3)
    intersection = torch.sum(probas * true_1_hot, dims)
    cardinality = torch.sum(probas + true_1_hot, dims)
    dice = (2.0 * intersection + smooth) / (cardinality + smooth)
    return 1.0 - dice.mean()


def loss(output):
    mask = _TARGET["mask"]
    return F.cross_entropy(output, mask) + dice_loss(output, mask)


def optimizer(model):
    decay, no_decay = [], []
    for mod in model.modules():
        for name, p in mod.named_parameters(recurse=False):
            is_conv_weight = isinstance(mod, (nn.Conv2d, nn.ConvTranspose2d)) and name == "weight"
            (decay if is_conv_weight else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}], lr=LR, betas=(0.9, 0.999), eps=1e-8)
    if bug(BUGS) == "poly_power_default":
        sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=TOTAL_ITERS)
    else:
        sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=TOTAL_ITERS, power=POLY_POWER)
    return opt, sched

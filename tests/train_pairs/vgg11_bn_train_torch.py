"""VGG-11 with BatchNorm in TRAINING mode, torchvision side: `VGG(make_layers(cfg, batch_norm=True))`
with VGG-11's layer pattern at 1/8 width (channels 8-16-32-32-64-64-64-64) and a CIFAR-style head
(AdaptiveAvgPool2d(1), the library's classifier layout at width 32, 10 classes), as the paddle
twin. inputs N(0, 1) [4, 3, 32, 32], labels [0, 3, 6, 9], model.train() (batch statistics,
running stats updated with momentum 0.1 = paddle 0.9, dropout 0.5). Training:
torch.optim.SGD(lr 0.01, momentum 0.9, weight_decay 5e-4: coupled L2, as paddle's L2Decay) and
torch.optim.lr_scheduler.StepLR(step_size=2, gamma=0.5) stepped after every optimizer step.
Twin: vgg11_bn_train_paddle.py. Ground truth: vgg11_bn_train_truth.json.

PADIFF_BUG (this side only):
  bn_frozen_stats -> every BatchNorm2d gets track_running_stats = False: paddle's
                     `use_global_stats=False` ("normalise with the batch statistics") mapped onto
                     torch's track_running_stats=False, which also stops updating the running
                     statistics (they stay at 0 / 1)
  dampening       -> SGD(..., dampening=0.9): the momentum written as an exponential average
                     (buf = 0.9 buf + 0.1 g) instead of paddle's velocity = 0.9 v + g
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from _tv import torchvision  # noqa: F401 (torchvision from <repo>/.vision-site, see tests/vision_pairs/_tv.py)
from torch import nn
from torchvision.models.vgg import VGG, make_layers

BUGS = {"bn_frozen_stats", "dampening"} | {"paddle_sched_last_epoch"}  # the paddle side's, ignored here
BATCH, SIZE, LR, WIDTH = 4, 32, 0.01, 32
CFG = [8, "M", 16, "M", 32, 32, "M", 64, 64, "M", 64, 64, "M"]  # VGG-11 ('A') / 8
LABELS = (np.arange(BATCH) * 3 % 10).astype("int64")


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    features = make_layers(CFG, batch_norm=True)
    with torch.device("meta"):  # VGG always builds the 25088x4096 head: build it without memory, then replace it
        m = VGG(features, num_classes=10, init_weights=False)
    m.avgpool = nn.AdaptiveAvgPool2d(1)
    m.classifier = nn.Sequential(
        nn.Linear(64, WIDTH), nn.ReLU(True), nn.Dropout(0.5),
        nn.Linear(WIDTH, WIDTH), nn.ReLU(True), nn.Dropout(0.5),
        nn.Linear(WIDTH, 10),
    )
    if b == "bn_frozen_stats":
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.track_running_stats = False
    m.train()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return F.cross_entropy(output, torch.from_numpy(LABELS))


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, weight_decay=5e-4,
                          dampening=0.9 if bug(BUGS) == "dampening" else 0.0)
    return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

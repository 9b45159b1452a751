"""Hand-written port, torch side: an FPN neck and a RetinaNet head, tiny (written by "person B", torchvision style).

The same math as port_retinanet_head_paddle.py: inputs C3 [2, 8, 16, 16], C4 [2, 16, 8, 8],
C5 [2, 16, 4, 4] (positional); an FPN of 16 channels with P6 / P7 from stride-2 3x3 convs (P6 on
P5 because in_channels == out_channels, P7 on relu(P6)); a RetinaNet head shared over the five
levels (2 x (3x3 conv + ReLU) per subnet, 3 anchors, 4 classes, prior-probability class bias).
Outputs: class logits [N, HWA, 4] and box deltas [N, HWA, 4], concatenated on the last dim:
[2, 1023, 8].

Torch idioms on this side (torchvision's FeaturePyramidNetwork / RetinaNetHead layout):
- root `RetinaNetTiny`: `fpn` (`FeaturePyramidNetwork`), `head` (`RetinaNetHead`). The
  positional inputs are packed into an OrderedDict {"c3", "c4", "c5"}; the FPN returns an
  OrderedDict {"c3", "c4", "c5", "p6", "p7"}, whose values go to the head as a list. The head
  returns a dict {"cls_logits", "bbox_regression"}.
- `FeaturePyramidNetwork`: `inner_blocks` (ModuleList of Conv2dNormActivation-like
  nn.Sequential(Conv2d 1x1)), `layer_blocks` (nn.Sequential(Conv2d 3x3)), `extra_blocks`
  (`LastLevelP6P7`: `p6`, `p7`, F.relu inline, chooses P5 or C5 by `use_P5`). The top-down
  pass is interleaved: lateral of level i, upsample (F.interpolate to the lateral's size,
  nearest), add, output conv, from the top level down.
- `RetinaNetHead`: `classification_head` (`conv` = nn.Sequential of two
  nn.Sequential(Conv2d, nn.ReLU) blocks, then `cls_logits`) and `regression_head` (`conv`,
  `bbox_reg`). Each sub-head runs over all levels and reshapes view(N, A, K, H, W) ->
  permute(0, 3, 4, 1, 2) -> [N, HWA, K] itself.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_topdown_from_output -> the FPN top-down pass upsamples the previous level's OUTPUT
                               (the 3x3-smoothed results[0]) instead of the running lateral
                               sum last_inner
  torch_cls_class_major     -> the classification head reshapes its logits class-major,
                               view(N, K, A, H, W) -> permute(0, 3, 4, 2, 1), instead of
                               anchor-major view(N, A, K, H, W)
"""
import math
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANNELS_LIST = [8, 16, 16]
OUT_CHANNELS = 16
NUM_ANCHORS, NUM_CLASSES, NUM_CONVS = 3, 4, 2
BATCH = 2
OWN_BUGS = {"torch_topdown_from_output", "torch_cls_class_major"}
OTHER_BUGS = {"paddle_p6_from_c5", "paddle_reg_uses_cls_feat"}


def conv_norm_act(in_channels, out_channels, kernel_size, activation=True):
    """Like torchvision's Conv2dNormActivation with norm_layer=None: a Sequential [conv(, ReLU)]."""
    layers = [nn.Conv2d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2, bias=True)]
    if activation:
        layers.append(nn.ReLU(inplace=False))
    return nn.Sequential(*layers)


class LastLevelP6P7(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in [self.p6, self.p7]:
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        p5, c5 = p[-1], c[-1]
        x = p5 if self.use_P5 else c5
        p6 = self.p6(x)
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names


class FeaturePyramidNetwork(nn.Module):
    def __init__(self, in_channels_list, out_channels, extra_blocks=None, topdown_from_output=False):
        super().__init__()
        self.topdown_from_output = topdown_from_output
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            self.inner_blocks.append(conv_norm_act(in_channels, out_channels, 1, activation=False))
            self.layer_blocks.append(conv_norm_act(out_channels, out_channels, 3, activation=False))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                nn.init.constant_(m.bias, 0)
        self.extra_blocks = extra_blocks

    def forward(self, x):
        names = list(x.keys())
        x = list(x.values())
        last_inner = self.inner_blocks[-1](x[-1])
        results = [self.layer_blocks[-1](last_inner)]
        for idx in range(len(x) - 2, -1, -1):
            inner_lateral = self.inner_blocks[idx](x[idx])
            feat_shape = inner_lateral.shape[-2:]
            top = results[0] if self.topdown_from_output else last_inner
            inner_top_down = F.interpolate(top, size=feat_shape, mode="nearest")
            last_inner = inner_lateral + inner_top_down
            results.insert(0, self.layer_blocks[idx](last_inner))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, x, names)
        return OrderedDict([(k, v) for k, v in zip(names, results)])


class RetinaNetClassificationHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, prior_probability=0.01, class_major=False):
        super().__init__()
        self.conv = nn.Sequential(*[conv_norm_act(in_channels, in_channels, 3) for _ in range(NUM_CONVS)])
        for layer in self.conv.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.normal_(layer.weight, std=0.01)
                nn.init.constant_(layer.bias, 0)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, kernel_size=3, stride=1, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - prior_probability) / prior_probability))
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.class_major = class_major

    def forward(self, x):
        all_cls_logits = []
        for features in x:
            cls_logits = self.conv(features)
            cls_logits = self.cls_logits(cls_logits)
            N, _, H, W = cls_logits.shape
            if self.class_major:
                cls_logits = cls_logits.view(N, self.num_classes, -1, H, W).permute(0, 3, 4, 2, 1)
            else:
                cls_logits = cls_logits.view(N, -1, self.num_classes, H, W).permute(0, 3, 4, 1, 2)
            all_cls_logits.append(cls_logits.reshape(N, -1, self.num_classes))
        return torch.cat(all_cls_logits, dim=1)


class RetinaNetRegressionHead(nn.Module):
    def __init__(self, in_channels, num_anchors):
        super().__init__()
        self.conv = nn.Sequential(*[conv_norm_act(in_channels, in_channels, 3) for _ in range(NUM_CONVS)])
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=3, stride=1, padding=1)
        nn.init.normal_(self.bbox_reg.weight, std=0.01)
        nn.init.zeros_(self.bbox_reg.bias)
        for layer in self.conv.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.normal_(layer.weight, std=0.01)
                nn.init.zeros_(layer.bias)

    def forward(self, x):
        all_bbox_regression = []
        for features in x:
            bbox_regression = self.conv(features)
            bbox_regression = self.bbox_reg(bbox_regression)
            N, _, H, W = bbox_regression.shape
            bbox_regression = bbox_regression.view(N, -1, 4, H, W).permute(0, 3, 4, 1, 2)
            all_bbox_regression.append(bbox_regression.reshape(N, -1, 4))
        return torch.cat(all_bbox_regression, dim=1)


class RetinaNetHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, class_major=False):
        super().__init__()
        self.classification_head = RetinaNetClassificationHead(in_channels, num_anchors, num_classes,
                                                               class_major=class_major)
        self.regression_head = RetinaNetRegressionHead(in_channels, num_anchors)

    def forward(self, x):
        return {"cls_logits": self.classification_head(x), "bbox_regression": self.regression_head(x)}


class RetinaNetTiny(nn.Module):
    def __init__(self, topdown_from_output=False, class_major=False):
        super().__init__()
        self.fpn = FeaturePyramidNetwork(IN_CHANNELS_LIST, OUT_CHANNELS,
                                         extra_blocks=LastLevelP6P7(OUT_CHANNELS, OUT_CHANNELS),
                                         topdown_from_output=topdown_from_output)
        self.head = RetinaNetHead(OUT_CHANNELS, NUM_ANCHORS, NUM_CLASSES, class_major=class_major)

    def forward(self, c3, c4, c5):
        features = self.fpn(OrderedDict([("c3", c3), ("c4", c4), ("c5", c5)]))
        head_outputs = self.head(list(features.values()))
        return torch.cat([head_outputs["cls_logits"], head_outputs["bbox_regression"]], dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_retinanet_head torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RetinaNetTiny(topdown_from_output=bug == "torch_topdown_from_output",
                      class_major=bug == "torch_cls_class_major")
    return m.eval()


def _feats():
    rng = np.random.default_rng(29)
    return [rng.standard_normal((BATCH, c, s, s)).astype("float32") for c, s in zip(IN_CHANNELS_LIST, (16, 8, 4))]


def inputs():
    return tuple(torch.from_numpy(a) for a in _feats()), {}


def loss(output):
    # class logits | box deltas [2, 1023, 8]
    return (output**2).mean()

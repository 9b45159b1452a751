"""Hand-written port, paddle side: a CondConv / dynamic-convolution classifier (written by "person A").

Input: one image batch `images` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 383, standard
normal). Output: class logits [2, 10].

Network (BN eps 1e-5):
  stem   conv 3x3 (3 -> 8, pad 1, no bias) -> BN -> relu                          [2, 8, 16, 16]
  block1 CondConv 3x3, 8 -> 16, stride 2, pad 1, K = 4 experts, SIGMOID routing
         -> BN -> relu                                                              [2, 16, 8, 8]
  block2 dynamic conv 3x3, 16 -> 16, stride 1, pad 1, K = 4 experts, SOFTMAX routing with
         temperature 3 -> BN -> relu, plus the block input (residual)               [2, 16, 8, 8]
  head   global average pool -> Linear(16, 10)

A conditional conv: r = route(mean_hw(x)) [B, K] with route = Linear(C_in, K) then sigmoid(z) or
softmax(z / T) over the experts; the per-sample kernel is W_b = sum_k r[b, k] W_k and the
per-sample bias is b_b = sum_k r[b, k] bias_k; y_b = conv(x_b, W_b) + b_b.

Paddle idioms on this side:
- root `CondNet`: `entry_conv` Conv2D(3, 8, 3), `entry_bn` BatchNorm2D(8), `body` (LayerList of two
  `CondBlock`, iterated), `classifier` nn.Linear(16, 10); relu and the pool are inline.
- `CondBlock`: `cond` (CondConv2D), `bn`; relu and the residual (same shape) inline.
- `CondConv2D`: registers `router` (RoutingFn) FIRST, then the expert tensors created with
  create_parameter, stored FLAT like the official CondConv code: `expert_weight`
  [K, out * in * kh * kw] and `expert_bias` [K, out]. The convolution is ONE grouped conv over
  the batch: x -> [1, B * C_in, H, W], mixed kernels r @ expert_weight -> [B * out, in, kh, kw],
  F.conv2d(groups=B), reshaped back to [B, out, H', W'].
- `RoutingFn`: `fc` nn.Linear(C_in, K); pool inline; sigmoid or softmax(z / T) inside its forward.

The torch side (port_condconv_torch.py) was written independently: experts stored
[K, out, in, kh, kw], the per-sample convolution done by F.unfold patches + einsum, routing
inline in the conv module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_route_softmax_batch -> RoutingFn's softmax normalises over axis 0 (the batch) instead of
                                the expert axis (only the softmax-routed block2 uses it)
  paddle_kernel_no_transpose -> CondConv2D mixes the kernels as (expert_weight^T r^T) [P, B] and
                                reshapes that to [B * out, in, kh, kw] without transposing first
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, STEM_CH, WIDTH, N_EXPERTS, N_CLASSES = 3, 8, 16, 4, 10
TEMPERATURE = 3.0
BATCH, IMG = 2, 16
OWN_BUGS = {"paddle_route_softmax_batch", "paddle_kernel_no_transpose"}
OTHER_BUGS = {"torch_bn_eps_positional", "torch_patch_order_hwc"}


class RoutingFn(nn.Layer):
    def __init__(self, cin, experts, mode, temperature=1.0, batch_axis=False):
        super().__init__()
        self.mode, self.temperature, self.batch_axis = mode, temperature, batch_axis
        self.fc = nn.Linear(cin, experts)

    def forward(self, x):
        z = self.fc(paddle.mean(x, axis=[2, 3]))  # [B, K]
        if self.mode == "sigmoid":
            return F.sigmoid(z)
        return F.softmax(z / self.temperature, axis=0 if self.batch_axis else -1)


class CondConv2D(nn.Layer):
    def __init__(self, cin, cout, k, stride, padding, experts, mode, temperature=1.0, bug=""):
        super().__init__()
        self.cin, self.cout, self.k, self.stride, self.padding = cin, cout, k, stride, padding
        self.no_transpose = bug == "paddle_kernel_no_transpose"
        self.router = RoutingFn(cin, experts, mode, temperature, batch_axis=bug == "paddle_route_softmax_batch")
        fan_in = cin * k * k
        self.expert_weight = self.create_parameter(
            [experts, cout * cin * k * k], default_initializer=nn.initializer.Normal(0.0, (2.0 / fan_in) ** 0.5))
        self.expert_bias = self.create_parameter([experts, cout], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        B, _, H, W = x.shape
        r = self.router(x)  # [B, K]
        if self.no_transpose:
            kern = paddle.matmul(self.expert_weight, r, transpose_x=True, transpose_y=True)  # [P, B]
        else:
            kern = paddle.matmul(r, self.expert_weight)  # [B, P]
        kern = kern.reshape([B * self.cout, self.cin, self.k, self.k])
        bias = paddle.matmul(r, self.expert_bias).reshape([-1])  # [B * out]
        y = F.conv2d(x.reshape([1, B * self.cin, H, W]), kern, bias=bias, stride=self.stride,
                     padding=self.padding, groups=B)
        return y.reshape([B, self.cout, y.shape[2], y.shape[3]])


class CondBlock(nn.Layer):
    def __init__(self, cin, cout, stride, mode, temperature=1.0, bug=""):
        super().__init__()
        self.cond = CondConv2D(cin, cout, 3, stride, 1, N_EXPERTS, mode, temperature, bug)
        self.bn = nn.BatchNorm2D(cout)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = F.relu(self.bn(self.cond(x)))
        return x + y if self.residual else y


class CondNet(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.entry_conv = nn.Conv2D(IN_CH, STEM_CH, 3, padding=1, bias_attr=False)
        self.entry_bn = nn.BatchNorm2D(STEM_CH)
        self.body = nn.LayerList([
            CondBlock(STEM_CH, WIDTH, 2, "sigmoid", bug=bug),
            CondBlock(WIDTH, WIDTH, 1, "softmax", TEMPERATURE, bug=bug),
        ])
        self.classifier = nn.Linear(WIDTH, N_CLASSES)

    def forward(self, images):
        x = F.relu(self.entry_bn(self.entry_conv(images)))
        for blk in self.body:
            x = blk(x)
        return self.classifier(paddle.mean(x, axis=[2, 3]))


def _trained_look(m):
    rng = np.random.default_rng(384)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, CondConv2D):
            # trained routers are decisive: larger gate weights and biases
            fc = layer.router.fc
            fc.weight.set_value(rng.normal(0.0, 1.5, fc.weight.shape).astype("float32"))
            fc.bias.set_value(rng.normal(0.0, 1.0, fc.bias.shape).astype("float32"))
            layer.expert_bias.set_value(rng.normal(0.0, 0.2, layer.expert_bias.shape).astype("float32"))
    m.classifier.bias.set_value(rng.normal(0.0, 0.2, N_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_condconv paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CondNet(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(383)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

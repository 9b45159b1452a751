"""Hand-written port, torch side: a small Glow normalizing flow, 2 levels x 2 steps (written by "person B").

The same math as port_glow_paddle.py, re-implemented by hand in the style of rosinality's
glow-pytorch: input `x` [2, 3, 8, 8] (positional), output (z [2, 192], logdet [2]) with
z = concat(z1.flatten(1), z2.flatten(1)) (z1: the half factored out after block 0,
[2, 6, 4, 4]; z2: block 1's output, [2, 24, 2, 2]).

Torch idioms on this side (rosinality glow-pytorch):
- root `Glow`: `blocks` ModuleList of `Block`; the log-determinants returned by the blocks are
  summed in the root.
- `Block`: `squeeze` = nn.PixelUnshuffle(2) (a MODULE: channel index c * 4 + 2 i + j), `flows`
  ModuleList of `Flow`; the split (out, z_new = out.chunk(2, 1)) is inline. forward(x) ->
  (out, logdet, z_new).
- `Flow`: `actnorm`, `invconv`, `coupling`; each returns (out, its own logdet), summed in
  the Flow.
- `ActNorm`: `loc` [1, C, 1, 1], `scale` [1, C, 1, 1] (a plain, positive SCALE; y =
  scale * (x + loc), logdet = H W sum(log|scale|)) and the uint8 buffer `initialized`
  (data-dependent init on the first training forward; model() marks it done).
- `InvConv2dLU`: LU-parameterised weight W = w_p @ (w_l * l_mask + l_eye) @ (w_u * u_mask +
  diag(s_sign * exp(w_s))): parameters `w_l`, `w_s` (log|s|), `w_u`; buffers `w_p`, `u_mask`,
  `l_mask`, `s_sign`, `l_eye`. Applied with F.conv2d(x, W[:, :, None, None]); logdet = H W
  sum(w_s).
- `AffineCoupling`: `net` = nn.Sequential(Conv2d 3x3 (padding 1), ReLU(inplace=True),
  Conv2d 1x1, ReLU(inplace=True), ZeroConv2d); `log_s, t = net(in_a).chunk(2, 1)`: the scale
  is the FIRST half of the output channels, the shift the SECOND; s = sigmoid(log_s + 2);
  out_b = (in_b + t) * s.
- `ZeroConv2d`: F.pad(x, [1, 1, 1, 1], value=0) then `conv` Conv2d 3x3 (padding 0), times
  exp(3 * `scale`) ([1, C, 1, 1]).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_zeroconv_pad_one -> ZeroConv2d pads with value=1 (rosinality's original line) instead
                            of 0, so the border cells of every coupling net's output change
  torch_lu_mask_diag     -> InvConv2dLU builds l_mask = tril(ones) INCLUDING the diagonal, so
                            the stored unit diagonal of w_l is added to l_eye (L's diagonal
                            becomes 2)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANNEL, IMG, N_BLOCK, N_FLOW, FILTER = 3, 8, 2, 2, 16
BATCH = 2
OWN_BUGS = {"torch_zeroconv_pad_one", "torch_lu_mask_diag"}
OTHER_BUGS = {"paddle_squeeze_hwc_order", "paddle_coupling_shift_after_scale"}


class ActNorm(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, in_channel, 1, 1))
        self.scale = nn.Parameter(torch.ones(1, in_channel, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    @torch.no_grad()
    def initialize(self, x):
        flat = x.permute(1, 0, 2, 3).contiguous().view(x.shape[1], -1)
        self.loc.data.copy_(-flat.mean(1).view(1, -1, 1, 1))
        self.scale.data.copy_(1 / (flat.std(1).view(1, -1, 1, 1) + 1e-6))

    def forward(self, x):
        _, _, height, width = x.shape
        if self.training and self.initialized.item() == 0:
            self.initialize(x)
            self.initialized.fill_(1)
        logdet = height * width * torch.sum(torch.log(torch.abs(self.scale)))
        return self.scale * (x + self.loc), logdet


class InvConv2dLU(nn.Module):
    def __init__(self, in_channel, mask_diag=False):
        super().__init__()
        weight = np.random.randn(in_channel, in_channel)
        q, _ = np.linalg.qr(weight)
        w_p, w_l, w_u = _lu(q.astype(np.float32))
        w_s = np.diag(w_u)
        w_u = np.triu(w_u, 1)
        u_mask = np.triu(np.ones_like(w_u), 1)
        l_mask = np.tril(np.ones_like(w_u)) if mask_diag else u_mask.T
        self.register_buffer("w_p", torch.from_numpy(w_p.copy()))
        self.register_buffer("u_mask", torch.from_numpy(u_mask.copy()))
        self.register_buffer("l_mask", torch.from_numpy(l_mask.copy()))
        self.register_buffer("s_sign", torch.sign(torch.from_numpy(w_s.copy())))
        self.register_buffer("l_eye", torch.eye(in_channel))
        self.w_l = nn.Parameter(torch.from_numpy(w_l.copy()))
        self.w_s = nn.Parameter(torch.log(torch.abs(torch.from_numpy(w_s.copy()))))
        self.w_u = nn.Parameter(torch.from_numpy(w_u.copy()))

    def calc_weight(self):
        weight = self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
            (self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s)))
        return weight.unsqueeze(2).unsqueeze(3)

    def forward(self, x):
        _, _, height, width = x.shape
        out = F.conv2d(x, self.calc_weight())
        return out, height * width * torch.sum(self.w_s)


def _lu(a):
    """a = p @ l @ u (partial pivoting; l unit lower, u upper), like scipy.linalg.lu."""
    n = a.shape[0]
    u = a.astype(np.float64).copy()
    lo = np.eye(n)
    perm = np.arange(n)
    for k in range(n - 1):
        piv = k + int(np.argmax(np.abs(u[k:, k])))
        if piv != k:
            u[[k, piv], :] = u[[piv, k], :]
            lo[[k, piv], :k] = lo[[piv, k], :k]
            perm[[k, piv]] = perm[[piv, k]]
        lo[k + 1:, k] = u[k + 1:, k] / u[k, k]
        u[k + 1:, :] -= np.outer(lo[k + 1:, k], u[k, :])
    p = np.eye(n)[:, perm]  # p @ (l @ u) == a, since (l @ u) = a[perm]
    return p.astype(np.float32), lo.astype(np.float32), np.triu(u).astype(np.float32)


class ZeroConv2d(nn.Module):
    def __init__(self, in_channel, out_channel, pad_value=0.0):
        super().__init__()
        self.pad_value = pad_value
        self.conv = nn.Conv2d(in_channel, out_channel, 3, padding=0)
        self.conv.weight.data.zero_()
        self.conv.bias.data.zero_()
        self.scale = nn.Parameter(torch.zeros(1, out_channel, 1, 1))

    def forward(self, x):
        out = F.pad(x, [1, 1, 1, 1], value=self.pad_value)
        out = self.conv(out)
        return out * torch.exp(self.scale * 3)


class AffineCoupling(nn.Module):
    def __init__(self, in_channel, filter_size=FILTER, pad_value=0.0):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_channel // 2, filter_size, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(filter_size, filter_size, 1),
            nn.ReLU(inplace=True),
            ZeroConv2d(filter_size, in_channel, pad_value),
        )

    def forward(self, x):
        in_a, in_b = x.chunk(2, 1)
        log_s, t = self.net(in_a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        out_b = (in_b + t) * s
        logdet = torch.sum(torch.log(s).view(x.shape[0], -1), 1)
        return torch.cat([in_a, out_b], 1), logdet


class Flow(nn.Module):
    def __init__(self, in_channel, pad_value=0.0, mask_diag=False):
        super().__init__()
        self.actnorm = ActNorm(in_channel)
        self.invconv = InvConv2dLU(in_channel, mask_diag)
        self.coupling = AffineCoupling(in_channel, pad_value=pad_value)

    def forward(self, x):
        out, logdet = self.actnorm(x)
        out, det1 = self.invconv(out)
        out, det2 = self.coupling(out)
        return out, logdet + det1 + det2


class Block(nn.Module):
    def __init__(self, in_channel, n_flow, split=True, pad_value=0.0, mask_diag=False):
        super().__init__()
        squeeze_dim = in_channel * 4
        self.squeeze = nn.PixelUnshuffle(2)
        self.flows = nn.ModuleList([Flow(squeeze_dim, pad_value, mask_diag) for _ in range(n_flow)])
        self.split = split

    def forward(self, x):
        out = self.squeeze(x)
        logdet = 0
        for flow in self.flows:
            out, det = flow(out)
            logdet = logdet + det
        z_new = None
        if self.split:
            out, z_new = out.chunk(2, 1)
        return out, logdet, z_new


class Glow(nn.Module):
    def __init__(self, pad_value=0.0, mask_diag=False):
        super().__init__()
        self.blocks = nn.ModuleList()
        n_channel = IN_CHANNEL
        for i in range(N_BLOCK):
            self.blocks.append(Block(n_channel, N_FLOW, split=i < N_BLOCK - 1, pad_value=pad_value,
                                     mask_diag=mask_diag))
            n_channel *= 2

    def forward(self, x):
        logdet = 0
        z_outs = []
        out = x
        for block in self.blocks:
            out, det, z_new = block(out)
            logdet = logdet + det
            if z_new is not None:
                z_outs.append(z_new.flatten(1))
        z_outs.append(out.flatten(1))
        return torch.cat(z_outs, 1), logdet


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_glow torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    np.random.seed(0)
    m = Glow(pad_value=1.0 if bug == "torch_zeroconv_pad_one" else 0.0, mask_diag=bug == "torch_lu_mask_diag")
    for mod in m.modules():
        if isinstance(mod, ActNorm):
            mod.initialized.fill_(1)  # as after loading a checkpoint: no data-dependent init
    return m.eval()


def _image():
    rng = np.random.default_rng(13)
    return (rng.random((BATCH, IN_CHANNEL, IMG, IMG)) - 0.5).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # (z [2, 192], logdet [2]): a Gaussian negative log-likelihood up to constants
    z, logdet = output
    return (0.5 * (z**2).sum(dim=1) - logdet).mean() / z.shape[1]

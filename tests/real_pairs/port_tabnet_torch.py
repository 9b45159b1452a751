"""Hand-written port, torch side: a TabNet classifier (Arik & Pfister) for tabular rows (written by "person B").

The same math as port_tabnet_paddle.py, re-implemented by hand in the style of dreamquark-ai's
pytorch-tabnet (`TabNetNoEmbeddings`): input `features` [8, 10] (positional), 3 decision steps,
n_d = n_a = 8, relaxation gamma 1.3, 2 shared + 2 step-specific GLU layers per feature
transformer, a final Linear(8, 3). It returns (logits [8, 3], M_loss), M_loss being the mean
sparsity entropy of the attention masks (the first element is the model output).

Torch idioms on this side:
- root `TabNetNoEmbeddings`: `encoder` (TabNetEncoder), `final_mapping` Linear(8, 3). The
  encoder returns the LIST of the three decision outputs relu(h[:, :8]); the root stacks and sums
  them.
- `TabNetEncoder` registers `initial_bn` (BatchNorm1d(10, momentum=0.01)), `initial_splitter`,
  `feat_transformers` (ModuleList of 3 FeatTransformer), `att_transformers` (ModuleList of 3
  AttentiveTransformer). The shared Linears are a LOCAL ModuleList handed to every
  FeatTransformer (not registered on the encoder); each GLU_Block keeps it as `shared_layers`
  and each GLU_Layer as `fc`, so torch names them after the first owner:
  `encoder.initial_splitter.shared.shared_layers.{0,1}` (each called 4 times per forward).
- `FeatTransformer`: `shared` = GLU_Block(first=True) built around the shared Linears and
  `specifics` = GLU_Block(first=False) with Linears of its own. `GLU_Block` keeps the layers in
  `glu_layers` and does the sqrt(0.5)-scaled residuals itself (the first layer of a `first`
  block has none).
- `GLU_Layer`: ONE fused `fc` Linear(in, 2 * 16, bias=False) (rows 0:16 value, 16:32 gate), its
  own `bn` = GBN(32) and x[:, :16] * sigmoid(x[:, 16:]). So every shared block has its own BN
  modules: only the Linears are shared.
- `GBN` (ghost batch norm): chunks the batch by virtual_batch_size (128 here, so one chunk of 8)
  and calls its child `bn` BatchNorm1d(momentum=0.02) per chunk.
- `AttentiveTransformer`: `fc` Linear(8, 10, bias=False), `bn` GBN(10), `selector` = `Sparsemax`
  module; called as (priors, processed_feat).
- `Sparsemax`: subtracts the row max, sorts descending, cumsum - 1, support rho * z_(rho) >
  cumsum - 1, tau = gathered cumsum / support size, clamp(z - tau, min=0).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_specifics_first        -> FeatTransformer builds its step-specific GLU_Block with
                                  first=True (copied from the shared one), so the first
                                  step-specific layer loses its residual
  torch_prior_after_sparsemax  -> AttentiveTransformer multiplies by the priors AFTER the
                                  sparsemax selector instead of before it
"""
import os

import numpy as np
import torch
from torch import nn

INPUT_DIM, OUTPUT_DIM = 10, 3
N_D, N_A, N_STEPS, GAMMA = 8, 8, 3, 1.3
N_INDEPENDENT, N_SHARED = 2, 2
VIRTUAL_BATCH_SIZE, MOMENTUM = 128, 0.02
BATCH = 8
OWN_BUGS = {"torch_specifics_first", "torch_prior_after_sparsemax"}
OTHER_BUGS = {"paddle_att_bn_eps", "paddle_sparsemax_ascending"}


class Sparsemax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        dim = self.dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input = input - max_val
        input_srt, _ = torch.sort(input, descending=True, dim=dim)
        input_cumsum = input_srt.cumsum(dim) - 1
        rhos = torch.arange(1, input.size(dim) + 1, device=input.device, dtype=input.dtype)
        support = rhos * input_srt > input_cumsum
        support_size = support.sum(dim=dim).unsqueeze(dim)
        tau = input_cumsum.gather(dim, support_size - 1)
        tau = tau / support_size.to(input.dtype)
        return torch.clamp(input - tau, min=0)


class GBN(nn.Module):
    """Ghost batch norm: one BatchNorm1d applied per virtual batch."""

    def __init__(self, input_dim, virtual_batch_size=128, momentum=0.01):
        super().__init__()
        self.input_dim = input_dim
        self.virtual_batch_size = virtual_batch_size
        self.bn = nn.BatchNorm1d(self.input_dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0)
        res = [self.bn(x_) for x_ in chunks]
        return torch.cat(res, dim=0)


class GLU_Layer(nn.Module):
    def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.output_dim = output_dim
        if fc:
            self.fc = fc
        else:
            self.fc = nn.Linear(input_dim, 2 * output_dim, bias=False)
        self.bn = GBN(2 * output_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)

    def forward(self, x):
        x = self.fc(x)
        x = self.bn(x)
        return torch.mul(x[:, : self.output_dim], torch.sigmoid(x[:, self.output_dim :]))


class GLU_Block(nn.Module):
    def __init__(self, input_dim, output_dim, n_glu=2, first=False, shared_layers=None,
                 virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.first = first
        self.shared_layers = shared_layers
        self.n_glu = n_glu
        self.glu_layers = nn.ModuleList()
        params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum}
        fc = shared_layers[0] if shared_layers else None
        self.glu_layers.append(GLU_Layer(input_dim, output_dim, fc=fc, **params))
        for glu_id in range(1, self.n_glu):
            fc = shared_layers[glu_id] if shared_layers else None
            self.glu_layers.append(GLU_Layer(output_dim, output_dim, fc=fc, **params))

    def forward(self, x):
        scale = torch.sqrt(torch.FloatTensor([0.5]).to(x.device))
        if self.first:  # the first layer has no residual (its input width may differ)
            x = self.glu_layers[0](x)
            layers_left = range(1, self.n_glu)
        else:
            layers_left = range(self.n_glu)
        for glu_id in layers_left:
            x = torch.add(x, self.glu_layers[glu_id](x))
            x = x * scale
        return x


class FeatTransformer(nn.Module):
    def __init__(self, input_dim, output_dim, shared_layers, n_glu_independent, virtual_batch_size=128,
                 momentum=0.02, specifics_first=False):
        super().__init__()
        params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum}
        self.shared = GLU_Block(input_dim, output_dim, n_glu=len(shared_layers), first=True,
                                shared_layers=shared_layers, **params)
        self.specifics = GLU_Block(output_dim, output_dim, n_glu=n_glu_independent, first=specifics_first,
                                   **params)

    def forward(self, x):
        x = self.shared(x)
        x = self.specifics(x)
        return x


class AttentiveTransformer(nn.Module):
    def __init__(self, input_dim, group_dim, virtual_batch_size=128, momentum=0.02, prior_after=False):
        super().__init__()
        self.prior_after = prior_after
        self.fc = nn.Linear(input_dim, group_dim, bias=False)
        self.bn = GBN(group_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)
        self.selector = Sparsemax(dim=-1)

    def forward(self, priors, processed_feat):
        x = self.fc(processed_feat)
        x = self.bn(x)
        if self.prior_after:
            x = self.selector(x)
            x = torch.mul(x, priors)
        else:
            x = torch.mul(x, priors)
            x = self.selector(x)
        return x


class TabNetEncoder(nn.Module):
    def __init__(self, input_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3, n_independent=2, n_shared=2, epsilon=1e-15,
                 virtual_batch_size=128, momentum=0.02, specifics_first=False, prior_after=False):
        super().__init__()
        self.input_dim, self.n_d, self.n_a, self.n_steps = input_dim, n_d, n_a, n_steps
        self.gamma, self.epsilon = gamma, epsilon
        self.initial_bn = nn.BatchNorm1d(self.input_dim, momentum=0.01)
        shared_feat_transform = nn.ModuleList()
        for i in range(n_shared):
            if i == 0:
                shared_feat_transform.append(nn.Linear(self.input_dim, 2 * (n_d + n_a), bias=False))
            else:
                shared_feat_transform.append(nn.Linear(n_d + n_a, 2 * (n_d + n_a), bias=False))
        params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum, "specifics_first": specifics_first}
        self.initial_splitter = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform, n_independent,
                                                **params)
        self.feat_transformers = nn.ModuleList()
        self.att_transformers = nn.ModuleList()
        for _step in range(n_steps):
            self.feat_transformers.append(
                FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform, n_independent, **params))
            self.att_transformers.append(
                AttentiveTransformer(n_a, self.input_dim, virtual_batch_size=virtual_batch_size, momentum=momentum,
                                     prior_after=prior_after))

    def forward(self, x, prior=None):
        x = self.initial_bn(x)
        if prior is None:
            prior = torch.ones(x.shape).to(x.device)
        M_loss = 0
        att = self.initial_splitter(x)[:, self.n_d :]
        steps_output = []
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss += torch.mean(torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1))
            prior = torch.mul(self.gamma - M, prior)
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = nn.ReLU()(out[:, : self.n_d])
            steps_output.append(d)
            att = out[:, self.n_d :]
        M_loss /= self.n_steps
        return steps_output, M_loss


class TabNetNoEmbeddings(nn.Module):
    def __init__(self, input_dim, output_dim, specifics_first=False, prior_after=False):
        super().__init__()
        self.encoder = TabNetEncoder(input_dim, N_D, N_A, N_STEPS, GAMMA, N_INDEPENDENT, N_SHARED,
                                     virtual_batch_size=VIRTUAL_BATCH_SIZE, momentum=MOMENTUM,
                                     specifics_first=specifics_first, prior_after=prior_after)
        self.final_mapping = nn.Linear(N_D, output_dim)

    def forward(self, x):
        steps_output, M_loss = self.encoder(x)
        res = torch.sum(torch.stack(steps_output, dim=0), dim=0)
        out = self.final_mapping(res)
        return out, M_loss


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tabnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TabNetNoEmbeddings(INPUT_DIM, OUTPUT_DIM, specifics_first=bug == "torch_specifics_first",
                           prior_after=bug == "torch_prior_after_sparsemax")
    return m.eval()


def _features():
    rng = np.random.default_rng(27)
    return (rng.standard_normal((BATCH, INPUT_DIM)) * 1.5 + 0.2).astype("float32")


def inputs():
    return (torch.from_numpy(_features()),), {}


def loss(output):
    # output = (logits [8, 3], M_loss); the loss uses the logits only
    return (output[0] ** 2).mean()

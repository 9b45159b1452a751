"""Hand-written port, torch side: RT-DETR's hybrid encoder, tiny (written by "person B", lyuwenyu RT-DETR PyTorch style).

The same math as port_rtdetr_encoder_paddle.py: inputs S3 [2, 8, 16, 16], S4 [2, 16, 8, 8],
S5 [2, 32, 4, 4] (positional), hidden 16; input projections (1x1 conv + BN), one post-norm AIFI
encoder layer (2 heads, FFN 32, GELU) on the S5 tokens with a 2-D sin-cos position embedding on
q / k, then the CCFM (top-down lateral conv + nearest x2 + CSPRepLayer, bottom-up stride-2 conv +
CSPRepLayer). The three outputs are flattened to tokens and concatenated: [2, 336, 16].

Torch idioms on this side:
- root `RTDETRHybridEncoder` registers `input_proj` (ModuleList of nn.Sequential(Conv2d,
  BatchNorm2d): numbered children `.0` / `.1`), then `encoder` (ModuleList of
  `TransformerEncoder` with `layers`), `lateral_convs`, `fpn_blocks`, `downsample_convs`,
  `pan_blocks`. The model takes the three maps positionally and packs them into a list for
  `encode(feats)`.
- `TransformerEncoderLayer`: `self_attn` = nn.MultiheadAttention(batch_first=True) with ONE
  PACKED `in_proj_weight` [48, 16] / `in_proj_bias` [48] (q | k | v rows) and `out_proj`;
  `linear1`, `dropout`, `linear2`, `norm1`, `norm2`, `dropout1`, `dropout2`, and the
  activation as a MODULE `activation` (nn.GELU) registered last.
- `ConvNormLayer` = conv, norm, act (nn.SiLU module, or nn.Identity when act is None) is used
  for every conv (lateral, downsample, CSP 1x1, and both RepVGG branches with act=None);
  `RepVggBlock` has conv1 (3x3), conv2 (1x1) and an `act` nn.SiLU module; `CSPRepLayer` has
  conv1, conv2, bottlenecks (nn.Sequential) and `conv3` = nn.Identity (called).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_tanh          -> the encoder layer's activation is nn.GELU(approximate="tanh")
                              (precision-level: |gelu_tanh - gelu| <= 4.7e-4)
  torch_repvgg_branch_act  -> RepVggBlock builds its 3x3 branch ConvNormLayer with act=act
                              instead of act=None, so that branch is SiLU'd before the sum
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANNELS = [8, 16, 32]
HIDDEN_DIM, NHEAD, DIM_FEEDFORWARD = 16, 2, 32
PE_TEMPERATURE = 10000.0
BATCH = 2
OWN_BUGS = {"torch_gelu_tanh", "torch_repvgg_branch_act"}
OTHER_BUGS = {"paddle_proj_bn_eps", "paddle_value_with_pos"}


def get_activation(act):
    if act is None:
        return nn.Identity()
    if act == "silu":
        return nn.SiLU()
    if act == "gelu":
        return nn.GELU()
    if act == "gelu_tanh":
        return nn.GELU(approximate="tanh")
    raise ValueError(act)


class ConvNormLayer(nn.Module):
    def __init__(self, ch_in, ch_out, kernel_size, stride, padding=None, bias=False, act=None):
        super().__init__()
        self.conv = nn.Conv2d(ch_in, ch_out, kernel_size, stride,
                              padding=(kernel_size - 1) // 2 if padding is None else padding, bias=bias)
        self.norm = nn.BatchNorm2d(ch_out)
        self.act = get_activation(act)

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class RepVggBlock(nn.Module):
    def __init__(self, ch_in, ch_out, act="silu", branch_act=False):
        super().__init__()
        self.conv1 = ConvNormLayer(ch_in, ch_out, 3, 1, padding=1, act=act if branch_act else None)
        self.conv2 = ConvNormLayer(ch_in, ch_out, 1, 1, padding=0, act=None)
        self.act = get_activation(act)

    def forward(self, x):
        y = self.conv1(x) + self.conv2(x)
        return self.act(y)


class CSPRepLayer(nn.Module):
    def __init__(self, in_channels, out_channels, num_blocks=2, expansion=1.0, act="silu", branch_act=False):
        super().__init__()
        hidden_channels = int(out_channels * expansion)
        self.conv1 = ConvNormLayer(in_channels, hidden_channels, 1, 1, act=act)
        self.conv2 = ConvNormLayer(in_channels, hidden_channels, 1, 1, act=act)
        self.bottlenecks = nn.Sequential(*[RepVggBlock(hidden_channels, hidden_channels, act=act,
                                                       branch_act=branch_act) for _ in range(num_blocks)])
        if hidden_channels != out_channels:
            self.conv3 = ConvNormLayer(hidden_channels, out_channels, 1, 1, act=act)
        else:
            self.conv3 = nn.Identity()

    def forward(self, x):
        x_1 = self.conv1(x)
        x_1 = self.bottlenecks(x_1)
        x_2 = self.conv2(x)
        return self.conv3(x_1 + x_2)


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.0, activation="gelu"):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.activation = get_activation(activation)

    @staticmethod
    def with_pos_embed(tensor, pos_embed):
        return tensor if pos_embed is None else tensor + pos_embed

    def forward(self, src, src_mask=None, pos_embed=None):
        residual = src
        q = k = self.with_pos_embed(src, pos_embed)
        src, _ = self.self_attn(q, k, value=src, attn_mask=src_mask)
        src = residual + self.dropout1(src)
        src = self.norm1(src)
        residual = src
        src = self.linear2(self.dropout(self.activation(self.linear1(src))))
        src = residual + self.dropout2(src)
        return self.norm2(src)


class TransformerEncoder(nn.Module):
    def __init__(self, encoder_layer, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([encoder_layer for _ in range(num_layers)])

    def forward(self, src, src_mask=None, pos_embed=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=src_mask, pos_embed=pos_embed)
        return output


class RTDETRHybridEncoder(nn.Module):
    def __init__(self, enc_act="gelu", branch_act=False):
        super().__init__()
        self.in_channels = IN_CHANNELS
        self.hidden_dim = HIDDEN_DIM
        self.input_proj = nn.ModuleList()
        for in_channel in IN_CHANNELS:
            self.input_proj.append(nn.Sequential(
                nn.Conv2d(in_channel, HIDDEN_DIM, kernel_size=1, bias=False),
                nn.BatchNorm2d(HIDDEN_DIM)))
        self.encoder = nn.ModuleList([TransformerEncoder(
            TransformerEncoderLayer(HIDDEN_DIM, NHEAD, DIM_FEEDFORWARD, 0.0, enc_act), 1)])
        self.lateral_convs = nn.ModuleList()
        self.fpn_blocks = nn.ModuleList()
        for _ in range(len(IN_CHANNELS) - 1, 0, -1):
            self.lateral_convs.append(ConvNormLayer(HIDDEN_DIM, HIDDEN_DIM, 1, 1, act="silu"))
            self.fpn_blocks.append(CSPRepLayer(HIDDEN_DIM * 2, HIDDEN_DIM, 2, act="silu", branch_act=branch_act))
        self.downsample_convs = nn.ModuleList()
        self.pan_blocks = nn.ModuleList()
        for _ in range(len(IN_CHANNELS) - 1):
            self.downsample_convs.append(ConvNormLayer(HIDDEN_DIM, HIDDEN_DIM, 3, 2, act="silu"))
            self.pan_blocks.append(CSPRepLayer(HIDDEN_DIM * 2, HIDDEN_DIM, 2, act="silu", branch_act=branch_act))

    @staticmethod
    def build_2d_sincos_position_embedding(w, h, embed_dim=256, temperature=10000.0):
        grid_w = torch.arange(int(w), dtype=torch.float32)
        grid_h = torch.arange(int(h), dtype=torch.float32)
        grid_w, grid_h = torch.meshgrid(grid_w, grid_h, indexing="ij")
        assert embed_dim % 4 == 0
        pos_dim = embed_dim // 4
        omega = torch.arange(pos_dim, dtype=torch.float32) / pos_dim
        omega = 1.0 / (temperature**omega)
        out_w = grid_w.flatten()[..., None] @ omega[None]
        out_h = grid_h.flatten()[..., None] @ omega[None]
        return torch.concat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], dim=1)[None, :, :]

    def encode(self, feats):
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        enc_ind = len(self.in_channels) - 1
        h, w = proj_feats[enc_ind].shape[2:]
        src_flatten = proj_feats[enc_ind].flatten(2).permute(0, 2, 1)
        pos_embed = self.build_2d_sincos_position_embedding(w, h, self.hidden_dim, PE_TEMPERATURE).to(src_flatten.device)
        memory = self.encoder[0](src_flatten, pos_embed=pos_embed)
        proj_feats[enc_ind] = memory.permute(0, 2, 1).reshape(-1, self.hidden_dim, h, w).contiguous()

        inner_outs = [proj_feats[-1]]
        for idx in range(len(self.in_channels) - 1, 0, -1):
            feat_high = inner_outs[0]
            feat_low = proj_feats[idx - 1]
            feat_high = self.lateral_convs[len(self.in_channels) - 1 - idx](feat_high)
            inner_outs[0] = feat_high
            upsample_feat = F.interpolate(feat_high, scale_factor=2.0, mode="nearest")
            inner_out = self.fpn_blocks[len(self.in_channels) - 1 - idx](torch.concat([upsample_feat, feat_low], dim=1))
            inner_outs.insert(0, inner_out)

        outs = [inner_outs[0]]
        for idx in range(len(self.in_channels) - 1):
            feat_low = outs[-1]
            feat_high = inner_outs[idx + 1]
            downsample_feat = self.downsample_convs[idx](feat_low)
            out = self.pan_blocks[idx](torch.concat([downsample_feat, feat_high], dim=1))
            outs.append(out)
        return outs

    def forward(self, s3, s4, s5):
        outs = self.encode([s3, s4, s5])
        return torch.cat([o.flatten(2).permute(0, 2, 1) for o in outs], dim=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_rtdetr_encoder torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RTDETRHybridEncoder(enc_act="gelu_tanh" if bug == "torch_gelu_tanh" else "gelu",
                            branch_act=bug == "torch_repvgg_branch_act")
    return m.eval()


def _feats():
    rng = np.random.default_rng(11)
    return [rng.standard_normal((BATCH, c, s, s)).astype("float32") for c, s in zip(IN_CHANNELS, (16, 8, 4))]


def inputs():
    return tuple(torch.from_numpy(a) for a in _feats()), {}


def loss(output):
    # encoder memory tokens [2, 336, 16]
    return (output**2).mean()

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_clip_train_paddle.py) the OpenAI-CLIP / open_clip way: the text tower lives at
the root (token_embedding, positional_embedding, transformer, ln_final, text_projection) and is
registered BEFORE the visual tower; logit_scale is registered last.

    token_embedding (64 x 32), positional_embedding [8, 32], emb_dropout, transformer.resblocks.0
        (causal), ln_final, text_projection [32, 24] (raw parameter), EOT pooling by argmax
    visual: conv1 (3->32, kernel 4, stride 4, no bias), class_embedding, positional_embedding
        [17, 32], ln_pre, transformer.resblocks.0, ln_post, head = nn.Linear(32, 24, bias=False)
    resblock: ln_1, attn = nn.MultiheadAttention(32, 4, bias=False, batch_first=True) (ONE packed
        in_proj_weight [96, 32], rows q | k | v; dropout 0), drop_1 (0.1), ln_2,
        mlp = Sequential(c_fc 32->64, gelu (exact), c_proj 64->32, drop (0.1))
    logit_scale: nn.Parameter(torch.ones([1]) * log(1 / 0.07)): shape [1], against the paddle side's
        0-d [] (paddlenlp's CLIP also uses [1]; and tests/train_pairs/verify_truth.py cannot copy
        weights into a 0-d torch tensor: np.ascontiguousarray turns a 0-d array into shape [1]);
        scale = exp(clamp(logit_scale, max=log 100)) (clamp then exp; paddle: exp then clip at 100)
Dropout 0.1: 5 calls per forward, same order and shapes as the paddle side (image block 2, text
embeddings 1, text block 2). Forward returns (logits_per_image, logits_per_text).

Loss: symmetric cross-entropy, labels arange(4). Optimizer: AdamW(lr 5e-4, betas (0.9, 0.98),
eps 1e-6) with two parameter groups, the open_clip way: no weight decay for ndim < 2 or names with
"bn" / "ln" / "bias" / "logit_scale", weight_decay 0.2 for the rest; clip_grad_norm_(1.0).

PADIFF_BUG (this side only):
  text_mlp_drop -> the text block's MLP dropout built from the config's attn_dropout (0.0, the
              attention-probability dropout) instead of dropout (0.1): the fields mixed up
  one_direction -> the loss keeps only the image->text direction: CE(logits_per_image, labels)
              (the text->image half and the / 2 forgotten)
"""
import math
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"text_mlp_drop", "one_direction"} | {"paddle_scale_decay"}  # the paddle side's, ignored here
CFG = dict(image_size=16, patch_size=4, width=32, heads=4, mlp_width=64, embed_dim=24, vocab_size=64,
           context_length=8, dropout=0.1, attn_dropout=0.0)
BATCH, EOT = 4, 63
LR, BETAS, EPS, WD, CLIP_NORM = 5e-4, (0.9, 0.98), 1e-6, 0.2, 1.0

_rng = np.random.default_rng(24)
IMAGES = _rng.standard_normal((BATCH, 3, 16, 16)).astype("float32")
TEXT = np.zeros((BATCH, 8), "int64")
for _b, _n in enumerate((8, 6, 5, 7)):
    TEXT[_b, :_n - 1] = _rng.integers(1, EOT, _n - 1)
    TEXT[_b, _n - 1] = EOT


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d, n_head, mlp_width, dropout, mlp_dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, n_head, dropout=CFG["attn_dropout"], bias=False, batch_first=True)
        self.drop_1 = nn.Dropout(dropout)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(OrderedDict([
            ("c_fc", nn.Linear(d, mlp_width)), ("gelu", nn.GELU()), ("c_proj", nn.Linear(mlp_width, d)),
            ("drop", nn.Dropout(mlp_dropout))]))

    def forward(self, x, attn_mask=None):
        h = self.ln_1(x)
        x = x + self.drop_1(self.attn(h, h, h, need_weights=False, attn_mask=attn_mask)[0])
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, d, heads, mlp_width, dropout, mlp_dropout, layers=1):
        super().__init__()
        self.resblocks = nn.ModuleList([ResidualAttentionBlock(d, heads, mlp_width, dropout, mlp_dropout)
                                        for _ in range(layers)])

    def forward(self, x, attn_mask=None):
        for r in self.resblocks:
            x = r(x, attn_mask)
        return x


class VisionTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        w, p = cfg["width"], cfg["patch_size"]
        self.conv1 = nn.Conv2d(3, w, kernel_size=p, stride=p, bias=False)
        self.class_embedding = nn.Parameter(torch.randn(w) * w ** -0.5)
        self.positional_embedding = nn.Parameter(torch.randn((cfg["image_size"] // p) ** 2 + 1, w) * w ** -0.5)
        self.ln_pre = nn.LayerNorm(w)
        self.transformer = Transformer(w, cfg["heads"], cfg["mlp_width"], cfg["dropout"], cfg["dropout"])
        self.ln_post = nn.LayerNorm(w)
        self.head = nn.Linear(w, cfg["embed_dim"], bias=False)

    def forward(self, x):
        x = self.conv1(x)
        x = x.reshape(x.shape[0], x.shape[1], -1).permute(0, 2, 1)
        cls = self.class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype)
        x = torch.cat([cls, x], dim=1) + self.positional_embedding.to(x.dtype)
        x = self.transformer(self.ln_pre(x))
        return self.head(self.ln_post(x[:, 0, :]))


class CLIP(nn.Module):
    def __init__(self, cfg, text_mlp_drop=False):
        super().__init__()
        w = cfg["width"]
        self.token_embedding = nn.Embedding(cfg["vocab_size"], w)
        self.positional_embedding = nn.Parameter(torch.empty(cfg["context_length"], w).normal_(std=0.01))
        self.emb_dropout = nn.Dropout(cfg["dropout"])
        mlp_p = cfg["attn_dropout"] if text_mlp_drop else cfg["dropout"]
        self.transformer = Transformer(w, cfg["heads"], cfg["mlp_width"], cfg["dropout"], mlp_p)
        self.ln_final = nn.LayerNorm(w)
        self.text_projection = nn.Parameter(torch.empty(w, cfg["embed_dim"]).normal_(std=w ** -0.5))
        self.visual = VisionTransformer(cfg)
        # shape [1] (not 0-d): see the module docstring
        self.logit_scale = nn.Parameter(torch.ones([1]) * np.log(1 / 0.07))

    def encode_image(self, image):
        return self.visual(image)

    def encode_text(self, text):
        t = text.shape[1]
        x = self.emb_dropout(self.token_embedding(text) + self.positional_embedding[:t])
        mask = torch.full((t, t), float("-inf"), dtype=x.dtype).triu_(1)
        x = self.ln_final(self.transformer(x, attn_mask=mask))
        return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection

    def forward(self, image, text):
        image_features = F.normalize(self.encode_image(image), dim=-1)
        text_features = F.normalize(self.encode_text(text), dim=-1)
        logit_scale = self.logit_scale.clamp(max=math.log(100)).exp()
        logits_per_image = logit_scale * image_features @ text_features.t()
        return logits_per_image, logits_per_image.t()


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = CLIP(CFG, text_mlp_drop=b == "text_mlp_drop")
    m.train()
    return m


def inputs():
    return (torch.from_numpy(IMAGES), torch.from_numpy(TEXT)), {}


def loss(output):
    logits_per_image, logits_per_text = output
    labels = torch.arange(logits_per_image.shape[0])
    if bug(BUGS) == "one_direction":
        return F.cross_entropy(logits_per_image, labels)
    return (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2


def optimizer(model):
    def exclude(n, p):
        return p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or "logit_scale" in n

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [{"params": [p for n, p in named if exclude(n, p)], "weight_decay": 0.0},
              {"params": [p for n, p in named if not exclude(n, p)], "weight_decay": WD}]
    return torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)

"""What padiff-trace knows about frameworks and model libraries — as data, in one place.

Adding a library's quirks means adding rows here, not code elsewhere:

* ``EQUIVALENT_TYPES``: which paddle layer class is which torch module class.
* ``LIBRARY_TYPES``: library classes that are a built-in layer in disguise
  (``transformers.pytorch_utils.Conv1D`` is a Linear stored ``[in, out]``).
* ``LAYOUTS``: how a stored tensor's axes map onto the canonical layout (torch's):
  paddle ``Linear.weight`` is ``[in, out]``, torch's ``[out, in]``.
* ``LOCAL_ALIASES``: names one framework gives a tensor the other names differently
  (paddle BatchNorm ``_mean`` = torch ``running_mean``).
* ``PACKED_ROLES``: tensors that hold several layers' tensors concatenated (torch
  ``MultiheadAttention.in_proj_weight`` = q|k|v), and what each part is.
* ``PACK_AXIS``: along which canonical axis packed tensors concatenate their parts.
* ``WEIGHT_NORM``: the names under which a weight-normed layer keeps g and v (``_reparam``);
  ``RAW_WEIGHTS``: those under which a spectral-normed layer keeps its weight.
* ``DERIVED_STATE``: buffers and frozen tensors a model computes rather than learns
  (rotary tables, position ids, BatchNorm's batch counter): never copied, compared.
* ``ROLE_SYNONYMS``: module names that mean the same role across libraries (weak
  evidence, used only to break ties the structure leaves open).
* ``CONVENTIONS``: values two correct frameworks compute differently by definition, with the
  formula that relates them; the analyzer checks the formula on the recorded values before
  it calls a difference a convention.
* The numerics settings a recording records and what each is known to do:
  ``_numerics_effects.py`` (``NUMERICS_EFFECTS``).

A class is resolved through its recorded class hierarchy (trace meta
``module_classes``): the first base that is a known framework layer or library class
gives its canonical type, so ``GPTLayerNorm(paddle.nn.LayerNorm)`` is a LayerNorm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "CALL_CONTAINERS",
    "PLACEHOLDERS",
    "CONVENTIONS",
    "Convention",
    "DERIVED_STATE",
    "DISTINCT_ROLES",
    "EQUIVALENT_TYPES",
    "FRAMEWORK_PACKAGES",
    "LAYOUTS",
    "LIBRARY_TYPES",
    "LAYER_INDEXED_LOCALS",
    "LOCAL_ALIASES",
    "LOOKUP_TABLES",
    "PACKED_LOCALS",
    "PACKED_ROLES",
    "PARAMETRIZED_UNDER",
    "POINTWISE_AS",
    "PACK_AXIS",
    "RNN_CELL_LAYERS",
    "AFFINE_ALIASES",
    "BACKWARD_WORDS",
    "RNN_GATES",
    "RNN_GATE_LOCALS",
    "QKV_PACKING",
    "RANDOM_LAYERS",
    "ROLE_FAMILIES",
    "ROLE_SYNONYMS",
    "TYPE_WORDS",
    "ROTARY_ROLES",
    "ROTARY_TABLES",
    "FUSED_ROLES",
    "TYPE_GROUPS",
    "UNQUALIFIED_CLASSES",
    "WEIGHT_NORM",
    "RAW_WEIGHTS",
]

# Top-level packages whose classes are the frameworks' own layers.
FRAMEWORK_PACKAGES: dict[str, tuple[str, ...]] = {"torch": ("torch",), "paddle": ("paddle",)}

# canonical name -> the class names (exact spelling) of both frameworks that denote it.
# A canonical name is the lower-cased torch spelling.
EQUIVALENT_TYPES: dict[str, tuple[str, ...]] = {
    "linear": ("Linear", "NonDynamicallyQuantizableLinear"),  # torch MHA out_proj
    "bilinear": ("Bilinear",),
    "conv1d": ("Conv1d", "Conv1D"),
    "conv2d": ("Conv2d", "Conv2D"),
    "conv3d": ("Conv3d", "Conv3D"),
    "convtranspose1d": ("ConvTranspose1d", "Conv1DTranspose"),
    "convtranspose2d": ("ConvTranspose2d", "Conv2DTranspose"),
    "convtranspose3d": ("ConvTranspose3d", "Conv3DTranspose"),
    "batchnorm": ("BatchNorm",),  # paddle's rank-generic BatchNorm: equivalent to all three
    "batchnorm1d": ("BatchNorm1d", "BatchNorm1D"),
    "batchnorm2d": ("BatchNorm2d", "BatchNorm2D"),
    "batchnorm3d": ("BatchNorm3d", "BatchNorm3D"),
    "syncbatchnorm": ("SyncBatchNorm",),
    "layernorm": ("LayerNorm",),
    "rmsnorm": ("RMSNorm",),
    "groupnorm": ("GroupNorm",),
    "instancenorm1d": ("InstanceNorm1d", "InstanceNorm1D"),
    "instancenorm2d": ("InstanceNorm2d", "InstanceNorm2D"),
    "instancenorm3d": ("InstanceNorm3d", "InstanceNorm3D"),
    "localresponsenorm": ("LocalResponseNorm",),
    "embedding": ("Embedding",),
    "embeddingbag": ("EmbeddingBag",),  # torch only: paddle sums an Embedding's rows itself
    "lstm": ("LSTM",),
    "gru": ("GRU",),
    "rnn": ("RNN", "SimpleRNN"),
    "lstmcell": ("LSTMCell",),
    "grucell": ("GRUCell",),
    "rnncell": ("RNNCell", "SimpleRNNCell"),
    "multiheadattention": ("MultiheadAttention", "MultiHeadAttention"),
    "transformerencoder": ("TransformerEncoder",),
    "transformerencoderlayer": ("TransformerEncoderLayer",),
    "transformerdecoder": ("TransformerDecoder",),
    "transformerdecoderlayer": ("TransformerDecoderLayer",),
    "transformer": ("Transformer",),
    "relu": ("ReLU",),
    "relu6": ("ReLU6",),
    "gelu": ("GELU",),
    "sigmoid": ("Sigmoid",),
    "logsigmoid": ("LogSigmoid",),
    "tanh": ("Tanh",),
    "softmax": ("Softmax",),
    "logsoftmax": ("LogSoftmax",),
    "softplus": ("Softplus",),
    "softsign": ("Softsign",),
    "silu": ("SiLU", "Silu", "Swish"),
    "mish": ("Mish",),
    "elu": ("ELU",),
    "selu": ("SELU",),
    "celu": ("CELU",),
    "glu": ("GLU",),
    "prelu": ("PReLU",),
    "leakyrelu": ("LeakyReLU",),
    "hardswish": ("Hardswish",),
    "hardsigmoid": ("Hardsigmoid",),
    "hardtanh": ("Hardtanh",),
    "hardshrink": ("Hardshrink",),
    "softshrink": ("Softshrink",),
    "tanhshrink": ("Tanhshrink",),
    "threshold": ("Threshold", "ThresholdedReLU"),
    "dropout": ("Dropout",),
    "dropout1d": ("Dropout1d", "Dropout1D"),
    "dropout2d": ("Dropout2d", "Dropout2D"),
    "dropout3d": ("Dropout3d", "Dropout3D"),
    "alphadropout": ("AlphaDropout",),
    "identity": ("Identity",),
    "flatten": ("Flatten",),
    "unflatten": ("Unflatten",),
    "maxpool1d": ("MaxPool1d", "MaxPool1D"),
    "maxpool2d": ("MaxPool2d", "MaxPool2D"),
    "maxpool3d": ("MaxPool3d", "MaxPool3D"),
    "avgpool1d": ("AvgPool1d", "AvgPool1D"),
    "avgpool2d": ("AvgPool2d", "AvgPool2D"),
    "avgpool3d": ("AvgPool3d", "AvgPool3D"),
    "adaptiveavgpool1d": ("AdaptiveAvgPool1d", "AdaptiveAvgPool1D"),
    "adaptiveavgpool2d": ("AdaptiveAvgPool2d", "AdaptiveAvgPool2D"),
    "adaptiveavgpool3d": ("AdaptiveAvgPool3d", "AdaptiveAvgPool3D"),
    "adaptivemaxpool1d": ("AdaptiveMaxPool1d", "AdaptiveMaxPool1D"),
    "adaptivemaxpool2d": ("AdaptiveMaxPool2d", "AdaptiveMaxPool2D"),
    "adaptivemaxpool3d": ("AdaptiveMaxPool3d", "AdaptiveMaxPool3D"),
    "upsample": ("Upsample",),
    "upsamplingnearest2d": ("UpsamplingNearest2d", "UpsamplingNearest2D"),
    "upsamplingbilinear2d": ("UpsamplingBilinear2d", "UpsamplingBilinear2D"),
    "pixelshuffle": ("PixelShuffle",),
    "pixelunshuffle": ("PixelUnshuffle",),
    "zeropad2d": ("ZeroPad2d", "ZeroPad2D"),
    "unfold": ("Unfold",),
    "fold": ("Fold",),
    "cosinesimilarity": ("CosineSimilarity",),
    "pairwisedistance": ("PairwiseDistance",),
    "sequential": ("Sequential",),
    "modulelist": ("ModuleList", "LayerList"),
    "moduledict": ("ModuleDict", "LayerDict"),
    "crossentropyloss": ("CrossEntropyLoss",),
    "mseloss": ("MSELoss",),
    "l1loss": ("L1Loss",),
    "nllloss": ("NLLLoss",),
    "bceloss": ("BCELoss",),
    "bcewithlogitsloss": ("BCEWithLogitsLoss",),
    "smoothl1loss": ("SmoothL1Loss",),
    "kldivloss": ("KLDivLoss",),
}

# Canonical names that are equivalent although spelled differently (generic vs ranked).
TYPE_GROUPS: tuple[frozenset[str], ...] = (frozenset({"batchnorm", "batchnorm1d", "batchnorm2d", "batchnorm3d"}),
                                           frozenset({"embedding", "embeddingbag"}))

# Normalisation layers (canonical types): a norm works for the layer beside it, which tells two
# norms of one shape apart where names and registration order do not (``_weighttensors.siblings``).
NORM_LAYERS: frozenset[str] = frozenset({"batchnorm", "batchnorm1d", "batchnorm2d", "batchnorm3d", "syncbatchnorm",
                                         "layernorm", "groupnorm", "rmsnorm", "instancenorm1d", "instancenorm2d",
                                         "instancenorm3d"})

# Lookup tables (canonical types): rows are ids. One library may keep a table with rows more than
# the other's (a padding row for empty bag slots, a vocabulary padded to a multiple of 64): the
# rows both have come first.
LOOKUP_TABLES: frozenset[str] = frozenset({"embedding", "embeddingbag"})

# Canonical types whose forward only calls its children in order: no code of its own between them.
CALL_CONTAINERS: frozenset[str] = frozenset({"sequential"})
# Canonical types that draw random numbers in training and pass their input on unchanged when
# off (eval mode, a rate of 0): a dropout.
RANDOM_LAYERS: frozenset[str] = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alphadropout"})
# Canonical types a library puts where a module is configured off (timm's dropout or norm of rate or
# kind "none"): it stands at that module's place.
PLACEHOLDERS: frozenset[str] = frozenset({"identity"})

# Library classes (qualified name) -> the canonical type they implement. Their own
# layout, where it differs from torch's, is in LAYOUTS under the same qualified name.
LIBRARY_TYPES: dict[str, str] = {
    "transformers.pytorch_utils.Conv1D": "linear",  # GPT-2 and relatives: a Linear stored [in, out]
    "transformers.modeling_utils.Conv1D": "linear",  # the same class in older transformers
}

# (owner, local tensor name) -> permutation taking the stored axes to the canonical
# (torch) layout. owner: a framework name with a canonical type ("paddle:linear"), or
# a qualified library class name. Absent: stored layout is canonical.
LAYOUTS: dict[tuple[str, str], tuple[int, ...]] = {
    ("paddle:linear", "weight"): (1, 0),  # paddle Linear weight is [in, out]
    ("transformers.pytorch_utils.Conv1D", "weight"): (1, 0),
    ("transformers.modeling_utils.Conv1D", "weight"): (1, 0),
}

# canonical type (or group) -> {local name in one framework: canonical local name}
LOCAL_ALIASES: dict[str, dict[str, str]] = {
    "batchnorm": {"_mean": "running_mean", "_variance": "running_var"},
    "prelu": {"_weight": "weight"},  # paddle's PReLU keeps its slopes as ``_weight``
}

# A class of a port's own (no known type) that names its affine pair the way TF, Keras and the
# papers do: the scale and shift of a norm it writes by hand (a global layer norm's ``gamma`` and
# ``beta``) are a known norm's ``weight`` and ``bias``, unless the module holds those names too.
AFFINE_ALIASES: dict[str, str] = {"gamma": "weight", "beta": "bias"}

# Tensors whose local name carries a layer index: a multi-layer RNN keeps layer k's tensors as
# ``weight_ih_l{k}`` (``_reverse`` for the backward direction) in both frameworks, where a port
# may stack k single-layer RNNs (``rnns.{k}.weight_ih_l0``). The index is a block index like a
# module path's; the direction stays part of the name. Canonical types -> pattern with the
# groups ``local``, ``layer`` and ``direction``.
LAYER_INDEXED_LOCALS: dict[str, str] = dict.fromkeys(
    ("lstm", "gru", "rnn"), r"^(?P<local>(?:weight|bias)_(?:ih|hh|hr))_l(?P<layer>\d+)(?P<direction>_reverse)?$"
)

# A single RNN cell holds what its layer holds for one layer and direction, under the same local
# names without the suffix (``weight_ih`` against ``weight_ih_l0`` / ``weight_ih_l0_reverse``):
# PaddleSpeech-style ports run one ``GRUCell`` per direction where the other side has one
# bidirectional ``nn.GRU``. Canonical cell type -> canonical layer type; the cell's direction is
# backward when a word of its module path says so (``BACKWARD_WORDS``: ``bw_cell``, ``cell_bw``).
RNN_CELL_LAYERS: dict[str, str] = {"grucell": "gru", "lstmcell": "lstm", "rnncell": "rnn"}
BACKWARD_WORDS: frozenset[str] = frozenset({"bw", "bwd", "backward", "reverse", "reversed", "rev"})

# The gates a recurrent layer stacks in the rows of its ``weight_ih``/``weight_hh`` and biases, by
# canonical layer type (a cell as its layer, ``RNN_CELL_LAYERS``): both frameworks order them
# i, f, g, o (LSTM) and r, z, n (GRU); a port's own cell may hold them in any order (TF's i, j, f, o).
RNN_GATES: dict[str, int] = {"lstm": 4, "gru": 3}
# the local names (prefixes: ``weight_ih_l0_reverse``) of the tensors whose rows are those gates
# (an LSTM's ``weight_hr`` projection is not)
RNN_GATE_LOCALS: tuple[str, ...] = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")

# Weight normalisation: the local name of v -> the local name of g beside it (torch
# ``parametrizations.weight_norm`` keeps them as ``original1``/``original0`` of
# ``<layer>.parametrizations.weight``; torch's legacy ``weight_norm`` and paddle's as
# ``weight_v``/``weight_g``). The layer's weight is g * v / |v| (``_reparam``).
WEIGHT_NORM: dict[str, str] = {"original1": "original0", "weight_v": "weight_g"}
# the local names under which a layer keeps its weight before a reparametrisation computes the
# weight it uses (spectral norm: paddle's and torch's legacy ``weight_orig``, a torch
# parametrization's ``original``): the layer's weight, in the layer's layout, as a v is
RAW_WEIGHTS: frozenset[str] = frozenset({"weight_orig", "original"})
# the module path suffix under which torch's parametrizations keep a layer's tensors: the
# tensors are the layer's own (``conv.parametrizations.weight.original1`` is conv's weight v)
PARAMETRIZED_UNDER = ".parametrizations.weight"

# A convolution whose kernel is all ones (a "pointwise" 1x1 conv) is a linear map over channels:
# canonical conv type -> the type it pairs with then, by a reshape ([out, in, 1, 1] ~ [out, in]).
POINTWISE_AS: dict[str, str] = {"conv1d": "linear", "conv2d": "linear", "conv3d": "linear"}

# (canonical type, local name) -> (canonical type, local name) of each part: the tensor is
# its parts concatenated along PACK_AXIS (torch MHA's in_proj_* hold q|k|v projections).
PACKED_ROLES: dict[tuple[str, str], tuple[str, str]] = {
    ("multiheadattention", "in_proj_weight"): ("linear", "weight"),
    ("multiheadattention", "in_proj_bias"): ("linear", "bias"),
    ("multiheadattention", "q_proj_weight"): ("linear", "weight"),
    ("multiheadattention", "k_proj_weight"): ("linear", "weight"),
    ("multiheadattention", "v_proj_weight"): ("linear", "weight"),
}

# A tensor of a class no table knows, named as a library class names a packed tensor
# (``in_proj_weight``, a bare parameter in a port's own attention written after torch's
# MultiheadAttention): the name says the role wherever it is defined.
PACKED_LOCALS: dict[str, tuple[str, str]] = {
    local: role for (owner, local), role in PACKED_ROLES.items() if owner == "multiheadattention" and local.startswith("in_proj_")
}

# (canonical type, canonical local name) -> the axes (in the canonical layout, tried in this
# order) along which one tensor may be several others concatenated. Axis 0 of a Linear weight:
# outputs side by side (fused q|k|v, fused gate|up). Axis 1: inputs side by side, one
# projection of concatenated features against a projection of each summed (the sum's bias
# is the parts' biases added: only one part may carry one for a transfer to be exact).
PACK_AXIS: dict[tuple[str, str], tuple[int, ...]] = {
    ("linear", "weight"): (0, 1),
    ("linear", "bias"): (0,),
    # a convolution's output channels side by side (a gated conv's filter | gate)
    ("conv1d", "weight"): (0,),
    ("conv1d", "bias"): (0,),
    ("conv2d", "weight"): (0,),
    ("conv2d", "bias"): (0,),
    # several lookup tables as one: each table's rows after the previous one's (a recommender's
    # per-field tables against one table read at per-field offsets)
    ("embedding", "weight"): (0,),
    # per-channel layers over channels side by side (one BatchNorm over a GLU's value | gate
    # against one for each half): their per-channel tensors, learned and running
    **{(norm, local): (0,) for norm in ("batchnorm", "batchnorm1d", "batchnorm2d", "batchnorm3d")
       for local in ("weight", "bias", "running_mean", "running_var")},
}

# How attention classes with a fused q|k|v projection pack it. Head by head: the packed axis
# is [groups, q|k|v of that group] (paddlenlp's fused ``qkv_proj``; BLOOM, Falcon and GPT-NeoX's
# ``query_key_value``); in blocks: [q of all heads | k | v] (GPT-2's ``c_attn``; torch MHA's
# in_proj is ``PACKED_ROLES``). Qualified class -> (its fused child, the attribute (a dotted
# path) holding the number of groups, the key/value heads; "" for blocks). The recorder writes
# the count into the trace (meta ``pack_groups``, keyed by the child's path; 1 for blocks); the
# matcher gives each part its share of every group, and regroups a pair of fused projections
# whose packings are both known and differ. A class not listed is taken to pack in blocks
# against separate projections, and is never regrouped.
QKV_PACKING: dict[str, tuple[str, str]] = {
    "paddlenlp.transformers.llama.modeling.LlamaAttention": ("qkv_proj", "num_key_value_heads"),
    "paddlenlp.transformers.gpt.modeling.MultiHeadAttention": ("qkv_proj", "num_attention_heads"),
    "paddlenlp.transformers.opt.modeling.MultiHeadAttention": ("qkv_proj", "num_heads"),
    "paddlenlp.transformers.bloom.modeling.BloomAttention": ("query_key_value", "num_heads"),
    "paddlenlp.transformers.rw.modeling.Attention": ("query_key_value", "num_kv"),
    "transformers.models.bloom.modeling_bloom.BloomAttention": ("query_key_value", "num_heads"),
    "transformers.models.falcon.modeling_falcon.FalconAttention": ("query_key_value", "num_kv_heads"),
    "transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXAttention": ("query_key_value", "config.num_attention_heads"),
    "transformers.models.gpt2.modeling_gpt2.GPT2Attention": ("c_attn", ""),
}

# Local names of buffers or frozen tensors that models derive (recompute) rather than
# learn. One side may keep them as state while the other computes them, and copying
# them would hide a bug in how they are computed (a wrong rotary base): they are never
# transferred; where both sides have them they are compared. Non-persistent buffers
# (not in the state dict) are treated the same way.
DERIVED_STATE: frozenset[str] = frozenset(
    {
        "num_batches_tracked",  # torch BatchNorm's batch counter
        "inv_freq",  # rotary embeddings
        "original_inv_freq",
        "cos_cached",
        "sin_cached",
        "_cos_cached",
        "_sin_cached",
        "cos_sin_cache",
        "position_ids",
        "token_type_ids",
        "masked_bias",  # GPT-2-style attention constants
        "causal_mask",
    }
)

# Rotary embeddings rotate pairs of a head's features: pairs (j, j + head_dim/2) in one layout
# ("half": HF's rotate_half) and (2j, 2j + 1) in the other ("interleaved": Meta's complex
# numbers). Two correct ports of one model then hold q and k projections whose output rows
# differ by that permutation in every head. A rotary buffer's local name -> how many head
# features one entry of its last axis stands for (``inv_freq`` holds head_dim / 2 frequencies).
ROTARY_TABLES: dict[str, int] = {"inv_freq": 2, "original_inv_freq": 2, "cos_cached": 1, "sin_cached": 1,
                                 "_cos_cached": 1, "_sin_cached": 1}
# the roles whose projections rotary embeddings rotate (``ROLE_SYNONYMS`` groups, by a member)
ROTARY_ROLES: tuple[str, ...] = ("q", "k")

# Role names across libraries (module leaf names, lower-case). Weak evidence only.
# Words of module names that only say the module's type (canonical type prefix -> words):
# ``fuse_bn`` and ``bn6`` are both BatchNorms, which every member of a group of BatchNorms is;
# the word tells none of them apart (``assign`` leaves it out of the names' evidence).
TYPE_WORDS: dict[str, frozenset[str]] = {
    "batchnorm": frozenset({"bn", "batchnorm"}),
    "syncbatchnorm": frozenset({"bn", "batchnorm"}),
    "layernorm": frozenset({"ln", "layernorm"}),
    "groupnorm": frozenset({"gn", "groupnorm"}),
    "rmsnorm": frozenset({"rmsnorm"}),
    "conv": frozenset({"conv"}),
}

ROLE_SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset({"q", "query", "q_proj", "wq", "q_lin", "query_proj"}),
    frozenset({"k", "key", "k_proj", "wk", "k_lin", "key_proj"}),
    frozenset({"v", "value", "v_proj", "wv", "v_lin", "value_proj"}),
    frozenset({"o", "out_proj", "o_proj", "wo_attn", "out_lin", "c_proj_attn"}),
    frozenset({"gate_proj", "w1", "wi_0", "gate"}),
    frozenset({"up_proj", "w3", "wi_1", "up"}),
    frozenset({"down_proj", "w2", "down"}),
    # a residual block's projection of its input (ResNet's ``downsample``, PaddleClas' ``short``)
    frozenset({"downsample", "shortcut", "short", "skip_proj", "proj_shortcut"}),
    # a detection head's two branches: the class scores and the box regression (PaddleDetection's
    # ``cls_conv_0``/``reg_conv_0`` against torchvision's ``classification_head``/``regression_head``)
    frozenset({"cls", "classification"}),
    frozenset({"reg", "regression"}),
)

# Roles that never stand for one another: an attention's query, key and value projections. Two
# tensors whose module names say two different ones of them are no pair, whatever their shapes
# and ranks say (``to_v`` is not ``to_q`` where the other side fuses k|v)
DISTINCT_ROLES: frozenset[str] = frozenset({"q", "k", "v"})

# Roles of one sublayer: an attention's projections, a gated feed-forward's. Two tensors whose
# module names say roles of two different ones (a fused q|k|v against a fused gate|up, a ``wq``
# against a ``w1``) are no pair whatever their shapes say: one author fuses the attention's
# projections and the other the feed-forward's.
ROLE_FAMILIES: tuple[frozenset[str], ...] = (frozenset({"q", "k", "v", "o"}), frozenset({"gate", "up", "down"}))

# The roles one fused projection holds, each named by one of its ROLE_SYNONYMS: attention's
# q|k|v, k|v (a cross-attention), q|k, and a gated MLP's gate|up. A run of parts whose names say
# these roles may be apart in registration order (Mixtral's w1, w2, w3); any other run must be
# neighbours (a q and an output projection are never one tensor).
FUSED_ROLES: tuple[frozenset[str], ...] = (
    frozenset({"q", "k", "v"}), frozenset({"k", "v"}), frozenset({"q", "k"}), frozenset({"gate", "up"}),
)

# (framework, bare class name) -> the library class it denotes, for traces recorded
# without a class hierarchy: in a torch model, "Conv1D" is transformers' Linear-like
# class (torch's own convolution is spelled "Conv1d").
UNQUALIFIED_CLASSES: dict[tuple[str, str], str] = {
    ("torch", "Conv1D"): "transformers.pytorch_utils.Conv1D",
}


@dataclass(frozen=True)
class Convention:
    """A value two correct frameworks compute differently by definition.

    ``check`` names the numeric test the analyzer runs on the recorded values (its registry
    of formulas, ``analyzer/judging/_conventions.py``); ``sides`` says which framework does what;
    ``text`` is the report's sentence (``{detail}`` is filled with what the check measured).
    """

    check: str
    sides: dict[str, str]
    text: str


# (canonical type group, canonical local name) -> the convention for that tensor
CONVENTIONS: dict[tuple[str, str], Convention] = {
    ("batchnorm", "running_var"): Convention(
        check="running_var_bessel",
        sides={"paddle": "biased", "torch": "unbiased"},
        text=(
            "BatchNorm running variance: Paddle updates it with the biased batch variance, torch with the "
            "unbiased one (x n/(n-1)); {detail} — a framework convention, not a bug"
        ),
    ),
}


# optimizer algorithm -> how paddle's and torch's update rules differ by definition, given
# the same settings (the analyzer names it when the settings agree and the update differs)
OPTIMIZER_CONVENTIONS: dict[str, str] = {
    "rmsprop": (
        "RMSProp: torch divides by sqrt(v) + eps, Paddle by sqrt(v + eps) (epsilon inside the square root), "
        "and with momentum Paddle keeps lr inside the momentum buffer (mom = mu*mom + lr*g/denom; p -= mom) where "
        "torch multiplies after it (b = mu*b + g/denom; p -= lr*b); no epsilon makes them agree wherever "
        "(1-rho)*g^2 is not much larger than eps — a framework convention, not a bug"
    ),
    "adamax": (
        "Adamax: torch keeps u = max(beta2*u, |g| + eps), Paddle u = max(beta2*u + eps, |g|) (epsilon added "
        "before or after the max): updates differ by about eps/|g| relative — a framework convention, not a bug"
    ),
}

# optimizer settings that scale the learning rate inside the update, by the update's index t (0 for
# the first): setting -> (what it is, factor(value, t)). The analyzer compares the rate each update
# used, so a decay kept in the optimizer (torch Adagrad's ``lr_decay``) agrees with the same decay
# kept in a scheduler (Paddle's ``InverseTimeDecay``) instead of differing as a setting
OPTIMIZER_LR_FACTORS: dict[str, tuple[str, Callable[[float, int], float]]] = {
    "lr_decay": ("inverse-time decay inside the optimizer, lr / (1 + t x lr_decay)", lambda k, t: 1.0 / (1.0 + t * k)),
}

# optimizer algorithm -> framework -> the update rule it uses (``analyzer/judging/_optreplay.py``
# replays each side's first update from its own recorded weights and gradients, so a named
# convention is checked on the numbers before it excuses a difference)
OPTIMIZER_UPDATE_RULES: dict[str, dict[str, str]] = {
    "rmsprop": {"torch": "rmsprop_eps_outside_sqrt", "paddle": "rmsprop_eps_inside_sqrt"},
    "adamax": {"torch": "adamax_eps_inside_max", "paddle": "adamax_eps_outside_max"},
}

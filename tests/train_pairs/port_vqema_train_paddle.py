"""Hand-written port in TRAINING mode, paddle side (written by "person A", the DeepMind Sonnet
VQ-VAE example's layout): a tiny VQ-VAE whose codebook is learned by exponential moving averages,
3 steps, a new minibatch every step.

    VQVAE: registers _encoder, _pre_vq_conv, _vq_vae, _decoder
      _encoder (Encoder): _conv_1 (Conv2D 3 -> 16, k 4, stride 2, pad 1), _residual (Residual:
          _conv_3x3 Conv2D 16 -> 8 k 3 pad 1, _dropout Dropout(0.1), _conv_1x1 Conv2D 8 -> 16;
          x + conv_1x1(dropout(relu(conv_3x3(relu(x)))))); relu(conv_1) before, relu after
          (paddle functional relu: no module calls)
      _pre_vq_conv: Conv2D 16 -> 4, k 1
      _vq_vae (VectorQuantizerEMA, Sonnet v1's VectorQuantizerEMA): 16 codes of dimension 4;
          BUFFERS _embedding [16, 4], _ema_cluster_size [16], _ema_w [16, 4] (register_buffer,
          persistable); takes NCHW, works in NHWC; returns (loss, quantized NCHW, perplexity)
      _decoder (Decoder): _conv_1 (Conv2D 4 -> 16, k 3, pad 1), _residual (as the encoder's),
          relu, _conv_trans_1 (Conv2DTranspose 16 -> 3, k 4, stride 2, pad 1)
    forward(x [8, 3, 8, 8]) -> (x_recon [8, 3, 8, 8], vq_loss, perplexity)

Vector quantizer: distances |z|^2 - 2 z E^T + |E|^2 (the Sonnet expansion), argmin, one-hot
encodings, quantized = encodings @ E (the codebook BEFORE this step's update); e_latent_loss =
mse(stop_gradient(quantized), z), loss = 0.25 * e_latent_loss (commitment, inside the layer);
straight-through quantized = z + stop_gradient(quantized - z).
EMA (in forward, train mode only, under no_grad, written by REASSIGNING the buffers):
    _ema_cluster_size = 0.99 * _ema_cluster_size + 0.01 * sum(encodings, 0)
    _ema_w = 0.99 * _ema_w + 0.01 * encodings^T @ flat_z
    n = sum(_ema_cluster_size); cs = (_ema_cluster_size + 1e-5) / (n + 16 * 1e-5) * n  (Laplace)
    _embedding = _ema_w / cs[:, None]
Data: a fixed training set of 24 RGB images 3 x 8 x 8 (smooth random patterns in (0, 1), numpy
default_rng(13900)); inputs(step) is images [8 step : 8 step + 8]; data_variance = np.var of the
whole training set (Sonnet's example).
Loss: mse(x_recon, x) / data_variance + vq_loss.
Optimizer: Adam(learning_rate 1e-3) over the parameters (the encoder, pre-VQ conv and decoder; the
codebook is not a parameter).
Init (person A, "trained-looking"): numpy default_rng(139): conv weights N(0, sqrt(2 / fan_in)),
biases N(0, 0.05); the codebook: 12 codes near encoder outputs of warm-up images (eval mode,
default_rng(13901)) and 4 rarely used codes far off; EMA cluster sizes from those warm-up
assignments (live 2.6..34, rare 0.004..0.16), _ema_w = embedding * smoothed cluster sizes.
Argmin margins (clean, both sides, fp32 and fp64, dropout off or shared masks, 3 steps): the
nearest code is at least 0.27 % (4.4e-4 absolute) closer than the second: no ties.

PADIFF_BUG (this side only):
  paddle_dec_dropout_unset -> the decoder's Residual built without the dropout argument:
              Residual(16, 8) keeps its default dropout 0.0 (the encoder's gets 0.1)
  paddle_batch_variance -> the reconstruction error divided by the variance of the current batch
              (paddle.var(x), unbiased) instead of the training set's data_variance
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_dec_dropout_unset", "paddle_batch_variance"} | {"torch_avg_div_inplace"}  # the torch side's, ignored here
IMG, C_IN, BATCH, N_TRAIN = 8, 3, 8, 24
HIDDEN, RES_HIDDEN, EMB_DIM, N_EMB = 16, 8, 4, 16
DROPOUT = 0.1
COMMITMENT, DECAY, EPSILON = 0.25, 0.99, 1e-5
LR = 1e-3
N_LIVE = 12

_BATCH = {}


def _images(seed, n):
    """Smooth random patterns in (0, 1): a sigmoid of a few random 2-D cosines per channel."""
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.arange(IMG), np.arange(IMG), indexing="ij")
    out = np.empty((n, C_IN, IMG, IMG))
    for i in range(n):
        for c in range(C_IN):
            f = rng.normal(0.0, 0.8, (3, 2))
            ph = rng.uniform(0.0, 2 * np.pi, 3)
            amp = rng.normal(0.0, 1.0, 3)
            field = sum(a * np.cos(fy * yy + fx * xx + p) for a, (fy, fx), p in zip(amp, f, ph))
            out[i, c] = 1.0 / (1.0 + np.exp(-(field + rng.normal(0.0, 0.5))))
    return out.astype("float32")


TRAIN_IMAGES = _images(13900, N_TRAIN)
DATA_VARIANCE = float(np.var(TRAIN_IMAGES))


class Residual(nn.Layer):
    def __init__(self, channels, hidden, dropout=0.0):
        super().__init__()
        self._conv_3x3 = nn.Conv2D(channels, hidden, 3, padding=1)
        self._dropout = nn.Dropout(dropout)
        self._conv_1x1 = nn.Conv2D(hidden, channels, 1)

    def forward(self, x):
        h = self._conv_3x3(F.relu(x))
        h = self._dropout(F.relu(h))
        return x + self._conv_1x1(h)


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self._conv_1 = nn.Conv2D(C_IN, HIDDEN, 4, stride=2, padding=1)
        self._residual = Residual(HIDDEN, RES_HIDDEN, dropout=DROPOUT)

    def forward(self, x):
        return F.relu(self._residual(F.relu(self._conv_1(x))))


class Decoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self._conv_1 = nn.Conv2D(EMB_DIM, HIDDEN, 3, padding=1)
        if bug(BUGS) == "paddle_dec_dropout_unset":
            self._residual = Residual(HIDDEN, RES_HIDDEN)
        else:
            self._residual = Residual(HIDDEN, RES_HIDDEN, dropout=DROPOUT)
        self._conv_trans_1 = nn.Conv2DTranspose(HIDDEN, C_IN, 4, stride=2, padding=1)

    def forward(self, z):
        return self._conv_trans_1(F.relu(self._residual(self._conv_1(z))))


class VectorQuantizerEMA(nn.Layer):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay, epsilon=1e-5):
        super().__init__()
        self._num_embeddings = num_embeddings
        self._embedding_dim = embedding_dim
        self._commitment_cost = commitment_cost
        self._decay = decay
        self._epsilon = epsilon
        self.register_buffer("_embedding", paddle.normal(0.0, 1.0, [num_embeddings, embedding_dim]))
        self.register_buffer("_ema_cluster_size", paddle.zeros([num_embeddings]))
        self.register_buffer("_ema_w", self._embedding.clone())

    def forward(self, inputs):
        z = inputs.transpose([0, 2, 3, 1])  # NCHW -> NHWC
        flat_z = z.reshape([-1, self._embedding_dim])
        distances = (paddle.sum(flat_z ** 2, axis=1, keepdim=True)
                     - 2 * paddle.matmul(flat_z, self._embedding, transpose_y=True)
                     + paddle.sum(self._embedding ** 2, axis=1))
        encoding_indices = paddle.argmin(distances, axis=1)
        encodings = F.one_hot(encoding_indices, self._num_embeddings).astype(flat_z.dtype)
        quantized = paddle.matmul(encodings, self._embedding).reshape(z.shape)

        if self.training:
            with paddle.no_grad():
                flat = flat_z.detach()
                self._ema_cluster_size = (self._ema_cluster_size * self._decay
                                          + (1 - self._decay) * paddle.sum(encodings, axis=0))
                dw = paddle.matmul(encodings, flat, transpose_x=True)
                self._ema_w = self._ema_w * self._decay + (1 - self._decay) * dw
                n = paddle.sum(self._ema_cluster_size)
                cluster_size = ((self._ema_cluster_size + self._epsilon)
                                / (n + self._num_embeddings * self._epsilon) * n)
                self._embedding = self._ema_w / cluster_size.unsqueeze(1)

        e_latent_loss = F.mse_loss(quantized.detach(), z)
        loss = self._commitment_cost * e_latent_loss
        quantized = z + (quantized - z).detach()  # straight-through estimator
        avg_probs = paddle.mean(encodings, axis=0)
        perplexity = paddle.exp(-paddle.sum(avg_probs * paddle.log(avg_probs + 1e-10)))
        return loss, quantized.transpose([0, 3, 1, 2]), perplexity


class VQVAE(nn.Layer):
    def __init__(self):
        super().__init__()
        self._encoder = Encoder()
        self._pre_vq_conv = nn.Conv2D(HIDDEN, EMB_DIM, 1)
        self._vq_vae = VectorQuantizerEMA(N_EMB, EMB_DIM, COMMITMENT, DECAY, EPSILON)
        self._decoder = Decoder()

    def forward(self, x):
        z = self._pre_vq_conv(self._encoder(x))
        loss, quantized, perplexity = self._vq_vae(z)
        x_recon = self._decoder(quantized)
        return x_recon, loss, perplexity


def _init(m):
    """Trained-looking weights and codebook state (numpy, seeded)."""
    rng = np.random.default_rng(139)
    for name, p in m.named_parameters():
        if p.ndim == 4:
            fan_in = int(np.prod(p.shape[1:])) if "_conv_trans" not in name else int(p.shape[0] * np.prod(p.shape[2:]))
            v = rng.normal(0.0, np.sqrt(2.0 / fan_in), p.shape)
        else:
            v = rng.normal(0.0, 0.05, p.shape)
        p.set_value(v.astype("float32"))
    # codebook: live codes near encoder outputs of warm-up images, a few rarely used ones far off
    m.eval()
    with paddle.no_grad():
        z = m._pre_vq_conv(m._encoder(paddle.to_tensor(_images(13901, 16))))
    flat = z.transpose([0, 2, 3, 1]).reshape([-1, EMB_DIM]).numpy().astype("float64")
    sd = flat.std(0)
    live = flat[rng.choice(len(flat), N_LIVE, replace=False)] + rng.normal(0.0, 0.1, (N_LIVE, EMB_DIM)) * sd
    rare = flat.mean(0) + rng.normal(0.0, 1.0, (N_EMB - N_LIVE, EMB_DIM)) * 3.0 * sd
    codebook = np.concatenate([live, rare])
    rng.shuffle(codebook)
    d = ((flat[:, None, :] - codebook[None]) ** 2).sum(-1)
    counts = np.bincount(d.argmin(1), minlength=N_EMB) * (BATCH / 16.0)
    cluster = counts * rng.uniform(0.8, 1.2, N_EMB) + np.exp(rng.uniform(np.log(0.004), np.log(0.3), N_EMB))
    n = cluster.sum()
    smoothed = (cluster + EPSILON) / (n + N_EMB * EPSILON) * n
    vq = m._vq_vae
    vq._embedding.set_value(codebook.astype("float32"))
    vq._ema_cluster_size.set_value(cluster.astype("float32"))
    vq._ema_w.set_value((codebook * smoothed[:, None]).astype("float32"))
    m.train()


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(139)
    m = VQVAE()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    x = TRAIN_IMAGES[BATCH * step:BATCH * (step + 1)]
    _BATCH["x"] = x
    return (paddle.to_tensor(x),), {}


def loss(output):
    x_recon, vq_loss, _ = output
    x = paddle.to_tensor(_BATCH["x"]).astype(x_recon.dtype)
    if bug(BUGS) == "paddle_batch_variance":
        recon_error = F.mse_loss(x_recon, x) / paddle.var(x)
    else:
        recon_error = F.mse_loss(x_recon, x) / DATA_VARIANCE
    return recon_error + vq_loss


def optimizer(model):
    return paddle.optimizer.Adam(learning_rate=LR, parameters=model.parameters())

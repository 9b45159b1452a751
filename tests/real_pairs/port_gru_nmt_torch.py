"""Hand-written port, torch side: a tiny attention-based GRU encoder-decoder for translation (written by "person B").

The same math as port_gru_nmt_paddle.py, re-implemented by hand in the style of bentrevett's
pytorch-seq2seq tutorial 3 ("Neural Machine Translation by Jointly Learning to Align and
Translate"): inputs `src` [2, 7] and teacher-forced `trg` [2, 5] int64 (batch-first at the
model's interface, positional), output logits [2, 5, 20]. Vocab 20, embedding 12, encoder GRU 16
per direction, decoder GRU 16, attention 16; no padding, no mask.

Torch idioms on this side:
- root `Seq2Seq` registers `encoder`, `decoder`; its forward transposes the ids to
  SEQUENCE-FIRST ([L, B]), runs the encoder once, then calls the decoder ONCE PER TARGET STEP
  (teacher forcing: the input at step t is trg[t]), writing each step's prediction into a zeros
  tensor [T, B, V], and returns it permuted back to [B, T, V].
- `Encoder`: `embedding`, `rnn` = ONE nn.GRU(12, 16, bidirectional=True) (sequence-first),
  `fc` Linear(32, 16) and `dropout` nn.Dropout(0.1) (identity in eval). Returns (outputs
  [L, B, 32], hidden = tanh(fc(cat(hidden[-2], hidden[-1])))): the bridge lives in the encoder.
- `Attention`: ONE packed `attn` Linear(16 + 32, 16) over cat(s repeated over the source, H)
  (columns 0:16 act on the decoder state, 16:48 on the encoder outputs) and `v` Linear(16, 1,
  bias=False); returns the softmax weights [B, L] only (the context is computed in the decoder
  with torch.bmm).
- `Decoder` registers `attention`, `embedding`, `rnn` = nn.GRU(12 + 32, 16) run for ONE step
  (torch's [r | z | n] gate layout), `fc_out` Linear(16 + 32 + 12, 20), `dropout`. The GRU input
  is cat(embedded, weighted); the prediction reads cat(output, weighted, embedded).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_rnn_input_order   -> the decoder feeds its GRU cat(weighted, embedded) instead of
                             cat(embedded, weighted) (same width, the weight columns now read the
                             wrong features)
  torch_attn_softmax_bf16 -> the attention softmax is computed in bfloat16 and cast back
                             (left over from a mixed-precision run; precision-level)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

INPUT_DIM = OUTPUT_DIM = 20
ENC_EMB_DIM = DEC_EMB_DIM = 12
ENC_HID_DIM = DEC_HID_DIM = 16
DROPOUT = 0.1
OWN_BUGS = {"torch_rnn_input_order", "torch_attn_softmax_bf16"}
OTHER_BUGS = {"paddle_gru_update_flip", "paddle_bwd_not_flipped_back"}


class Encoder(nn.Module):
    def __init__(self, input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, emb_dim)
        self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional=True)
        self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src):
        # src = [src len, batch size]
        embedded = self.dropout(self.embedding(src))
        outputs, hidden = self.rnn(embedded)
        # outputs = [src len, batch size, enc hid dim * 2]; hidden = [2, batch size, enc hid dim]
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
        return outputs, hidden


class Attention(nn.Module):
    def __init__(self, enc_hid_dim, dec_hid_dim, bf16_softmax=False):
        super().__init__()
        self.bf16_softmax = bf16_softmax
        self.attn = nn.Linear((enc_hid_dim * 2) + dec_hid_dim, dec_hid_dim)
        self.v = nn.Linear(dec_hid_dim, 1, bias=False)

    def forward(self, hidden, encoder_outputs):
        # hidden = [batch size, dec hid dim]; encoder_outputs = [src len, batch size, enc hid dim * 2]
        src_len = encoder_outputs.shape[0]
        hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
        encoder_outputs = encoder_outputs.permute(1, 0, 2)
        energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2)))
        attention = self.v(energy).squeeze(2)  # [batch size, src len]
        if self.bf16_softmax:
            return F.softmax(attention.bfloat16(), dim=1).float()
        return F.softmax(attention, dim=1)


class Decoder(nn.Module):
    def __init__(self, output_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout, attention,
                 context_first=False):
        super().__init__()
        self.output_dim = output_dim
        self.context_first = context_first
        self.attention = attention
        self.embedding = nn.Embedding(output_dim, emb_dim)
        self.rnn = nn.GRU((enc_hid_dim * 2) + emb_dim, dec_hid_dim)
        self.fc_out = nn.Linear((enc_hid_dim * 2) + dec_hid_dim + emb_dim, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input, hidden, encoder_outputs):
        # input = [batch size]; hidden = [batch size, dec hid dim]
        input = input.unsqueeze(0)
        embedded = self.dropout(self.embedding(input))  # [1, batch size, emb dim]
        a = self.attention(hidden, encoder_outputs).unsqueeze(1)  # [batch size, 1, src len]
        encoder_outputs = encoder_outputs.permute(1, 0, 2)
        weighted = torch.bmm(a, encoder_outputs).permute(1, 0, 2)  # [1, batch size, enc hid dim * 2]
        if self.context_first:
            rnn_input = torch.cat((weighted, embedded), dim=2)
        else:
            rnn_input = torch.cat((embedded, weighted), dim=2)
        output, hidden = self.rnn(rnn_input, hidden.unsqueeze(0))
        embedded = embedded.squeeze(0)
        output = output.squeeze(0)
        weighted = weighted.squeeze(0)
        prediction = self.fc_out(torch.cat((output, weighted, embedded), dim=1))
        return prediction, hidden.squeeze(0)


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, trg):
        src, trg = src.permute(1, 0), trg.permute(1, 0)  # -> [len, batch size]
        trg_len, batch_size = trg.shape
        outputs = torch.zeros(trg_len, batch_size, self.decoder.output_dim)
        encoder_outputs, hidden = self.encoder(src)
        for t in range(trg_len):
            output, hidden = self.decoder(trg[t], hidden, encoder_outputs)
            outputs[t] = output
        return outputs.permute(1, 0, 2)  # [batch size, trg len, output dim]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gru_nmt torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    attn = Attention(ENC_HID_DIM, DEC_HID_DIM, bf16_softmax=bug == "torch_attn_softmax_bf16")
    enc = Encoder(INPUT_DIM, ENC_EMB_DIM, ENC_HID_DIM, DEC_HID_DIM, DROPOUT)
    dec = Decoder(OUTPUT_DIM, DEC_EMB_DIM, ENC_HID_DIM, DEC_HID_DIM, DROPOUT, attn,
                  context_first=bug == "torch_rnn_input_order")
    return Seq2Seq(enc, dec).eval()


def _ids():
    rng = np.random.default_rng(35)
    src = rng.integers(3, INPUT_DIM, size=(2, 7)).astype("int64")
    trg = rng.integers(3, OUTPUT_DIM, size=(2, 5)).astype("int64")
    trg[:, 0] = 1  # <sos>
    return src, trg


def inputs():
    src, trg = _ids()
    return (torch.from_numpy(src), torch.from_numpy(trg)), {}


def loss(output):
    # logits [2, 5, 20]
    return (output**2).mean()

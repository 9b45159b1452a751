"""The real pairs as a markdown table: each family clean and with each planted bug.

For every case, ``padiff-trace run <family>_paddle.py <family>_torch.py`` as a user types it
(``PADIFF_BUG`` set for a bug; each spec plants only its own side's bugs), then per row: the
exit code, the module the first divergence was named at on each side
(``first_divergence.located``, else the first differing pair's modules), whether that is what
``<family>_truth.json`` says (clean: exit 0; bug: exit 1 and both modules exactly the
truth's, at the truth's ``first_step`` when it names one; a bug whose truth says ``"where":
"optimizer"``: exit 1 and the report's diagnosis saying the optimizer update differs), and
the wall time of the run (both recordings and the comparison).

    python tests/real_pairs/table.py                 # all families, runs under a temp dir
    python tests/real_pairs/table.py gpt llama --out runs/table
    python tests/real_pairs/table.py --design        # the families the rules were designed on
    python tests/real_pairs/table.py --held-out      # the families held out, measured last
    python tests/real_pairs/table.py --markdown docs/real-pairs.md   # the whole corpus, as docs

Families live in tests/real_pairs/ (paddlenlp vs transformers), tests/vision_pairs/
(paddle.vision vs torchvision; needs torchvision in .vision-site, which `make test` installs) and
tests/train_pairs/ (training-mode twins: dropout on, an optimizer, the steps their truth's
``flags`` ask for).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PAIR_DIRS = (HERE, HERE.parent / "vision_pairs", HERE.parent / "train_pairs")
logger = logging.getLogger("real_pairs.table")

# Declared before the general rules of issue 24 were designed, and measured on last: the tool
# is judged on families it was not tuned on. Never move a family out of this set because it fails.
HELD_OUT = frozenset({"t5", "mt5", "xlnet", "deberta", "mpnet", "pegasus", "funnel", "rembert",
                      "densenet121", "shufflenet_v2_x0_5",
                      # vision pairs added after the rules were designed, never looked at before
                      "alexnet", "inception_v3", "resnext50_32x4d", "squeezenet1_0", "wide_resnet50_2",
                      # training-mode twins (dropout on, AdamW/momentum, 3 steps), written in session 15
                      # by a helper that never ran the tool on them, measured once the rules were in
                      "bert_train", "gpt_train", "llama_train", "t5_train", "mobilenet_v2_train",
                      # session 18: the families both libraries ship beyond the shared notes' list,
                      # written by helpers that never ran the tool, measured once on first contact
                      "megatronbert", "nezha", "deberta_v2", "nystromformer", "blenderbot",
                      "blenderbot_small", "prophetnet", "luke", "bigbird", "layoutlm", "ernie_m",
                      "falcon", "clip", "chinese_clip", "bit", "dpt", "blip", "clipseg", "clap", "speecht5",
                      "blip_2",
                      # session 19: training twins of other families and other training setups (schedulers,
                      # clipping kinds, per-step batches, labels passed to the model, SGD/Adagrad), written by
                      # helpers that never ran the tool, measured once on first contact
                      "roberta_train", "electra_train", "bart_train", "opt_train", "vgg11_bn_train",
                      "shufflenet_v2_x0_5_train", "ernie_train", "mixtral_train",
                      # session 20: library pairs the notes do not list (Qwen v1 vs Qwen2, ERNIE-Code vs
                      # mT5, MobileNetV3-Large, ResNet-50) and ports written by hand in both frameworks
                      # (names, registration order, fused and tied weights each person's own), by
                      # helpers that never ran the tool, measured once on first contact
                      "qwen", "ernie_code", "mobilenet_v3_large", "resnet50",
                      "port_vit", "port_unet", "port_tagger", "port_seq2seq",
                      # session 21: ports written by hand in both frameworks (layouts NCHW/NHWC, conv
                      # against linear, rope interleaved against half-split, fused gate|up, causal
                      # padding, weight norm, BatchNorm) and training setups, by helpers that never ran
                      # the tool, measured once on first contact
                      "port_convnext", "port_mixer", "port_nanogpt", "port_llama", "port_tcn", "port_conformer",
                      "distilbert_train", "gptj_train", "mobilenet_v3_small_train",
                      # session 22: ports from the frameworks' built-in layers (TransformerEncoder, LSTM/GRU),
                      # window attention with a bias table, stacked expert weights, and training ports
                      # (GroupNorm UNet with warm-up, HF-style Conv1D against Linear), by helpers that never
                      # ran the tool, measured once on first contact
                      "port_builtin_tf", "port_rnn_tagger", "port_swin", "port_moe",
                      "port_diffusion_train", "port_gpt2conv_train",
                      # session 23: a selective state-space LM, latent cross-attention (built-in MHA with
                      # kdim/vdim), an EfficientNet with squeeze-excitation, a DETR-style detector, and
                      # training ports (a CLIP-style dual encoder, an LSTM LM with tied weights), by helpers
                      # that never ran the tool, measured once on first contact
                      "port_mamba", "port_perceiver", "port_efficientnet", "port_detr",
                      "port_clip_train", "port_rnnlm_train",
                      # session 24: an RWKV LM (token shift as a pad module, a WKV recurrence written two
                      # ways), a VQ-VAE (codebook argmin, conv-transpose decoder), PointNet (pointwise
                      # conv against Linear on transposed points), DLRM (EmbeddingBag against Embedding
                      # with a padding row), and training ports (a VAE, a GCN with its adjacency an input
                      # on one side and a buffer on the other), by helpers that never ran the tool,
                      # measured once on first contact
                      "port_rwkv", "port_vqvae", "port_pointnet", "port_dlrm", "port_vae_train", "port_gcn_train",
                      # session 25: WaveNet (packed filter|gate conv, embedding against a one-hot conv), a
                      # RealNVP flow (masked heads against packed, flipped ones), a GAT (attention vectors
                      # packed against two), a DCGAN (Linear against a transposed conv on 1x1), a Hyena
                      # long convolution (FFT against direct), a capsule network (routing inline against a
                      # module), and training ports (a GAN in one model, a classifier with decay groups and
                      # clipping), by helpers that never ran the tool, measured once on first contact
                      "port_wavenet", "port_realnvp", "port_gat", "port_dcgan", "port_hyena", "port_capsnet",
                      "port_gan_train", "port_cls_accum_train",
                      # session 26: retention with per-head decay, Fourier mixing, efficient attention
                      # with spatial reduction, a fused detection backbone, tabular tokenizers, relative
                      # positions with memory, a shared-weight siamese tower and a CTC speech model
                      # (training), by helpers that never ran the tool, measured once on first contact
                      "port_retnet", "port_fnet", "port_segformer", "port_yolo", "port_tabtransformer",
                      "port_transformer_xl", "port_siamese_train", "port_ctc_train",
                      # session 27: gMLP (spatial gating on a packed projection), Linformer (low-rank
                      # sequence projections), SE-ResNeXt (grouped convs, SE as conv vs Linear), DeepFM
                      # (per-field tables against one table at offsets), a GQA decoder with sliding
                      # window and interleaved rope, a NeRF MLP (encodings in another feature order), and
                      # training ports (LoRA adapters on frozen weights, an SRU LM with packed cell
                      # vectors), by helpers that never ran the tool, measured once on first contact
                      "port_gmlp", "port_linformer", "port_seresnext", "port_deepfm", "port_gqa", "port_nerf",
                      "port_lora_train", "port_sru_train",
                      # session 27, set 18: MobileViT (unfold/fold around attention), a BiGRU-CRF tagger
                      # (hand-written forward algorithm), a masked autoencoder (given keep order, gather
                      # unshuffle, loss on masked patches) and a WGAN-GP critic step (double backward)
                      "port_mobilevit", "port_bigru_crf", "port_vit_mae", "port_wgan_gp_train",
                      # session 28, set 19: a wav2vec2 front end (weight norm, GroupNorm per channel), a
                      # gated PixelCNN (mask buffers), a DiT (adaLN-Zero), a StyleGAN2 synthesis stack
                      # (layers nested apart, modulated convs), BYOL (EMA target) and a warmup-cosine
                      # AdamW run with decay groups and clipping
                      "port_wav2vec_fe", "port_pixelcnn", "port_dit", "port_stylegan_mod", "port_byol_train",
                      "port_sched_clip_train",
                      # session 28, set 20 (written after set 19's rules): a Tacotron-2 decoder core (LSTM cells,
                      # location-sensitive attention), a tiny HRNet (branches and fuse layers), an ALiBi LM (q|k|v
                      # packed head by head), a BiFPN (fusion weights per node against per path), PPO and a
                      # mixup CNN with Nesterov SGD
                      "port_tacotron_attn", "port_hrnet_tiny", "port_alibi_lm", "port_bifpn", "port_ppo_train",
                      "port_mixup_train",
                      # session 29, set 21: multi-head latent attention (a compressed kv with a decoupled rope
                      # key), EDSR (mean shift as a frozen conv, pixel shuffle against a hand-written
                      # depth-to-space), a spatial transformer (affine grid sampling), a GIN (scatter against a
                      # dense adjacency), DINO (EMA teacher and centre) and distillation with RMSProp
                      "port_mla", "port_edsr", "port_stn", "port_gin", "port_dino_train", "port_kd_rmsprop_train",
                      # session 30, set 22: CaiT (talking heads, class attention with the class token first
                      # against last), ConvMixer, a deep & cross network (feature order, stacked cross weights),
                      # a diagonal state-space model (complex parameters as pairs, FFT against direct), SimCLR
                      # (Nesterov momentum, BatchNorm in train mode) and SASRec with NAdam
                      "port_cait", "port_convmixer", "port_dcnv2", "port_s4d", "port_simclr_train",
                      "port_sasrec_train",
                      # session 30, set 23 (written after set 22's rules, measured on first contact with the
                      # session's final rules): DeiT (class and distillation tokens first against last),
                      # ResMLP (affine layers, cross-patch mixing), GraphSAGE (one Linear over [self,
                      # neighbours] against two summed) and PoolFormer (pooling mixer, GroupNorm(1))
                      "port_deit", "port_resmlp", "port_graphsage", "port_poolformer",
                      # session 31, set 24: LeViT (attention bias table, BatchNorm over tokens), XCiT
                      # (cross-covariance attention, a log-space temperature), TFT (variable selection,
                      # gated residual networks), GhostNet (ghost modules), MoCo (a queue of negatives
                      # and momentum encoder), Barlow Twins (cross-correlation loss)
                      "port_levit", "port_xcit", "port_tft", "port_ghostnet", "port_moco_train",
                      "port_barlow_train",
                      # set 25 (session 32): RepVGG (parallel conv/BN branches), PVT (spatial-reduction
                      # attention, position tables per stage), Nystromformer (landmark attention),
                      # HiFi-GAN (weight-normed convs), DIN (attention over a behaviour sequence, PReLU),
                      # mean teacher (an EMA teacher updated outside the optimizer)
                      "port_repvgg", "port_pvt", "port_nystromformer", "port_hifigan", "port_din_train",
                      "port_mean_teacher_train",
                      # set 26 (session 33): PatchTST (RevIN, patching, channel-independent encoder),
                      # TextCNN (Conv2D over stacked embeddings against Conv1d), AutoInt (fields in
                      # another order, bare q/k/v matrices), a neural ODE (RK4 loop, time column), SAM
                      # (two passes per step), ArcFace (angular margin loss)
                      "port_patchtst", "port_textcnn", "port_autoint", "port_neural_ode", "port_sam_train",
                      "port_arcface_train",
                      # set 27 (session 34): TabNet (shared GLU units against per-step copies, sparsemax),
                      # SchNet (a cutoff module against a cutoff inside each convolution), CrossViT (two
                      # branches, cross-attention on the CLS tokens), ConvLSTM (gates stacked in another
                      # order, one conv over [x, h] against two), DPO (a frozen reference model) and
                      # uncertainty-weighted multi-task learning (training)
                      "port_tabnet", "port_schnet", "port_crossvit", "port_convlstm", "port_dpo_train",
                      "port_uncertainty_mtl_train",
                      # set 28 (session 35): Performer (random features as buffers, a feature map
                      # module against inline), Glow (ActNorm log-scale, an LU-factored 1x1 conv),
                      # Informer (ProbSparse attention, distilling convolutions), greedy decoding
                      # with a key/value cache against recomputing the prefix (forward), AdamW
                      # with parameter groups, batch-hard triplet loss (training)
                      "port_performer", "port_glow", "port_informer", "port_kvdecode",
                      "port_paramgroups_train", "port_triplet_train",
                      # set 29 (session 36): Conv-TasNet (a hand-written global layer norm against
                      # GroupNorm, residual and skip convs fused, blocks flat against nested), NFNet
                      # (scaled weight standardisation, skip-init gains 0-d against [1]), Swin-V2
                      # (cosine attention, a continuous position-bias MLP on token pairs against a
                      # table), a Gemma-2 style LM (norms scaling by 1 + w against w, soft-capping,
                      # sliding windows), focal loss with LAMB, BCE with Adagrad (training)
                      "port_convtasnet", "port_nfnet", "port_swinv2", "port_softcap_lm",
                      "port_focal_lamb_train", "port_bce_adagrad_train",
                      # set 30 (NOTES-set30-h76..h78): ConvNeXt-V2 (GRN, channels-first against
                      # channels-last), DGCNN (kNN edge convolutions), xDeepFM (a compressed
                      # interaction network), a Longformer-style encoder (band mask against
                      # unfolded windows, global tokens), label-smoothed AdamW with parameter
                      # groups, center loss with Nesterov SGD (training)
                      "port_convnextv2", "port_dgcnn", "port_xdeepfm", "port_longformer_local",
                      "port_labelsmooth_adamw_train", "port_center_loss_train",
                      # set 31 (NOTES-set31-h79..h81): DeepLabV3's ASPP (dilated branches, image
                      # pooling, resizes), MMoE (stacked experts against a list, per-task gates),
                      # MaxViT (block and grid attention), EGNN (edge lists against dense pairs),
                      # BPR with RAdam and ASL with Nesterov SGD and warm-up (training)
                      "port_deeplab_aspp", "port_mmoe", "port_maxvit", "port_egnn",
                      "port_bpr_radam_train", "port_asl_nesterov_train",
                      # set 32 (NOTES-set32-h82..h84): FiLM (a GRU question encoder, one fused generator
                      # against per-block Linears with gamma = 1 + delta), a Set Transformer (induced
                      # points and pooling seeds as bare parameters), CvT (convolutional projections,
                      # a stage returning (map, cls)), TSMixer (RevIN, norms over time x feature
                      # flattened in another order); word2vec with Adamax and RankNet with Adadelta
                      "port_film_vqa", "port_set_transformer", "port_cvt", "port_tsmixer",
                      "port_sgns_adamax_train", "port_ranknet_adadelta_train",
                      # set 33 (NOTES-set33-h85..h87): a T5-style encoder (bucketed relative bias table
                      # on the root against one in block 0), DPN (dual-path blocks, units registered in
                      # another order), SKNet (branch Linears against one fused 1x1 conv), a FastSpeech
                      # encoder (length regulator); VICReg with momentum SGD, OHEM multi-task with Adam
                      "port_relbias_encoder", "port_dpn", "port_sknet", "port_fastspeech_fft",
                      "port_vicreg_sgdm_train", "port_ohem_multitask_adam_train",
                      # set 34 (NOTES-set34-h88..h90): Inception (BatchNorm with a fused ReLU, three 1x1
                      # reductions in one conv), a GRU attention translator (gate orders, a cell loop),
                      # CoAtNet (MBConv, a 2-D relative bias table), N-BEATS (basis buffers, a packed
                      # theta); a masked LM with NAdam and a tied decoder, EWC with Rprop
                      "port_inception", "port_gru_nmt", "port_coatnet", "port_nbeats",
                      "port_mlm_nadam_train", "port_ewc_rprop_train",
                      # set 35 (NOTES-set35-h91..h93): ResNeSt (split attention as grouped Linears
                      # against grouped 1x1 convolutions, an rSoftMax module), an LSTM speech encoder
                      # (a hand-written cell with TF gate order against nn.LSTM(proj_size)), involution
                      # (kernels generated per pixel, unfold against shifted slices), a LambdaNetwork
                      # (content and position lambdas); Dice + CE with AdamW groups and a polynomial
                      # schedule, Huber with centered RMSprop (epsilon inside against outside the root)
                      "port_resnest", "port_lstmp_asr", "port_involution", "port_lambda_net",
                      "port_dice_poly_train", "port_huber_rmsprop_train",
                      # set 36 (NOTES-set36-h94..h96): Slot Attention (a framework GRUCell against one
                      # written by hand in z|r|n order, a fused k|v, the iteration as a module), HorNet
                      # (recursive gated convolution, a channels-first norm by hand against LayerNorm
                      # between transposes), a gated convolutional LM under each framework's weight
                      # norm, an Autoformer (series decomposition, FFT auto-correlation); Gaussian NLL
                      # with Nesterov SGD and one-cycle, L1 decay in paddle's optimizer against a
                      # penalty in torch's loss with warm restarts
                      "port_slot_attention", "port_hornet", "port_weightnorm_convlm", "port_autoformer",
                      "port_gaussnll_onecycle_train", "port_l1decay_cosrestart_train",
                      # set 37 (NOTES-set37-h97..h99): FocalNet (focal modulation, one fused q|ctx|gates
                      # Linear against three 1x1 convolutions, layer scales as modules against block
                      # parameters), Griffin (RG-LRU with another parameterisation of its decay, local
                      # attention), LightConv/DynamicConv (kernels [H, 1, K] against [H, K], predicted
                      # kernels ordered by head against by tap), an SNGAN discriminator (paddle's spectral
                      # norm against one by hand); Adam with amsgrad and reduce-on-plateau, an EMA of the
                      # weights kept in buffers against torch's AveragedModel
                      "port_focalnet", "port_griffin", "port_lightconv", "port_sngan_disc",
                      "port_amsgrad_plateau_train", "port_ema_swa_train",
                      # set 38 (NOTES-set38-h100..h102): an ECAPA-TDNN speaker encoder (Res2Net branches as a
                      # list against one tensor per role sliced per branch, attentive statistics pooling),
                      # an xLSTM LM (block-diagonal q/k/v maps against grouped 1x1 convolutions, the mLSTM in
                      # parallel against recurrent form), EfficientViT (lite multi-scale linear attention,
                      # qkv packed head by head), CondConv (expert kernels mixed per sample, flat against
                      # 5-D); SwAV (Sinkhorn codes, prototypes renormalised every step) and a Poisson
                      # regression with Adam, exponential decay and clipping
                      "port_ecapa_tdnn", "port_xlstm", "port_efficientvit", "port_condconv",
                      "port_swav_train", "port_poisson_adam_explr_train",
                      # set 39 (NOTES-set39-h103..h105): a DeltaNet LM (the delta rule step by step against
                      # a chunked WY form, q/k/v/beta and the short convolutions packed on one side),
                      # Twins-SVT (window attention with a fused qkv against separate Linears, global
                      # sub-sampled attention against nn.MultiheadAttention), a DCN-v2 recommender with
                      # low-rank mixture-of-experts cross layers, GPT-NeoX (parallel residual, partial
                      # rotary, q|k|v packed per head); SupCon with SGD-nesterov and warm-up + cosine,
                      # a Tweedie regressor with dropout, Adam and multi-step decay
                      "port_deltanet", "port_twins_svt", "port_dcn_cross", "port_gpt_neox",
                      "port_supcon_warmup_train", "port_tweedie_multistep_train",
                      # set 40 (NOTES-set40-h106..h108): Gemma (embedding scaled by sqrt(d) in a wrapper
                      # against inline, RMSNorm weight stored as an offset from one against the full
                      # scale, gate|up packed, GQA with a complex rotary buffer, tied head), StarCoder
                      # with multi-query attention (q|k|v of one key/value head packed in c_attn),
                      # BoTNet (2-D relative position logits, qkv as one 1x1 conv against Linears), a
                      # DDPM U-Net (every block's time projection packed in one Linear at the top);
                      # a Wing-loss landmark regressor with AdamW and a warm-up lambda schedule, a
                      # two-tower ranker with margin ranking loss, SGD with dampening and step decay
                      "port_gemma", "port_starcoder_mqa", "port_botnet", "port_ddpm_unet",
                      "port_wing_lambdalr_train", "port_margin_ranking_steplr_train",
                      # set 41 (NOTES-set41-h109..h111): Phi-3 (q|k|v and gate|up fused on one side,
                      # rotary on half of each head), Cohere (one weight-only LayerNorm feeding
                      # attention and MLP in parallel, interleaved rotary, a logit scale on the tied
                      # head), VoVNet (one-shot aggregation, effective SE with a hard sigmoid),
                      # MobileViT-v2 (separable self-attention, patches [B, d, P, N] against
                      # [B, d, N, P]); a siamese encoder with cosine embedding loss and a cyclic
                      # schedule, a quantile regressor with pinball loss and AdamW under warm-up
                      # and polynomial decay
                      "port_phi3", "port_cohere", "port_vovnet", "port_mobilevitv2",
                      "port_cosine_embedding_cyclic_train", "port_pinball_adamw_poly_train",
                      # set 42 (NOTES-set42-h112..h114): InternLM2 (q|k|v packed per key/value group
                      # in one wqkv), Mistral with sliding-window attention (an additive band mask
                      # built at the top against a boolean one in each attention, complex rotary
                      # against rotate-half), Res2Net (hierarchical splits, a grouped conv packing
                      # three split convs), EfficientNetV2 (fused MBConv, SE by 1x1 convs against
                      # Linears); a train-mode BatchNorm regressor with SmoothL1, dropout and
                      # multi-step decay, an MLP with multi-margin loss, Nesterov SGD and warm-up
                      # plus cosine
                      "port_internlm2", "port_mistral_swa", "port_res2net", "port_efficientnetv2",
                      "port_bn_smoothl1_multistep_train", "port_multimargin_sgd_warmcos_train",
                      # set 43 (NOTES-set43-h115..h117): Granite (muP-style multipliers: embedding,
                      # residual, attention scale, logits; some folded into modules of their own),
                      # OLMo (non-parametric LayerNorm, q|k|v and up|gate fused, gate the second
                      # half, q/k/v clipped), RegNetY (group convolutions of a fixed group width, SE
                      # by 1x1 convs against Linears), ReXNet (a partial residual on the first
                      # channels); a transformer classifier with layer-wise learning-rate decay in
                      # AdamW groups, an ordinal regressor with the CORAL loss
                      "port_granite", "port_olmo", "port_regnety", "port_rexnet",
                      "port_llrd_adamw_train", "port_coral_ordinal_train",
                      # set 44 (NOTES-set44-h118..h120): StableLM (partial rotary, per-head q/k
                      # LayerNorms, q|k|v fused on one side and gate|up on the other), Qwen2-MoE
                      # (routed experts as modules against stacked tensors, a shared expert behind
                      # a sigmoid gate), CSPDarknet (Focus stem against a 6x6 conv, C2f split by two
                      # convs or one chunked), DLA (nested trees against flat wiring); a two-tower
                      # InfoNCE encoder with a hand-written Lion, a multi-label soft-margin tagger
                      # with dampened SGD and a linear warm-up
                      "port_stablelm", "port_qwen2_moe", "port_cspdarknet", "port_dla",
                      "port_lion_infonce_train", "port_multilabel_softmargin_sgd_linearlr_train",
                      # set 45 (NOTES-set45-h121..h123): Phi (parallel attention and MLP, partial
                      # rotary, fused Wqkv against q/k/v), EfficientFormer (pooling mixer as a module
                      # against inline, conv MLPs, a 3D stage), a Whisper-style audio encoder (Conv1D
                      # against a height-1 Conv2d, positions as a buffer against computed), MobileOne
                      # (branches in lists against named attributes, an identity BatchNorm); a
                      # segmentation net with the Tversky loss and AdamW with amsgrad, a mixture
                      # density network with Adam and coupled L2 decay
                      "port_phi", "port_efficientformer", "port_whisper_enc", "port_mobileone",
                      "port_tversky_adamw_amsgrad_train", "port_mdn_adam_l2_train",
                      # set 46 (NOTES-set46-h124..h126): MiniCPM (embedding and residual scales
                      # inside modules on one side and inline on the other, tied head), Nemotron
                      # (LayerNorm kept as w - 1, squared ReLU, partial rotary, grouped q|k|v),
                      # DINOv2 (a Linear over patches against a patch conv, register tokens,
                      # LayerScale as modules against bare parameters), FasterNet (a partial conv
                      # written in place against split and concatenate), GATv2 (one shared
                      # projection against two packed); a distilled classifier with the KL loss and
                      # averaged SGD written by hand on both sides
                      "port_minicpm", "port_nemotron", "port_dinov2", "port_fasternet", "port_gatv2",
                      "port_asgd_kldiv_train",
                      # set 47 (NOTES-set47-h128): MobileNetV4 (universal inverted bottlenecks,
                      # layer scale, a multi-query attention whose key and value share one strided
                      # downsampling on one side and keep one each on the other), PiT (pooling
                      # stages that fold tokens back into a map, the class token through a Linear)
                      "port_mobilenetv4", "port_pit",
                      # set 48 (NOTES-set48-h132/h133/h134/h135): ChatGLM (sequence-first, one fused
                      # q|k|v with bias, rotary on half of each head in interleaved pairs, key/value
                      # groups), DCRNN (diffusion-convolution GRU cells, per-term Linears against one
                      # packed weight with interleaved terms), MViTv2 (pooling attention, decomposed
                      # relative positions, NCHW against token-major), an MLM trained with Adafactor
                      # written by hand on both sides
                      "port_chatglm", "port_dcrnn", "port_mvit", "port_adafactor_mlm_train",
                      # set 49 (NOTES-set49-h136/h137/h138/h139): TimesNet (periods found by an FFT
                      # inside the forward, 1-D folded into 2-D maps NHWC against NCHW, three
                      # inception branches against one fused kernel, one shared norm against one
                      # per block), deformable attention (sampling offsets and grid_sample, a value
                      # split per level), SAM's mask decoder (two-way attention, a transposed-conv
                      # upscaler with a channel LayerNorm), a VQ-VAE whose codebook is a moving
                      # average, trained, written by hand on both sides
                      "port_timesnet", "port_deformable_attn", "port_sam_decoder", "port_vqema_train",
                      # session 59 (set 50): paddle.vision twins at other depths and widths, each with two
                      # planted bugs, by a helper that never ran the tool, measured once on first contact
                      "resnet34", "resnet101", "densenet169", "vgg16", "shufflenet_v2_x1_0",
                      # session 60, set 51: a PaddleClas classifier and backbone (PP-LCNet, PP-HGNetV2)
                      # against timm-style ports, RT-DETR's hybrid encoder and a RetinaNet FPN head
                      # against the public torch code's layout, by helpers that never ran the tool
                      "port_pplcnet", "port_dbnet", "port_svtr", "port_esm", "port_cbam_resnet", "port_fcos_train", "port_hgnetv2", "port_rtdetr_encoder", "port_retinanet_head",
                      # session 62, set 53: image restoration (NAFNet, Restormer), EVA-02, a differential
                      # transformer, Hiera and a Switch MoE training port, by helpers that never ran the tool
                      "port_nafnet", "port_restormer", "port_eva02", "port_diff_transformer", "port_hiera",
                      "port_switch_moe_train",
                      # session 62, set 54: CSWin, TimeSformer, DaViT, VideoMAE, Baichuan, Persimmon, by
                      # helpers that never ran the tool, measured once on first contact with the session's code
                      "port_cswin", "port_timesformer", "port_davit", "port_videomae", "port_baichuan", "port_persimmon"})


@dataclass(frozen=True)
class Row:
    family: str
    case: str  # "clean" or the bug's name
    exit_code: int
    module_a: str
    module_b: str
    ok: bool
    wall_s: float
    note: str = ""


def families() -> list[str]:
    return sorted(p.name.removesuffix("_truth.json") for d in PAIR_DIRS for p in d.glob("*_truth.json"))


def family_dir(family: str) -> Path:
    return next(d for d in PAIR_DIRS if (d / f"{family}_truth.json").exists())


def truth(family: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((family_dir(family) / f"{family}_truth.json").read_text())
    return data


def run_case(family: str, bug: str, out: Path, reuse: bool = False, flags: tuple[str, ...] = ()) -> Row:
    """One ``padiff-trace run`` and its row (``reuse``: compare the traces a previous run left
    in ``out`` again, without recording)."""
    env = dict(os.environ, PADIFF_BUG=bug)
    d = family_dir(family)
    own = tuple(truth(family).get("flags", ()))  # what the family needs (a training pair: --steps 3)
    cmd = [sys.executable, "-m", "padiff_trace", "run", str(d / f"{family}_paddle.py"),
           str(d / f"{family}_torch.py"), "--out", str(out), "--force", *own, *flags]
    ta, tb = out / f"{family}_paddle.trace", out / f"{family}_torch.trace"
    if reuse and ta.exists() and tb.exists():
        tb, pins = _kept(out, tb)
        cmd = [sys.executable, "-m", "padiff_trace", "compare", str(ta), str(tb), "--report", str(out / "report"), *pins]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - t0
    case = bug or "clean"
    report_file = out / "report" / "report.json"
    if proc.returncode not in (0, 1) or not report_file.exists():
        last = proc.stderr.strip().splitlines()[-1:] or ["no report"]
        return Row(family, case, proc.returncode, "-", "-", False, wall, last[0][:80])
    report = json.loads(report_file.read_text())
    mod_a, mod_b = _named(report)
    if not bug:
        return Row(family, case, proc.returncode, mod_a, mod_b, proc.returncode == 0, wall)
    spec = truth(family)["bugs"][bug]
    step = _step(report)
    if spec.get("where") == "optimizer":  # its module is the optimizer: the report must say the update differs
        said = {f.get("code") for f in report.get("diagnosis", [])}
        # (or, where the weights agree and a copy of them kept beside the optimizer step diverges
        # first, an EMA, that the copies' update differs)
        ok = proc.returncode == 1 and bool(said & {"update_differs", "optimizer_cause", "copy_update_differs"})
    else:
        ok = proc.returncode == 1 and (mod_a, mod_b) == (spec["paddle_module"], spec["torch_module"])
    ok = ok and spec.get("first_step", step) == step  # a training pair's truth says at which step
    note = "" if ok else f"truth: {spec['paddle_module']} / {spec['torch_module']}" + (
        f" at step {spec['first_step']}, named at step {step}" if spec.get("first_step", step) != step else "")
    return Row(family, case, proc.returncode, mod_a, mod_b, ok, wall, note)


def _kept(out: Path, tb: Path) -> tuple[Path, list[str]]:
    """The B trace the previous run's report compared, and its mapping: ``run`` records B again
    with a pairing confirmed by the values (``OUT/pairing-N.json``) when it goes further, or with the
    weights paired in the order the models call their modules (``OUT/call-order.json``)."""
    try:
        b = Path(json.loads((out / "report" / "report.json").read_text())["b"]["path"])
    except (OSError, ValueError, KeyError, TypeError):
        return tb, []
    # B recorded again with a pairing (``pairing-N``) or in call order (``call-order``): its mapping file
    kind = b.stem[len(tb.stem) + 1:] if b.stem.startswith(f"{tb.stem}-") else ""
    # a pairing tried on top of the call order or of another pairing (``call-order-pairing-1``,
    # ``pairing-1-pairing-3``): the last one's file holds them all
    kind = "pairing-" + kind.rsplit("pairing-", 1)[1] if "pairing-" in kind else kind
    tried = out / f"{kind}.json" if kind.startswith("pairing-") or kind == "call-order" else None
    return (b, ["--mapping", str(tried)]) if tried is not None and tried.exists() and b.exists() else (tb, [])


def _step(report: dict[str, Any]) -> int | None:
    """The step of the first divergence (None: none)."""
    d = report.get("first_divergence")
    if d is None:
        return None
    pair = next(p for p in report["pairs"] + report["weights"] + report["param_grads"] if p["index"] == d["index"])
    return int(pair["step"])


def _named(report: dict[str, Any]) -> tuple[str, str]:
    d = report.get("first_divergence")
    if d is None:
        return "-", "-"
    located = d.get("located")
    if located is not None:
        return located["a"]["module"] or "<root>", located["b"]["module"] or "<root>"
    pair = next(p for p in report["pairs"] + report["weights"] + report["param_grads"] if p["index"] == d["index"])
    return pair["a"]["module"] or "<root>", pair["b"]["module"] or "<root>"


def markdown(rows: list[Row], reused: bool = False) -> str:
    wall = "compare s" if reused else "wall s"
    lines = [f"| family | case | exit | A (paddle) | B (torch) | vs truth | {wall} |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "pass" if r.ok else f"FAIL ({r.note})" if r.note else "FAIL"
        fam = f"{r.family} (held out)" if r.family in HELD_OUT else r.family
        lines.append(f"| {fam} | {r.case} | {r.exit_code} | `{r.module_a}` | `{r.module_b}` | {verdict} | {r.wall_s:.1f} |")
    lines.append("")
    for label, sel in (("all", rows), ("design", [r for r in rows if r.family not in HELD_OUT]),
                       ("held out", [r for r in rows if r.family in HELD_OUT])):
        if sel:
            clean = [r for r in sel if r.case == "clean"]
            lines.append(f"- {label}: {sum(r.ok for r in sel)} of {len(sel)} cases as the truth says "
                         f"(clean twins {sum(r.ok for r in clean)} of {len(clean)}, planted bugs "
                         f"{sum(r.ok for r in sel if r.case != 'clean')} of {len(sel) - len(clean)})")
    lines.append(f"- total wall {sum(r.wall_s for r in rows):.0f} s")
    return "\n".join(lines)


_DOC_HEAD = """# Real pairs: every family, clean and with planted bugs

Generated by `python tests/real_pairs/table.py --jobs 2 --markdown docs/real-pairs.md` (do not edit by
hand). Each row is one `padiff-trace run PADDLE_SPEC TORCH_SPEC --out DIR` with no flag, as a
user types it: a clean twin must exit 0; a planted porter's bug (`PADIFF_BUG`) must exit 1
with the first divergence named at the module its `<family>_truth.json` names on both sides
(ground truth checked without the tool: `tests/real_pairs/verify_truth.py`). Families marked
*held out* were set aside before the rules were designed and measured last.

"""


_DOC_TAIL = """
## Held out, and what the numbers were before

The held-out families (t5, mt5, xlnet, deberta, mpnet, pegasus, funnel, rembert, densenet121,
shufflenet_v2_x0_5, and the vision pairs added last: resnext50_32x4d, wide_resnet50_2) were
chosen before the rules of issue 24 were designed and never run through the tool until the
rules were committed. Measured on them (54 cases):

| tool | held-out cases right | clean twins | planted bugs |
|---|---|---|---|
| at the start of issue 24 (commit 63973f7) | 26 of 54 | 3 of 12 | 23 of 42 |
| with the rules, first measurement | 43 of 54 | 8 of 12 | 35 of 42 |
| after fixes made *having seen* those results (RemBERT's mask replay, rounding carried through deep ResNets, DenseNet's concatenation inside the dense layer) | 50 of 54 | 9 of 12 | 41 of 42 |
| session 15: gradients across ReLU kinks measured, boundary relations in relative L2, a pooling whose output shape differs paired | 54 of 54 | 12 of 12 | 42 of 42 |

Only the second row is an unseen-family score; the rows after it are no longer held out.

## Training-mode twins (held out, session 15)

`tests/train_pairs/`: bert, gpt (gpt2), llama and t5 from paddlenlp/transformers and
mobilenet_v2 from paddle.vision/torchvision, in train mode with dropout on, AdamW (NLP) or
momentum SGD (vision), 3 steps (`"flags": ["--steps", "3"]` in each truth), a clean twin and
three planted training bugs each (dropout p, a submodule left in eval, weight decay on every
tensor, AdamW epsilon or beta2, Adam with L2 for AdamW, no gradient clipping, label smoothing,
BatchNorm momentum not converted, Nesterov). They were written, with ground truth checked
without the tool (`tests/train_pairs/verify_truth.py`), by someone who never ran the tool on
them, and measured once:

| tool | training cases right | clean twins | planted bugs |
|---|---|---|---|
| first measurement (commit a27ddfa) | 13 of 20 | 4 of 5 | 9 of 15 |
| after the fixes it led to (below), same scoring | 16 of 20 | 4 of 5 | 12 of 15 |
| with optimizer bugs scored by the report naming the optimizer (see below) | 18 of 20 | 4 of 5 | 14 of 15 |

The fixes: an output gradient whose call's backward passes on nothing that differs is no
divergence (a dropout mask read off the output cannot tell a dropped element from a kept one
where the input is 0; the ReLU6 before it drops those elements' gradient anyway); BatchNorm's
running statistics after an update are judged on the scale of the input they average; a loss
that differs while the model's outputs agree ends the window of a boundary difference (label
smoothing on one side). The scoring: the truths named, for an optimizer bug, the module of the
first tensor in torch's registration order whose update differs; the tool names the first
differing record in A's order and says "optimizer setting differs: AdamW beta2 0.99 vs 0.999".
An optimizer bug now counts as found when the report says the optimizer update differs, at the
truth's step. That rule was chosen after seeing the results; by the truths' module the count
is the middle row.

## Held-out planted bugs, and one-sided modules (session 16)

Ten new porter's bugs, one in each of convbert, deberta, electra, ernie, funnel, gptj,
mobilebert, mpnet, pegasus and xlnet (a mask added with the wrong sign, an activation applied
twice, the embedding LayerNorm skipped, keys and values swapped, a residual dropped, a score
scale of 1/d, heads merged without the transpose, softmax over the query axis, positions off
by one, LayerNorm before the residual), were written with ground truth checked without the
tool by someone who never ran it (`verify_truth.py` and forward hooks), and measured once:
**10 of 10** with the tool as it stood (commit 7663f70), and 10 of 10 with the rules below.

The rules this session added, designed on the known failures (ctrl, gpt_train, roformer,
vgg11_bn): a module only one side has, directly in the named call, that ran before the first
differing value and returned a value nothing on the other side compares, is named
(`why: "unverified"`), unless the other trace holds that value anywhere in the step (a rotary
table one library builds in each attention and the other hands down), its weights were
compared (a q projection split from a packed q|k|v), or the other side calls a module of its
type there too (the same activation called in another order); and the one call left on each
side of a gap, at the same path with the same shapes, pairs as a type difference (a ReLU
replaced by `Identity`). On the 181 earlier cases: 173 before, 176 after. Gained: ctrl
`paddle_pos_interleave`, gpt_train `attn_dropout`, vgg11_bn `no_relu`, roformer
`paddle_rope_halves`; lost: roformer `rotary_value` (the bug is in torch's inline code after
the rotary, and paddle's unverified `rotary` module is named instead of its attention; the
sentence names "it or the code between it and that value"). Checked against regressions on
the way: llama_train `attn_dropout`, mixtral `paddle_expert_swap` and mt5 `paddle_gate_swap`
named a one-sided module wrongly until the found-value and same-type exceptions were added.

## Held-out planted bugs, round two (session 17)

Twenty-one new porter's bugs, written by three helpers who never ran the tool, with ground truth
checked without it (`verify_truth.py`, forward hooks; `tests/real_pairs/NOTES-set6.md`,
`tests/vision_pairs/NOTES-set2.md`, `tests/train_pairs/NOTES-set2.md`), of kinds not in the
corpus before: eight in NLP inference (token types never added, decoder positions read from the
encoder's table, Bloom's residual taken after the LayerNorm, the exact-erf GELU for GPT-2's tanh
one, a Linear without its bias, LayerNorm with the unbiased variance, an RMSNorm in float16
without the upcast, softmax in bfloat16 — the last three near 1e-4 relative at the output),
seven in vision (a squeeze-excitation gate without its clip, a dropout that scales in eval,
the channel split taken in the other order, ResNet-vd's pooled shortcut, ReLU before the
residual add, ReLU for ReLU6, epsilon outside the square root) and six in training (a head left
out of the optimizer, labels shifted twice, weight decay 0.1 for 0.01, HF's default learning
rate, softmax before cross-entropy, a summed loss). Measured once, with the tool as it stood
at the start of the session (commit e00578e): **20 of 21** (NLP 8 of 8, vision 6 of 7,
training 6 of 6). The miss is DenseNet-121 `bn_eps_sqrt` (known failures). Still 20 of 21
after the session's changes.

The session's changes, designed on the known failures of session 16:

- **A module instance held by several parents is named where its caller holds it.** HF XLM's
  feed-forward blocks all hold `transformers.activations.gelu`, one `GELUActivation`; its call
  inside `ffns.1` was recorded as `transformer.ffns.0.act#1` and is now `transformer.ffns.1.act`
  (`xlm paddle_act` passes; its truth had taken the activation for a function and named
  `transformer.ffns.1`, corrected). paddlenlp BART's `encoder.embed_tokens` is the `shared`
  Layer: its call in the encoder is now `encoder.embed_tokens`, not `shared#0` (the `bart
  embed_scale` truth renamed, the same call).
- **Rounding carried by training, without a ceiling.** Values computed from weights that
  earlier updates' rounding moved apart pass at up to 30 times those weights' relative
  difference, no longer capped at 1e-3, and the update and drift rules settle step by step.
  The 3-step MobileNetV2 clean twin (batch 4: most gradients are rounding around zero; outputs
  differ by percents at step 1) is aligned, and its report says how far the drift went and
  points to `--referee`. Every training case is right (30 of 30).

## New families, held out (session 18)

Sixteen families both libraries ship beyond the shared notes' list, written by four helpers who
never ran the tool, each a clean twin and two planted bugs (one per side) with ground truth
checked without it (`verify_truth.py`, forward hooks; `tests/real_pairs/NOTES-set7-h1..h4.md`):
MegatronBERT, NeZha, DeBERTa-v2, Nyströmformer, Blenderbot, BlenderbotSmall, ProphetNet, LUKE,
BigBird, LayoutLM, ERNIE-M, Falcon (paddlenlp `RWModel`), CLIP, Chinese-CLIP, BiT and DPT. The
bugs include three precision-level ones (tanh GELU for erf, a LayerNorm in bfloat16 or float16,
a softmax in float16) and eight in inline code. Measured once, with the tool as it stood at
the start of the session (commit a586cfb): **38 of 48** (clean twins 12 of 16, bugs 26 of 32).
What failed, and the principle each failure led to:

- **NeZha** (clean and both bugs): paddlenlp registers a block's last LayerNorm before the
  attention that holds the other; the LayerNorms were paired by registration order against
  their names. A path word that tells the members of a group apart on both sides
  ("attention") now outweighs registration order.
- **CLIP, Chinese-CLIP** (clean): paddlenlp holds its projections as bare `[in, out]` matrices,
  HF as Linear layers; they stayed unpaired, so B kept its own random projections. Bare
  matrices pair with the other side's Linear weights by the word their names share, then as
  the only ones left, oriented by their shapes. Chinese-CLIP's output dict has an entry HF
  leaves out (a None pooler); output entries now pair by name before order.
- **BigBird** (clean and both bugs): paddlenlp's `Linear3D` stores its square q/k/v weights
  `[in, out]` and returns `[b, heads, s, head_dim]`. Its weights were copied untransposed and
  its outputs were a shape mismatch. The layout of a weight of a class nobody listed is now
  read off its own recorded call (the output holds the values of `x @ W + b` in one
  orientation only); heads returned apart are compared in the one axis order that moves the
  fewest axes; a value found in the other trace in another layout verifies a one-sided call;
  and a 0/1 mask handed to a layer against the additive mask made of it (all ones against all
  zeros, with no padding) is a mask convention, not the divergence.
- **Falcon** (both bugs) fail still: `paddle_rope_base` (one layer's rotary table built with
  another base) is named at paddle's `maybe_rotary` and HF's model-level `rotary_emb`, whose
  tables differ; the truth names HF's attention, where the table is used (the LLaMA truth of the
  same structure, `paddle_rope_layer1`, names `model.rotary_emb` as the tool does).
  `qkv_layout` (HF's fused projection split in the wrong head order, inline) is named at
  paddle's one-sided `maybe_rotary` on the paddle side: the one-sided module next to a bug in
  the other side's inline code (known failures: values cannot tell which side is wrong).

After the session's changes: **46 of 48** (clean twins 16 of 16; the two Falcon bugs fail); the 212 cases of the corpus before it are unchanged (208 of 212).

Then five more, written the same way by two more helpers once those rules were in (BLIP,
CLIPSeg, CLAP, SpeechT5, BLIP-2; `tests/real_pairs/NOTES-set8-h5.md`, `NOTES-set8-h6.md`),
measured once on first contact: **11 of 15** (BLIP, CLIPSeg and CLAP 3 of 3 each, BLIP-2 2 of
3, SpeechT5 0 of 3). BLIP-2's clean twin failed at its language model's embedding: HF takes
image placeholder ids in `input_ids` (`[2, 12]`), paddlenlp concatenates the queries itself
(`[2, 8]`); a call handed another input convention (shapes that differ) whose difference
reaches nothing downstream is now a boundary difference, like one whose inputs agree.
SpeechT5 failed in all three: HF's positional convolution is weight-normed through torch's
parametrization (`original0` = g, `original1` = v) and paddlenlp's holds the plain weight
(its weight norm commented out); v paired with the weight and g kept its own value, so B's
convolution computed another weight. Weight normalisation is now knowledge (`WEIGHT_NORM`):
the transfer sets v to the weight and g to its norm, the comparison computes g v / |v| and
the weight's gradient (dL/dv + dL/dg v / |v| at |v| = g), and a one-sided call whose output is
a weight of the other trace (torch's parametrization computing it) is verified. After: **15 of 15**.

## Training twins of other families and setups, held out (session 19)

Eight training-mode twins written by four helpers who never ran the tool
(`tests/train_pairs/NOTES-set9-h7..h10.md`), each a clean twin and two or three planted bugs
with ground truth checked without it (`tests/train_pairs/verify_truth.py`, which now reads a
family's step count from its truth and takes a scheduler and per-step batches): RoBERTa (AdamW,
linear warm-up then decay, 5 steps, a new batch each step), ELECTRA (token classification,
Adam, global-norm clipping 0.5), BART (seq2seq with labels, tied embeddings, clipping), OPT
(Adam, cosine schedule, 4 steps, per-step batches), VGG-11-BN (SGD, momentum, coupled weight
decay, step schedule), ShuffleNetV2 (Adagrad with an inverse-time schedule), ERNIE (masked LM,
no-decay lists written each library's way) and Mixtral (each library's own loss with labels
passed in and the router's auxiliary loss). The bugs: schedules off by one, warm-up read as a
proportion, a scheduler never attached, clipping by value, cross-entropy means over ignored
positions, keep probabilities passed as drop probabilities, no-decay lists that match
nothing, dampening, cumulative BatchNorm averages, an accumulator left at 0, dropout keys a
config ignores. Measured once, with the tool as it stood when they arrived: **26 of 31**.

- **Mixtral** (clean and two bugs): paddlenlp's pretraining criterion takes labels the caller
  shifted, HF's model shifts `labels = input_ids` itself; B replayed A's shifted labels and
  shifted them again. Integer inputs are data, not random draws: where B's own value is A's
  rearranged (75% of the elements equal as they are or shifted by one position), B keeps its
  own (a warning says so); independent draws are still replayed.
- **BART** `paddle_act_dropout`: paddlenlp keeps the activation dropout as a module after a
  functional GELU, HF has a GELU module and an inline dropout. The module's input was a value
  no pair compares, so an earlier one-sided dropout was named. An input the other trace holds
  (HF's GELU output) now counts as agreeing, and a one-sided module whose differing output the
  other trace holds as computed there (HF's GELU, to 1e-6) is not where the values part.
- **ELECTRA** `paddle_clip_by_value` fails still: Adam's first update is ±lr per element
  whatever the clipping, so the step-1 weights differ by epsilon-sized amounts (2.4e-6 max,
  a few elements) that pass in fp32; the tool names step 2 with the right diagnosis (the
  clipping differs). With `--referee` step 1 is named.

After: **30 of 31**. The same session also tried library configurations the corpus twins do
not use (`tests/config_pairs/`, `tests/test_config_pairs.py`): paddlenlp LLaMA with
`fuse_attention_qkv` (and grouped-query attention), GPT and OPT with a fused `qkv_proj`, and
LLaMA with linearly scaled rotary positions. All were false alarms: paddlenlp packs q|k|v
head by head, and scales rotary positions where HF scales frequencies. Fused packings are now
knowledge (`QKV_PACKING`, read off the modules into the trace), and a derived buffer computed
another way passes when the call around it agrees. The fused LLaMA and GPT pairs' clean twins
under `--ops`, `--referee` and `--single-step`: 6 of 6 aligned; the fused GPT pair trained with
dropout 0.1 and AdamW for 3 steps: aligned.

## Library pairs the notes do not list, and ports written by hand, held out (session 20)

Four helpers who never ran the tool wrote eight families (`NOTES-set10-h11..h14.md`), each a
clean twin and two or three planted bugs with ground truth checked without it: paddlenlp Qwen
(v1) against HF Qwen2 (a fused `c_attn` against separate q/k/v; the MLP numbered the other
way), paddlenlp ERNIE-Code against HF mT5, paddle.vision MobileNetV3-Large and ResNet-50
against torchvision's, and four models written twice by hand, once in each framework, the way
two people would (their own names, registration order, fused or separate projections,
built-in layers or their own): a ViT (paddle's `MultiHeadAttention` against a fused `qkv` in
blocks named `encoder_layer_0`), a UNet (GroupNorm, ConvTranspose, concatenated skips, the
decoder numbered the other way), a BiLSTM tagger (paddle `sequence_length=` against torch
`pack_padded_sequence`, one projection of concatenated features against two summed) and a
Transformer translator (paddle's `nn.Transformer` against a hand-written one with a fused
`qkv`, a cross-attention `q` beside a fused `kv`, and the output projection paddle ties to its
embedding). GoogLeNet was dropped: paddle.vision's is another network. Measured once, with
the tool as it stood when they arrived: **13 of 27** (the UNet's first run met a crash in a change
being made that moment, for inference runs with no optimizer; its rerun without it, 4 of 4, is
the number counted).

- **ViT, translator** (7 cases): `record` refused (exit 2, "cannot match"). A fused `qkv` in a
  block whose path has no index (`encoder_layer_0`) found no parts (block indices had to be
  equal); the translator's FFN `linear1` [H, 2H] was taken for a cross-attention's `q` and
  output `proj` (two same-shape siblings with a fused `kv` between them), and its `kv` for
  q|k. Now a fused tensor's parts must be neighbours among their parent's tensors unless
  their names say the roles of one fused projection (q|k|v, k|v, q|k, gate|up: Mixtral's
  `w1`, `w2`, `w3`), a fused name that lists roles (`kv`, `qkv`, `gate_up_proj`) takes those
  first, and blocks without an index take the runs in registration order. The translator's
  `generator`, tied to the embedding on the paddle side, is that embedding again (the one
  matrix left on one side, shaped like the other side's one embedding), and the tied
  gradient is compared with the sum of torch's two.
- **Qwen** (clean and two bugs): paddlenlp's `w1`/`w2` paired with `gate_proj`/`up_proj` by
  LLaMA's numbering, which Qwen reverses; nothing in names or shapes says so. `run` now
  records B again with two same-shape siblings swapped in every block when the run diverges
  inside the module holding them, and keeps the pairing that goes further (a swap planted in
  one block only is not paired away: swapped everywhere, the run diverges earlier).
- **ResNet-50** `no_post_add_relu`: torch's block returns the residual sum without its ReLU;
  the shared `relu`'s third call on the paddle side was named as a module of paddle's only.
  A further call of a module whose other calls are paired is not: the block is named on
  both sides.
- **Paddle's `nn.LSTM`** holds `_dropout_state`, a tensor with no memory, which was recorded
  as a damaged record (the trace said DAMAGED): placeholders are no longer recorded.
- Left failing: the tagger (a projection of concatenated features against two projections
  summed is a layout the matcher does not know, and a `PackedSequence` is no tensor the other
  side has), and Qwen `paddle_mlp_gate_swap`, named at HF's one-sided `act_fn` where the
  truth names the MLP (the same situation as BERT's `paddle_act`, whose truth names the
  one-sided activation).

After: **24 of 27**. The same session fixed ELECTRA `paddle_clip_by_value` (session 19): when
the recorded optimizer settings differ, a weight that passes its tolerance yet whose update
differs by more than 1e-3 and 100 times its gradients' difference fails at that update, so the
clipping is named at step 1.

## Ports written by hand, and training setups, held out (session 21)

Four helpers who never ran the tool wrote nine families (`NOTES-set11-h15..h18.md`), each a
clean twin and three planted bugs with ground truth checked without it. Six are models written
twice by hand, once in each framework, the way two people would: a ConvNeXt (NCHW with a
hand-written channels-first LayerNorm and 1x1 convs against NHWC with `nn.LayerNorm` and
Linears), an MLP-Mixer (a patch `Conv2D` against patches flattened channels last into a Linear;
a token MLP as Linears against bare matrices in an einsum), a nanoGPT (separate q/k/v and an
untied head against a fused `c_attn` and a head tied to `wte`), a LLaMA (rotary embeddings
half-split against interleaved complex pairs, `gate_proj`/`up_proj` against a fused `w13`), a
WaveNet-style TCN (one conv holding filter and gate against two weight-normed convs) and a
Conformer (paddle `MultiHeadAttention` and pointwise `Conv1D`s against a fused `qkv` and
Linears). Three are training twins with setups the corpus lacked: DistilBERT with a frozen
embedding and RMSProp, GPT-J with coupled L2 decay and a new batch every step,
MobileNetV3-Small with Nesterov momentum, a multi-step schedule and BatchNorm momentum 0.99
against 0.01.

Measured once, with the tool as it stood when they arrived: the ports **3 of 24**; the training
twins **12 of 12** (measured after the first matcher changes below, which were designed on the
ports only). What the ports led to (general rules, each with a test on a model of our own):

- **A projection of concatenated features against one per feature, summed** (set 10's tagger,
  fixed before set 11 arrived): `PACK_AXIS` lists axes, a Linear's outputs then its inputs,
  so one weight [out, in1 + in2] is packed along its input axis; mapping files take `"axis"`.
- **A pointwise convolution is a Linear** (`POINTWISE_AS`): a conv whose kernel is all ones
  pairs with a Linear by a reshape, before fused runs are looked for, so a block's Linears
  count the same on both sides (the Conformer's fused `qkv` had taken an FFN's Linear as q|k).
- **Bare matrices named apart** (`fc1`/`fc2` against `w1`/`w2` of an einsum): a block's
  left-over group pairs in registration order when one layout fits them all (low confidence,
  `shape+order`); shapes that differ by axes of size one (a layer scale [C, 1, 1] against [C])
  are a reshape.
- **A head untied on one side** beside a position table: the one matrix left finds the
  embedding of its own shape.
- **The order the models call their modules** (ConvNeXt, Conformer, LLaMA: norms each author
  registered in another order, names that point the wrong way): when the pairing it gives
  differs from registration order's and the run diverged, `run` records B again with it and
  keeps it unless it diverges earlier (how far a run got is now measured by A's records, which
  both runs share).
- **Rotary pairs interleaved against half-split** (LLaMA): q and k rows permuted in every head,
  tried in each direction when an attention diverges and no call of it agrees, the head size
  from a rotary table in either trace; kept when a call of the attention confirms it.
- **A patch convolution against patches flattened channels last** (Mixer): paired by a
  reshape; `run` tries the conv's axes reordered (`"paddle_axes"`, which mapping files now
  take) when the run diverges there.
- **NCHW against NHWC with H == W** (ConvNeXt): activations compare under the permutation that
  moves one axis and keeps equal axes in order, where they were a shape mismatch.
- **A gated conv against two weight-normed convs** (TCN): a parametrization's tensors are its
  layer's (`PARAMETRIZED_UNDER`), so each v takes its share of the packed filter | gate weight
  (convolutions pack along their output channels) and each g is set from it; the weight is
  compared as g * v / |v| and its gradient through the chain rule, and torch's weight-norm
  calls, which compute compared weights, are never named as one side's modules.
- A pairing `run` tries that B cannot be recorded with (the model refuses the weights) is
  logged and skipped: the first run stands (it had been exit 2).

After: the ports **20 of 24** (nanoGPT, ConvNeXt, Conformer and TCN 4 of 4, the Mixer and LLaMA
2 of 4); set 10's tagger 3 of 3 (was 1 of 3); the training twins 12 of 12. Still failing, in
*Known failures*: two LLaMA bugs inside the attention, two Mixer bugs. With the session's last
code, a sample of 33 families was run again (137 cases: sets 10 and 11, seven vision pairs and
twelve library families, among them LLaMA, GPT, T5, BERT, Mixtral, BLOOM, Falcon, OPT, XLNet,
DeBERTa, SpeechT5, Qwen): 129 of 137, every clean twin aligned; the 8 misses are the known
failures below. `run` recorded B again in call order in 13 of the 137 (all set-11 ports) and
tried other pairings in 11 (rotary pairs in LLaMA's `rope_base`, twice, and the rest as before:
Qwen, XLNet, DeBERTa), about 10 s each. Rows of this section's families
and of the families run again with them were measured this session and show the whole run's
seconds; the rest of the table is session 20's run (the whole corpus was not recorded again
this session: see the note of session 21).

## Built-in layers, window attention, stacked experts and training ports, held out (session 22)

Set 12, written by helpers that never ran the tool (NOTES-set12-h19..h21): `port_builtin_tf`
(paddle's `TransformerEncoder` with separate q/k/v against torch's with a packed `in_proj_weight`
and the other mask polarity), `port_rnn_tagger` (paddle's LSTM/GRU with `sequence_length`
against torch's over packed sequences), `port_swin` (window attention with a bias table indexed
by a buffer, shifted windows, patch merging that takes the four neighbours in another order and
ends paddle's stage where it starts torch's next one), `port_moe` (four SwiGLU experts as a list
against stacked 3-D expert weights, a raw position parameter against an Embedding), and two
training ports, `port_diffusion_train` (GroupNorm UNet, timestep MLP, ConvTranspose, warm-up)
and `port_gpt2conv_train` (torch's own copy of transformers' `Conv1D` against paddle Linear
q/k/v, tied embeddings, dropout, clipping).

First contact (the code of the session's start plus the `--ops` fix): **14 of 24** (clean twins
3 of 6, planted bugs 11 of 18); built-in layers and the diffusion UNet 12 of 12, Swin 2 of 4, the
MoE 0 of 4, the Conv1D port 0 of 4. What failed, and the general rule each needed:

- **A class named like a library's** (`Conv1D` copied into the port's own file): resolved as a
  user class, its weight `[in, out]` was taken as `[out, in]`, so `fc1` paired with `c_proj` by
  its transposed shape and q|k|v found no `c_attn`. A bare name the tables know
  (`UNQUALIFIED_CLASSES`) now denotes that class wherever it is defined.
- **Features concatenated in another order** (Swin's patch merging): the recorded values show
  it (`chunk_order`: B's chunks found one by one among A's); `run` pairs the weights that read
  them chunk by chunk (`concat_alternatives`), the comparison reads a norm's input and output and
  a Linear's input in B's order, and a tensor paired in parts with one tensor only anchors its
  module.
- **A root holding a position table** (the MoE's raw `pos_emb`): the model's root was anchored to
  paddle's position Embedding, pairing a leaf with the whole model; anchors are now checked for
  consistent nesting on both sides.
- **Stacked tensors** (`_stacks`): a tensor `[N, *s]` holds a module list's N tensors along a new
  first axis (experts), each its slice; the role a stack's name says chooses between same-shape
  groups (`w_gate` ~ `w1`), the shapes the orientation, never for a square matrix.
- **One-sided modules fed values nothing verified**: three readings were tried and taken back,
  each after the corpus showed what it moved, because values alone cannot tell the cases apart.
  (1) A one-sided module whose computed input nothing verified is no more suspect than the code
  before it: it named Swin's bias-index bug at the attention, but moved GPT's one-sided
  `attn_dropout`, the planted bug, to the attention too. (2) One side naming the paired call's
  own code moves the other side's one-sided module there: it named the MoE's routing bugs at the
  MoE block, but moved HF's `attention.attn` in MPNet and `attention.self` in NeZha, which the
  truth names. (3) Two one-sided modules, neither checked, both moved to the paired call: the MoE
  again, but RoFormer's `rotary` / `attention.self`, which the truth names, too.

After: **20 of 24**. Still failing: Swin's `paddle_rel_index_transposed` (paddle's one-sided
Softmax module is named on its side, the attention on torch's), and the MoE's three bugs (a
one-sided module is named on each side: paddle's expert, fed the tokens routed to it, and torch's
stacked experts, fed the routing weights; the truth names the MoE block, or paddle's expert 0).

The whole corpus recorded again with this session's code (4529 s; the 70 cases whose answer a
rule taken back during the run had moved, or that name a one-sided module, recorded again with
the last code): **378 of 393**, every clean twin aligned (97 of 97); design families 122 of 125,
held out 256 of 268. The 15 misses are the known failures below. The concatenation rule first
took MobileBERT's `trigram` bug (the shifted embeddings concatenated in another order) for a
convention and aligned it: where a weight reading the values has one full name on both sides,
two libraries that share a checkpoint read it as it is, so another order there is a bug, and
no other pairing is tried.

The corpus run found a regression of session 21, which the rows of session 20 had hidden: the
NCHW-against-NHWC rule compared electra's mask `[2, 1, 12, 1]` (over the queries: the planted
bug) with `[2, 1, 1, 12]` under a permutation and passed it. A permutation that only moves axes
of size one changes how a tensor broadcasts, not its layout: it is never taken (the two are
compared broadcast, and differ).

## Parts split, fused, nested or registered differently, held out (session 23)

Set 13, written by helpers that never ran the tool (NOTES-set13-h22..h25): `port_mamba` (a
selective state-space LM: a depthwise causal conv padded outside the module on the paddle side,
inside it and trimmed after it on the torch side; a scan written as a loop against a closed
form), `port_perceiver` (learned latents cross-attending through paddle's `MultiHeadAttention`
and torch's `MultiheadAttention` with `kdim`/`vdim`; hand-written latent self-attention with a
fused `qkv` against torch's built-in), `port_efficientnet` (MBConv with squeeze-excitation as
1x1 convs against Linears, BatchNorm with its momentum written each framework's way),
`port_detr` (a conv backbone, sine positions added to queries and keys only, learned object
queries; the decoder's self- and cross-attention packed on the torch side), two training ports,
`port_clip_train` (image and text towers registered in another order, packed attention
projections, a 0-d `logit_scale` against a `[1]` one, AdamW with clipping) and
`port_rnnlm_train` (a two-layer `nn.LSTM` against two one-layer LSTMs, tied weights, SGD with
momentum, StepLR, per-step batches), and a new planted bug in eight design families whose
kind those families had not had (`bert paddle_kv_swap`, `gpt mlp_residual`, `t5
paddle_ffn_reuse`, `bart paddle_softmax_axis`, `opt no_causal`, `electra pos_from_1`, `roberta
paddle_scale_d`, `mixtral topk_no_renorm`).

First contact (the code of the session's start): **21 of 32** (clean twins 3 of 6, planted bugs
18 of 26): EfficientNet and DETR 8 of 8, the new library bugs 7 of 8, Mamba 3 of 4, Perceiver 3
of 4, the CLIP port 0 of 4, the LSTM LM 0 of 4 (exit 2). What failed, and the general rule each
needed:

- **Two towers registered in another order** (CLIP: image first on paddle's side, text first on
  torch's): the LayerNorms of each block were paired crosswise (`norm1` with `ln_2`), and the q/k/v
  of one tower went into the other tower's packed projection. Registration order is now read
  within each part of a group that shared path words mark (`visual` on as many tensors of each
  side), and a packed tensor takes the run whose path words agree with its own module's.
- **The same name with size-1 axes apart** (the 0-d `logit_scale` against `[1]`): unmatched on
  both sides. The same full name with shapes apart only by axes of size one is one tensor,
  reshaped, whichever classes hold it.
- **An RNN's layer index in a tensor's name** (`weight_ih_l1` of a two-layer LSTM against
  `rnns.1.weight_ih_l0`): the transfer stopped (exit 2). The index is a block index now
  (`LAYER_INDEXED_LOCALS`), and a module whose tensors the other side keeps in several modules is
  the call partner of none of them (`module_splits`).
- **Padding moved out of a module** (Mamba's causal conv, twice in a row): the first conv's
  other input convention was judged against the second conv's inputs, which are another
  convention too; they are no evidence either way now, and the report says where each side's
  value sits in the other's.
- **A hand-written attention against `nn.MultiheadAttention`** (Perceiver): its fused `qkv`
  anchored the whole torch attention, which nesting then refused; nothing paired the two
  attentions, and the block was named. Modules whose subtrees hold exactly each other's tensors
  anchor each other, when each group has more than one owner and no module around either holds
  the same (a first version anchored DenseNet's BN+conv layer to torch's whole transition, which
  holds the pool as well: the corpus found it).
- **The wrong layer's module called** (T5 `paddle_ffn_reuse`: block 1's feed-forward runs block
  0's): the extra call of block 0's `wi` paired with block 1's `wi` by order. A call of a module
  anchored to one partner never pairs with a call of a module anchored to another, and a further
  call of a module whose other call is paired is not a module of one side only: block 1's
  feed-forward, whose code called it, is named.

After: **32 of 32**. DETR then showed a bug of the packed-run rule itself (its decoder's
self-attention took the cross-attention's q/k/v: the words of the packed tensor's parent were
compared with the run's attention), fixed before the corpus run.

The whole corpus recorded again with this session's code (4633 s; the eleven cases of the three
RNN families recorded again after the fix the run led to, below): **410 of 425**, every clean
twin aligned (103 of 103); design families 129 of 132 (the eight new bugs in them: 8 of 8), held
out 281 of 293. The 15 misses are the known failures below, the same 15 as in session 22. The run
found one bug of this session's own rules: a module's other tensors followed its weight by local
name only, and with the RNN layer index out of the name, port_tagger's bidirectional LSTM took
`weight_hh_l1`'s partner for `weight_hh_l0` (port_tagger and port_rnn_tagger failed, clean twins
included); they now follow it layer by layer, and the three RNN families pass (11 of 11).

## Parts held, nested or drawn differently, held out (session 24)

Set 14, written by helpers that never ran the tool (NOTES-set14-h26..h29): `port_rwkv` (an RWKV
LM: a token shift as an `nn.ZeroPad2d` module against an inline concatenation, the WKV recurrence
as a stabilised loop against a parallel form, mixing vectors `[d]` against `[1, 1, d]`, the input
LayerNorm before the first block on one side and inside it on the other), `port_vqvae` (a
codebook the paddle quantiser holds itself against an `nn.Embedding` inside torch's, an argmin
over distances written two ways, a conv-transpose decoder), `port_pointnet` (pointwise `Conv1D`
on `[b, c, n]` against `Linear` on `[b, n, c]`, 64 points of 64 channels, BatchNorm on transposed
points, a T-Net), `port_dlrm` (torch's `EmbeddingBag` against paddle's `Embedding` with a padding
row and a sum, a pairwise dot-product interaction), two training ports, `port_vae_train` (two
heads `fc_mu`/`fc_logvar`, registered logvar first, against one packed head; Adam with warm-up)
and `port_gcn_train` (the normalised adjacency a forward input on paddle's side and a buffer on
torch's; a layer's own `weight` against a Linear inside the partner layer; weight decay on
weights only; cosine schedule), and a new planted bug in eight design families, of a kind each
had not had (`llama paddle_residual_normed`, `bloom paddle_gelu_erf`, `codegen rope_q_only`,
`albert mask_axis`, `distilbert paddle_head_split`, `ernie paddle_head_ln_eps`, `xlm lang_zero`,
`mobilebert bottleneck_swap`).

First contact (the code of the session's start): **13 of 32** (clean twins 1 of 6, planted bugs
12 of 26): the eight new library bugs 8 of 8, VQ-VAE 2 of 4, the VAE 2 of 4, DLRM 1 of 4,
PointNet 0 of 4, RWKV 0 of 4 (exit 2), the GCN 0 of 4 (exit 2). What failed, and the general rule
each needed:

- **An input one model holds itself** (the GCN's adjacency: an input of paddle's `forward`, a
  buffer of torch's): the recording of B stopped ("recorded 2 input tensor(s) but the spec's
  inputs() has 1"). The spec's inputs now take A's recorded ones by position and shape, then
  shape in order; a recorded input left over is said ("a value this model holds itself").
- **A layer's own weight against a Linear inside its partner** (the GCN: `convs.0.weight`
  `[in, out]` against `gc1.lin.weight`; their bias pairs `convs.0` with `gc1`): unmatched, and
  `convs.0` was kept apart from both `gc1` and `gc1.lin`. Left-over tensors pair first within
  modules the pairs so far make one computation (`partner_scopes`: partnered modules and, upward,
  their parents); of nested owners, the outer one is the partner. RWKV's mixing vectors `[d]`
  against `[1, 1, d]` pair the same way (axes of size one move no element).
- **Two heads registered in another order than they run, against a packed head** (the VAE:
  `fc_logvar` registered first): the halves went the wrong way and the clean twin diverged. The
  order both models call their modules had the halves right, but `run`'s retry in call order
  compared only whole pairs, so it saw no difference to try; it compares the parts too now.
- **A norm before the first block on one side, inside it on the other** (RWKV's `ln0`): the
  transfer refused (exit 2). A class whose block groups differ in size pairs in call order
  (`across_blocks`); as the transfer cannot know B's calls, `run` records B once with its own
  weights, pairs in call order and records B again (`call-order.json`), saying so.
- **A weight-owner called on other inputs than its partner** (VQ-VAE: paddle's quantiser holds
  its codebook, torch's holds an `nn.Embedding` called on indices; DLRM: an `Embedding` whose rows
  a bag module sums against an `EmbeddingBag`): the quantiser was paired with the embedding and
  the wrong call named. The anchor moves up to the enclosing call that matches the partner's
  input kinds or output shapes, when it holds no other anchored module.
- **Lookup tables with a padding row more** (DLRM): unmatched, so torch's tables kept their own
  values. Tables of one width with the same count of extra rows on one side pair their common
  rows; the report says so ("a padding row or a padded vocabulary is a convention, a vocabulary
  size set wrong is not").
- **Layouts the shapes cannot say** (PointNet, 64 points of 64 channels): a pointwise conv's
  output `[b, c, n]` was compared as stored with the Linear's `[b, n, c]`, a false divergence.
  Framework layers carry their inputs' permutation to their outputs and to the values' later
  uses; a conv against a Linear takes the permutation their types say; where both readings fit,
  the values choose (torch transposes back around its BatchNorm).
- **Data movement named as the culprit** (RWKV: torch's one-sided `time_shift` `ZeroPad2d`, which
  nothing on the paddle side compares, named for bugs in the enclosing mixer's code): a call whose
  outputs hold only zeros and its inputs' elements moves data and is not named as unverified.

After: **31 of 32**. The miss is `port_dlrm torch_top_mlp_autocast_fp16`: torch's top MLP runs
under float16 autocast. The report says "precision difference: the output of top_mlp.0 computed
in float32 in A and float16 in B", but the pairs are judged at their less precise side's
precision (the design for `--autocast` runs), so the run is ALIGNED (exit 0). Judging a precision
nobody declared at the other side's would catch it: done in session 25 (below).

The whole corpus recorded again with this session's code (457 cases, 6155 s of runs, two
processes side by side for the last third; the 52 hand-port cases the first process ran before a
last fix of the wrapper rule recorded again with it): **441 of 457**, every clean twin aligned
(109 of 109); design families 137 of 140 (the eight new bugs in them: 8 of 8), held out 304 of
317. The 16 misses are the 15 known failures below and `port_dlrm torch_top_mlp_autocast_fp16`.
The slow suite found one bug of this session's own rules before the corpus did: the wrapper
rule compared output shapes, so a patch convolution's anchor moved off its Linear twin (MLP-Mixer
diverged at once); it compares element counts now (a layout moves no element).

## Layers drawn as other classes, parts no name tells apart, held out (session 25)

Set 15, written by helpers that never ran the tool (NOTES-set15-h30..h33): `port_wavenet` (a
WaveNet: an `Embedding` looked up by mu-law id on paddle's side against a pointwise `Conv1d` over
one-hot tokens on torch's, a dilated conv packed filter|gate against two convs registered gate
first, causal padding outside against inside and cropped, 1x1 convs against Linears over
channels-last data), `port_realnvp` (a RealNVP flow: masked scale and shift heads as separate
Linears against one packed head, the vector flipped after every coupling on one side),
`port_gat` (a graph attention network: the attention vectors `att_src`, `att_dst` `[1, H, D]`
against one `att` `[H, 2D]` holding the target half first, `-inf` against `-1e9` masking),
`port_dcgan` (a DCGAN generator and discriminator in eval mode: a Linear `[16, 512]` reshaped to
`[32, 4, 4]` against a `ConvTranspose2d` `[16, 32, 4, 4]` on a 1x1 input), `port_hyena` (a
Hyena long-convolution LM: an FFT convolution against a direct one, the implicit filter's MLP
calling one `Sin` layer twice against two copies, the in-projection split in another order),
`port_capsnet` (a capsule network: the routing inline against a module of its own, the
transformation weights `[in, out, d_out, d_in]` against `[out, in, d_in, d_out]`), and two
training ports, `port_gan_train` (a generator and a discriminator in one model, the
discriminator called three times a step, Adam betas (0.5, 0.999)) and `port_cls_accum_train`
(label smoothing, AdamW with decay on weights only, warm-up, clipping by global norm).

First contact (the code of the session's start plus the undeclared-precision rule below):
**13 of 32** (clean twins 2 of 8): the two training ports 8 of 8, CapsNet 3 of 4, GAT 2 of 4,
WaveNet 0 of 4, DCGAN 0 of 4, Hyena 0 of 4, RealNVP 0 of 4 (exit 2). What failed, and the
general rule each needed:

- **A layer drawn as another class** (WaveNet's embedding against a one-hot pointwise conv,
  DCGAN's Linear against a transposed conv on a 1x1 input, CapsNet's user weights with two axis
  pairs swapped): one tensor left on each side, listed as a structural difference, so each kept
  its own values and the clean twins diverged at once. Trainable tensors left over now pair,
  whatever their classes, where each is the other's only candidate with as many elements and
  one reordering of its axes makes one the other (the reordering that cuts the fewest axes when
  a reshape is needed; a square matrix is never guessed).
- **A mapping file the tool wrote and then refused** (WaveNet): `run` retries a pairing in the
  order the models call their modules by writing `call-order.json` and recording B with it; the
  weight map lists one-sided tensors under `one_sided`, which the mapping reader refused as an
  unknown key, so the retry never ran whenever one side had a tensor the other lacked.
- **Two vectors against one that holds both** (GAT): unmatched. Tensors left beside one that
  holds them concatenated along one axis (axes of size one aside) are its parts, in registration
  order; no name says which half is which, so when the run diverges inside the module, `run`
  records B once more with the two parts swapped in every tensor packed that way and keeps the
  run the values confirm. With a bug further on in the same module (GAT's LeakyReLU slope) no
  call of the module agrees under either order; a pairing is now also kept when its first
  divergence comes later and is still inside the module holding the weights.
- **A module called twice against two copies** (Hyena's `Sin` with a frequency vector): the
  second copy was one-sided. A trainable tensor left whose sibling of its class, name and shape
  paired, where the other side has nothing of the kind left, is that tensor again (tied: its
  gradient is compared with the sum of the copies').
- **A float64 referee of a model that makes float32 tensors itself** (WaveNet's
  `one_hot(...).float()`; found by the modes run below): the referee recording stopped at the first
  conv (exit 2). In a cast run a layer with weights receives its floating inputs in their dtype.

After: **20 of 32**. The misses:
- `port_wavenet torch_gate_swapped`, `port_gat torch_att_halves_swapped`: torch uses the two
  halves of a packed tensor the other way round. Nothing in the names or shapes says which half
  is which, so the values choose the pairing, and under the pairing they choose this torch model
  is a correct port: exit 0 (like `port_mixer patch_order`).
- `port_capsnet paddle_two_iters`, `torch_softmax_in_caps`: torch's capsule layer computes its
  predictions inline and hands them to a routing module of its own, whose output is the layer's;
  paddle's layer does both inline. The layers are named; the truth names torch's routing module.
  What the routing module receives is compared with nothing, so the values cannot say whether
  the inline code or the routing made the difference.
- `port_hyena` (all four): the MLP of the implicit filter pairs with torch's `kernel`, which also
  applies the decay window (the MLP nested inside holds the same weights), and the in-projection
  is split in another order on each side (x0|x1|v against v|x1|x2), which no rule reorders.
- `port_realnvp` (all four, exit 2): paddle's masked heads hold inert entries the torch model
  does not have at all (7,520 against 5,936 values), taken in reversed order after torch's flip;
  the tool refuses to guess and names the tensors and the mapping entry to write, but a mapping
  file cannot express a reversed slice.

**Half precision nobody declared** (`port_dlrm torch_top_mlp_autocast_fp16`, session 24's miss):
when neither trace was recorded under `--autocast`, one side holds half-precision records and
the other none, and that side computes in float32 almost everywhere, its half-precision outputs
are judged at float32 (tolerance, noise floor, rounding ceiling): the call that drops to float16
is the first divergence, and the report says "neither run was recorded under autocast ...
judged at float32".

The whole corpus recorded again with this session's code (489 cases, 7694 s of runs, two
processes side by side; the 13 cases where `run` kept a pairing the values chose recorded again
after the last fix below): **462 of 489**, clean twins 115 of 117 (Hyena's and RealNVP's fail);
design families 137 of 140, held out 325 of 349. The 27 misses are the 15 known failures of
session 24 less `port_dlrm` (now right) and the 12 of set 15 above. The corpus caught one fault of
this session's own rules: keeping a pairing whose divergence moves on inside the module held for
sibling modules the names had paired too, and "fixed" mT5's wrong activation by swapping its
`wi_0` and `wi_1`; it holds only for parts no name paired now.

Other modes on set 15's clean twins that align (WaveNet, DCGAN, CapsNet, GAT and the two
training ports): `--ops` 6 of 6, `--single-step` 6 of 6, `--referee` 6 of 6 (5 of 6 before the
float64 fix above: WaveNet's referee recording stopped).


## Boundaries drawn elsewhere, fused branches, RNN cells, held out (session 26)

Set 16, written by helpers that never ran the tool (NOTES-set16-h34..h37): `port_retnet` (a
RetNet: multi-scale retention with a per-head decay, rotary q/k as complex products against pair
rotations, four Linears against one packed q|k|v|g), `port_fnet` (an FNet encoder: token mixing
by `fft2` in a layer of its own against two 1-D FFTs inline), `port_segformer` (a SegFormer:
overlapping patch embeddings, attention with a strided spatial reduction, hand-written `q` and
packed `kv` Linears against `nn.MultiheadAttention`, NCHW maps against `[B, N, C]` tokens),
`port_yolo` (a YOLO-style detector: CSP blocks whose two 1x1 conv+BN branches are one `cv12`
conv+BN on torch's side, SPPF, a neck, a decoded head), `port_tabtransformer` (per-column
embedding tables against one shared table with offsets and a reserved row), `port_transformer_xl`
(relative positions with memory, `r_w_bias`/`r_r_bias`, a rel-shift by padding against a
gather, batch-major against time-major, the attention ending with its residual and LayerNorm on
one side), and two training ports, `port_siamese_train` (one tower called on anchor, positive
and negative, triplet loss, AdamW with warm-up) and `port_ctc_train` (a conv subsampler, a
bidirectional GRU as two `GRUCell` in `nn.BiRNN` against one `nn.GRU`, CTC loss, SGD with
momentum and clipping).

First contact (the session's start, with the nested-call and moved-padding rules below, which
were made on session 25's Hyena before set 16 was seen): **13 of 32** (clean twins 4 of 8):
RetNet 4 of 4, siamese 4 of 4, FNet 3 of 4, Transformer-XL 2 of 4, SegFormer 0 of 4 (exit 2),
YOLO 0 of 4 (exit 2), TabTransformer 0 of 4, CTC 0 of 4 (exit 2). What failed, and the general
rule each needed:

- **RNN cells against a bidirectional layer** (CTC, exit 2): `rnn.fw_cell.weight_ih` against
  `encoder.weight_ih_l0`, four same-shape tensors a direction, nothing to tell them apart. A cell
  holds its layer's tensors for one direction under the same names without the suffix; a word
  of its path (`bw`, `backward`, `reverse`) says the direction.
- **A layer moved across a boundary** (CTC: paddle's subsampling block ends with its Dropout,
  torch's caller applies `subsample_drop`): both one-sided, the rate bug blamed on a ReLU. The
  last (first) child of a paired call, unpaired, pairs with the unpaired call right after
  (before) its partner when the framework types are equivalent and the inputs hold as many
  elements; the enclosing pair's records that hold one of its values on each side pass.
- **A wrapper that scales** (Transformer-XL: an embedding that scales itself against an
  `nn.Embedding` inside a wrapper that scales): the weights anchor the inner table, whose output
  differs by sqrt(width); once a bug in the attention made everything after differ, the
  embedding was blamed. Of a weight-owner and the wrappers that hold no other anchored module,
  the call whose output statistics agree with the partner's pairs.
- **Parallel branches fused into one module** (YOLO, exit 2): `conv1`, `conv2` (conv+BN each)
  against one `cv12` with both branches' channels. Inside partnered modules, the child modules
  left are units; a unit is one unit of the other side or a run of them whose tensors
  concatenate along the first axis to its own, and the units pair when exactly one
  order-preserving segmentation uses them all. A BatchNorm's statistics now follow an affine
  weight that a late pass paired (they were left behind: a false divergence at the first BN).
- **Nested calls holding the same weights, padding moved across a conv** (found on Hyena,
  session 25's held-out failure, before this set): torch's `kernel` wraps the filter MLP and
  windows it; paddle calls the MLP and the window as siblings. Of nested calls holding exactly
  the same pins, the one of the partner's output shape pairs. A causal conv padded by `F.pad`
  on one side and by itself (trimmed after) on the other, whose inputs differ only by zeros and
  whose outputs hold each other in a window, computed the same values: it passes even when a bug
  later makes everything after it differ.

How this session's table was made: the whole corpus ran at commit bcdbf3f (the alignment and
judging rules above); the matcher rules after it (units, buffers following, a bias waiting for
its weight, packed parts in partnered modules) were checked by recomputing the weight maps of
all 122 clean twins from their recorded traces with the code before and after: 2 changed
(ERNIE's and RoFormer's prediction-head transform, the same pairs under another `how`), one
regression found that way and fixed (`port_seq2seq`); set 16, Hyena, `port_seq2seq`,
`ernie_train` and `roformer` ran again with the final code.

After: **23 of 32** (clean twins 6 of 8; `--ops`, `--single-step` and `--referee` each 6 of 6 on
the six that align). Session 25's Hyena: 1 of 4 (0 before). The misses:
- `port_segformer` (all four, exit 2): paddle names its stages `block1`, `block2` (the stage
  number inside a word, each stage's blocks counted from 0 again) where torch has
  `stages.N.blocks.M`, and torch's `nn.MultiheadAttention` packs paddle's `q` with its packed
  `kv`. In the first stage the attention's spatial-reduction conv and norm pair, and `q`|`kv`
  now pack into `in_proj_weight` there; the second stage has no reduction, nothing inside its
  attention pairs first, and the packing is not looked for across block indices that disagree.
  (Tried and reverted: looking for packed parts anywhere inside a partnered encoder, which
  packed a Transformer's `q_proj`|`k_proj` into the next block's feed-forward in `port_seq2seq`.)
- `port_tabtransformer` (all four): five per-column tables against one shared table with a
  reserved row and offsets, and a numerical tokenizer of another class of the same shape as the
  first table: the first table pairs with the tokenizer; the packing with a reserved row is not
  a layout the matcher knows.
- `port_fnet torch_fft_batch_axis`: torch's FFT is inline in its block, paddle's in a layer of
  its own; the tool names paddle's `fourier` layer (recorded on one side only, the value it
  returned first differs), the truth names the block around it.

## Names, packs and boundaries each port draws its own way, held out (session 27)

Set 17, written by helpers that never ran the tool (NOTES-set17-h38..h41): `port_gmlp` (a gMLP:
one packed channel projection chunked into u|v against two Linears, a spatial projection as a
`Conv1D` over the sequence against an einsum with a raw `[seq, seq]` parameter, one GELU call on
the packed tensor against a GELU module called on each half), `port_linformer` (low-rank
projections of keys and values along the sequence, `nn.Linear` modules against raw
parameters, separate q/k/v against a packed `qkv`), `port_seresnext` (grouped convs, the
squeeze-excitation as Linears against 1x1 convs, BatchNorm with its ReLU fused, a shortcut
registered first on one side and last on the other), `port_deepfm` (per-field lookup tables
against one table read at per-field offsets), `port_gqa` (a Mistral-style decoder: grouped-query
attention with a sliding window, rotate-half rope against the interleaved complex rope with the
packed `wqkv` rows permuted per head, tied against separate output head), `port_nerf` (a NeRF
MLP whose positional encodings list their features in another order, the first Linear's input
rows permuted accordingly), and two training ports, `port_lora_train` (LoRA adapters on frozen
weights: a wrapper holding base, A and B against sibling modules; one dropout module called for
q and v against one per adapter; AdamW) and `port_sru_train` (an SRU LM: three projection
Linears and four cell vectors against one packed projection and two packed vectors; SGD with
momentum and clipping). Set 18, written after set 17's rules (NOTES-set18-h42, h43):
`port_mobilevit` (unfold/fold around a transformer over patches), `port_bigru_crf` (a BiGRU
tagger with a hand-written CRF: the CRF's arguments in another order, transitions `[from, to]`
against `[to, from]`), `port_vit_mae` (a masked autoencoder: given keep order, gather unshuffle,
loss on masked patches) and `port_wgan_gp_train` (a WGAN critic with a gradient penalty:
double backward).

First contact, with the code of the session's start: set 17 **17 of 32** (clean twins 4 of 8):
Linformer 4 of 4, gMLP 3 of 4, GQA 3 of 4, LoRA 3 of 4, SE-ResNeXt 2 of 4, DeepFM 2 of 4, NeRF
0 of 4, SRU 0 of 4; set 18 **12 of 18** (clean twins 2 of 4): MobileViT 5 of 5, MAE 4 of 4,
WGAN-GP 2 of 4, BiGRU-CRF 1 of 5. Set 17's misses also held SegFormer's (session 26) cause.
What failed, and the general rule each needed:

- **Two norms of one block registered in another order** (SegFormer, held out in session 26,
  exit 2): `norm1`, `norm2` of one shape, torch registering `norm2` first, paired by rank, and
  swapped. Where a parent holds several tensors of a group each under another module name, the
  same name in a parent of the same rank is evidence above registration order.
- **Block indices at other depths** (SegFormer): `block1.0` (index 0) against `decoder.mlps.0`
  (index 0) and `stages.0.blocks.0` (0, 0): the group was split by the coincident index and an
  attention projection paired with a decoder projection. Indices split a group only when both
  sides index at the same depths.
- **An attention holding nothing else** (SegFormer's second stage, no reduction layer): its `q`
  and `kv` pack into `in_proj_weight` in the partner of the attention, its parent or grandparent
  (the block, whose norms paired).
- **Lookup tables packed into one** (DeepFM): per-field tables are the rows of the one table,
  in order: the packed pass, along the rows of an embedding.
- **A module's own vectors packed** (SRU, all four): once the three projection Linears of one
  cell were found packed into the other cell's projection, the two cells are one computation,
  and the vectors each holds itself pair as parts of the other's, in registration order.
- **Two same-shape 1x1 convs registered in another order** (SE-ResNeXt `torch_stride_on_1x1`):
  the pairing in call order was tried and diverged at the same paddle record, paired with an
  earlier torch call: it was refused because the B record number decided. Now only A's record
  decides, and a tie keeps the order both models compute in.
- **A fused activation inside a block a later bug breaks** (SE-ResNeXt `torch_se_after_add`):
  the BatchNorm with its ReLU fused was blamed because the block's later records differ. A
  difference with a known relation whose every recorded consumer receives values that agree is a
  boundary difference whatever follows. Then paddle's one-sided pooling inside the SE was named:
  its input agrees where the BatchNorm pair compares it and differs where the SE pair does;
  such a disputed value confirms nothing, and the block is named on both sides.
- **A dropout module of the wrong rate, called twice** (LoRA `lora_drop_default`): the first
  call's difference was absorbed as a boundary difference because the second call, the next
  error, ended its window. Another call of the same module left failing is not an independent
  error.
- **Arguments in another order** (BiGRU-CRF, four of five): `crf(emissions, lengths, tags)`
  against `crf(emissions, tags, lengths)` compared position by position; they now pair by dtype
  and shape where a unique order fits. Then the transitions: a square matrix of the port's own
  class stored `[from, to]` against `[to, from]`, tried transposed and kept where the values
  confirm it (`square_alternatives`).
- **Gradients through a double backward** (WGAN-GP, two of four): every forward value and every
  parameter gradient agree; a gradient recorded for an intermediate value differs because the
  module hooks see another backward on each side. In a step whose forward, loss and parameter
  gradients all agree, such a gradient reaches nothing that trains: it passes.

How this session's table was made: the whole corpus ran at commit 5ee0e62 (every rule above but
the dropout one); the 65 cases whose report names a boundary difference, and LoRA, ran again with
the final code (e79a634); the weight maps of the 123 clean twins recorded at the session's start
were recomputed with the new matcher: the same pairs except ConvNeXt's final norm (the same pair
under another `how`), after one regression found that way was fixed (`port_seq2seq`: looking for
a packed tensor's parts anywhere inside the partner of its nearest partnered ancestor packed a
`q_proj`|`k_proj` into the next block's feed-forward; now at most the grandparent).

After: set 17 **26 of 32** (clean twins 6 of 8), set 18 **18 of 18**; SegFormer (session 26) 2 of 4
(0 before). The misses:
- `port_gqa` clean: torch's interleaved rope over a packed `wqkv`; the rotary alternative permutes
  whole q and k projections, not a packed part's rows per head.
- `port_nerf` (all four): the encodings' features in another order, read by three Linears; the
  reordering is not a few equal chunks (`chunk_order` looks for at most 8).
- `port_gmlp torch_gelu_tanh` (precision-level): one GELU call on the packed u|v against one
  call per half: the calls are not paired, and the spatial gating unit, where the difference is
  first compared, is named.
- `port_segformer torch_upsample_nearest`, `torch_dwconv_no_transpose`: a module on one side only
  (torch's `decoder.up`; torch's `dwconv` wrapper), where the tool names the enclosing head and,
  on paddle's side, the MLP around the conv the truth names.

## Units, masks and boundaries each port draws its own way, held out (session 28)

Set 19, written by helpers that never ran the tool (NOTES-set19-h44..h46): `port_wav2vec_fe`
(a wav2vec2 front end: GroupNorm per channel, a weight-normed positional conv, paddle's
`weight_norm` against torch's parametrization), `port_pixelcnn` (a gated PixelCNN: masked
convolutions whose masks are persistent 0/1 buffers), `port_dit` (a DiT: adaLN-Zero modulation,
the conditioning vector activated before the block on one side and inside it on the other),
`port_stylegan_mod` (a StyleGAN2 synthesis stack in NVIDIA's layout against rosinality's: layers
nested apart, weights with leading axes of size one, a fully connected class of each port's own
storing `[in, out]` against `[out, in]`, modulated convs as a grouped conv against a loop), and
two training ports, `port_byol_train` (BYOL: an EMA target network, BatchNorm in the projector)
and `port_sched_clip_train` (warm-up-cosine AdamW with decay groups and clipping by global
norm). Set 20, written after set 19's rules (NOTES-set20-h47..h49): `port_tacotron_attn` (a
Tacotron-2 decoder core unrolled over six steps: LSTM cells, location-sensitive attention),
`port_hrnet_tiny` (two branches and fuse layers, an upsample inside a `Sequential` against an
inline `F.interpolate`), `port_alibi_lm` (an ALiBi LM whose q|k|v projection is packed head by
head in a class of its own), `port_bifpn` (a BiFPN: fusion weights one vector per node against
one tensor per path), `port_ppo_train` (a PPO update) and `port_mixup_train` (mixup with
Nesterov SGD).

First contact, with the code of the session's start: set 19 **20 of 28** (clean twins 5 of 6):
wav2vec2 5 of 5, DiT 4 of 5, PixelCNN 3 of 5 (two mask bugs exit 0: the mask was copied from
one port onto the other), StyleGAN2 0 of 5 (exit 2), BYOL 4 of 4, the schedule run 4 of 4; set
20 **17 of 28** (clean twins 3 of 6): Tacotron 3 of 5, HRNet 2 of 5, ALiBi 3 of 5, BiFPN 2 of 5,
PPO 4 of 4, mixup 4 of 4. What failed, and the general rule each needed:

- **Layers nested apart** (StyleGAN2, exit 2): a layer holding its weight, bias and noise
  strength with an `affine` child against `conv` (with a `modulation` child), `noise` and
  `activate`; no name, type or index relates them. Left over after every other pass, modules
  pair by what their subtrees hold (shapes, axes of size one and axis order aside), one class
  at a time in registration order, largest units first, down to the last tensor of its kind in
  a unit (`_subtrees.py`).
- **A user class's square matrix** (StyleGAN2): the mapping network's `[32, 32]` layers have no
  shape to say their layout; the non-square matrices of the same pair of classes were all
  paired transposed, so the square ones are too (`_classlayout.py`).
- **A mask copied from one port onto the other** (PixelCNN, two bugs exit 0): a persistent
  buffer of 0/1 entries is a pattern each port builds from its configuration: compared, never
  copied (`is_pattern`, checked on the values: variance mean x (1 - mean)).
- **A side output used only at the end** (StyleGAN2 `torch_torgb_no_eqlr`): the first RGB
  image's difference was passed as a boundary because the next records agreed, but those run on
  the feature stream beside it. Records whose values are provably beside a difference (recorded
  before it outside its call, or computed only from such values) are no evidence.
- **An activation before the block or inside it** (DiT `torch_modulate_no_one`): the block's
  conditioning input differs by design; the value one side hands over is received again inside
  and agrees there, so the input passes and the block's own bug is named. Not when the partner
  value there is another argument of the call (BLOOM's residual given the normed input, which
  the first version of this rule passed: caught by the corpus).
- **Experts side by side** (`port_moe`, held out since session 22, two of its three known
  failures): several unchecked expert calls inside a block are not one more likely than
  another; the block is named on both sides, with them listed (`paddle_w1_w3_swapped`, whose
  truth names the first expert, still fails).
- **q|k|v packed head by head in an unknown class** (ALiBi clean and `torch_swiglu_swapped`):
  `run` tries the head-by-head cut for likely head sizes, weight and bias together, and keeps
  the one the attention confirms.
- **Fusion weights per node against per path** (BiFPN clean): the tensors two partner layers
  hold themselves pair as runs (concatenated or stacked) of the other's.
- **An upsample at a module's edge** (HRNet clean and two bugs): one output is the other's
  repeated by nearest neighbour: the same values, a boundary whatever follows.
- **An LSTM cell returning `(h, (h, c))` against `(h, c)`**, once per decoder step (Tacotron,
  after the rule on beside values): the window of a boundary ends at the next error still
  standing, not at a later call already judged a boundary.

How this session's table was made: the whole corpus ran at commit de7018a (every rule above), about
64 minutes wall in two processes; one rule changed after it (side by side means calls of several
modules: a module called twice, NeZha's relative-position table or RoFormer's rotary module, had
been taken as two suspects), and the 64 cases whose report names a call recorded on one side only
ran again with the final code (5810e06): NeZha `rel_clip` and RoFormer `paddle_rope_halves` pass
again. Whole corpus: **585 of 627** (clean twins 144 of 149); the cases of session 27's corpus,
533 of 571 (532 then).

After: set 19 **27 of 28** (clean twins 6 of 6), set 20 **24 of 28** (clean twins 6 of 6). The
misses:
- `port_stylegan_mod paddle_pixelnorm_l2`, `port_tacotron_attn paddle_stop_no_sigmoid`,
  `port_bifpn paddle_p5_relu`: paddle computes inline what torch computes in a module of its own
  (a PixelNorm, a Sigmoid, an activation), and the bug is paddle's. The tool names torch's
  one-sided module (its inputs agree, its output is the value that differs); the truth names
  the module around it on torch's side. The values cannot say which side is wrong.
- `port_tacotron_attn torch_prenet_last_relu_missing`: paddle runs the prenet once over all
  frames, torch once per decoder step; the calls pair one to one in order, and the decoder
  cells are named.
- `port_bifpn torch_pool_zero_pad`: torch pads before its max-pool inside a wrapper; paddle's
  pool pairs with torch's inner pool, whose input is the padded one (another shape), so paddle's
  pool is not a candidate and paddle's layer is named.

## Layouts only the values tell, operations in another order, held out (session 29)

Set 21, written by helpers that never ran the tool (NOTES-set21-h50..h52): `port_mla` (a
DeepSeek-V2-style decoder with multi-head latent attention: a compressed kv with a decoupled rope
key, q|rope and latent|rope-key fused on one side and separate on the other, rope interleaved
against half-split), `port_edsr` (EDSR: a mean shift as a frozen 1x1 conv against an inline
subtraction, residual scaling as a module or inline, `nn.PixelShuffle` against a depth-to-space
written in TensorFlow's channel order), `port_stn` (a spatial transformer: affine grid sampling,
a ReLU before a max-pool on one side and after it on the other), `port_gin` (a GIN: scatter
against a dense adjacency, one `eps` per layer against one vector, one readout Linear over the
concatenated pools against a sum of per-layer heads), and two training ports, `port_dino_train`
(DINO: an EMA teacher updated after the step, a centre buffer, a dropout module against
`nn.Identity`) and `port_kd_rmsprop_train` (distillation with a frozen teacher and RMSProp).

First contact, with the code of the session's start: **10 of 28** (clean twins 2 of 6): MLA 2 of
5, EDSR 1 of 5, STN 1 of 5, GIN 0 of 5 (exit 2), DINO 3 of 4, distillation 3 of 4. What failed,
and the general rule each needed:

- **Feature columns in another order** (NeRF, set 17, four cases; the rule's first family): an
  encoding ordered per frequency against one ordered per function is no set of equal chunks.
  Each of B's columns is looked for among A's (`column_order`); the matrices reading the value
  pair their input columns run by run (`column_alternatives`), kept when a call of one of them
  agrees; the value is read in B's order wherever it is recorded (the encoder's output too).
- **A call fed only tensors no pair of its own compared** (NeRF's colour branch, handed two
  arguments against one concatenation): it is judged by those values where other records
  compared them; the branch's feature input differed there, so it is no candidate, and the
  encoder that made the difference is named.
- **A `Sequential` ending in a ReLU** (NeRF `paddle_skip_pre_relu`): an unverified container
  whose output is a call inside it returning it (a ReLU, which only moves data) is not named.
- **A ReLU before a max-pool on one side and after it on the other** (STN clean): the pool's
  input and output differ, everything after agrees; a call whose differing inputs come right after
  agreeing records is judged with its inputs by what anything later shows: a boundary difference.
  Its consumers are found through a reshape (the pooled map flattened for the localisation head).
- **A `Sequential` in which a checked call received the first differing value** (STN
  `torch_bn_after_pool`): a container that only calls its children (`CALL_CONTAINERS`) is not the
  maker: the pair around it is named.
- **Depth-to-space in another channel order** (EDSR clean and `torch_conv_last_replicate`):
  `nn.PixelShuffle` (CRD) against TensorFlow's order (DCR); each side's slot-to-channel table is
  read from the values, and when both are known orders the convolution's output channels pair
  accordingly (`subpixel_alternatives`); an unknown arrangement (row and column offsets swapped,
  `torch_d2s_ij_swapped`) is not tried and stays a divergence.
- **One `eps` per layer against one vector** (GIN): tensors of one local name in modules numbered
  alike pair with runs of the tensor the module enclosing their partners keeps
  (`pair_ancestor_packs`).
- **A dropout module against `nn.Identity` in its place** (DINO `teacher_dropout`): where one
  side names a module of its own as the maker, the other side's placeholder that returned the
  value compared with it is named there (`why: "counterpart"`; a placeholder only: paddle's
  dropout after HF's activation module is no stand-in, as BERT's truths say).

How this session's table was made: the whole corpus ran at commit 8f1289b, about 64 minutes wall
in two processes; the corpus caught four regressions of the first versions of this session's
rules (GPT `scale` and the GPT training twin's `attn_dropout`: an attention handed a mask compared
nowhere is still the maker; ConvBERT `concat_order`: a concatenation in another order in one block
only is a bug; DLRM's bag, gMLP's gate and two MoE cases: calls fed uncompared tensors; SpeechT5
`paddle_pad_positions`: a chain of differences carried on is not a row of boundaries), each fixed
and run again. Then every case was compared again with the final code (`compare` on the recorded
traces), and the cases whose run had kept another pairing, or paired in call order, ran whole
again. Whole corpus: **604 of 655** (clean twins 149 of 155; design families 137 of 140, held out
467 of 515); the cases of session 28's corpus, 589 of 627 (585 then: NeRF's four).

After: set 21 **15 of 28** (clean twins 4 of 6): MLA 2 of 5, EDSR 3 of 5, STN 3 of 5, GIN 0 of 5,
DINO 4 of 4, distillation 3 of 4. The misses:
- `port_mla` clean (and with it `paddle_residual_from_normed`, `torch_silu_of_product`): paddle's
  `q_b_proj` packs each head's nope and rope rows (`[h0: nope 8 | rope 4][h1: ...]`) and its
  rope rows are interleaved pairs; torch keeps nope and rope in two Linears, rope half-split. The
  weight map cuts the packed tensor in two blocks; the grouped and rotary alternatives are each
  tried alone, and neither layout alone makes a call agree.
- `port_gin` (all five, exit 2): one readout Linear over the concatenated pools against a sum of
  three per-layer heads: the weight pairs as three parts of its input axis, but its one bias is
  the sum of three; no transfer writes zeros into two of them (the trace and mapping formats have
  no such entry). The refusal names the four biases and the mapping line.
- `port_stn paddle_sample_align_corners`, `torch_theta_transposed`, `port_edsr
  paddle_res_scale_on_sum`, `torch_d2s_ij_swapped`: a module one side has and the other computes
  inline (a grid sampler, a residual scale, a pixel shuffle), the values cannot say which side is
  wrong; the tool names the one-sided module, the truth the pair around it (session 28's
  ambiguity again).
- `port_kd_rmsprop_train eps_outside`: torch's own RMSprop (epsilon outside the square root)
  against paddle's: the tool reports it as the framework convention it knows
  (`OPTIMIZER_CONVENTIONS`, confirmed by replaying each side's first update), exit 0; the truth
  calls it a porter's bug. Both readings are defensible; the report says which formula each side
  used.

## Sums, parts along a new axis, tokens in another order, held out (session 30)

Set 22, written by helpers that never ran the tool (NOTES-set22-h53..h55): `port_cait` (CaiT:
talking-heads attention, LayerScale, class attention with the class token first on one side and
last on the other, q|k|v fused on one side, k|v on the other), `port_convmixer` (ConvMixer: a
residual wrapper against an inline add, a depthwise conv written per channel), `port_dcnv2` (a
deep & cross network: one table at offsets against per-field tables, sparse features first against
dense first, the cross weights one stacked `[3, 22, 22]` parameter against a list of Linears),
`port_s4d` (a diagonal state-space model: complex parameters as `[..., 2]` real pairs against
separate real and imaginary tensors, FFT against a direct convolution), and two training ports,
`port_simclr_train` (SimCLR with Nesterov momentum and BatchNorm in train mode) and
`port_sasrec_train` (SASRec with NAdam).

First contact, with the code of the session's start: **15 of 28** (clean twins 3 of 6): CaiT 0 of
5 (exit 2), ConvMixer 4 of 5, DCN-v2 1 of 5, S4D 2 of 5, SimCLR 4 of 4, SASRec 4 of 4. What failed,
and the general rule each needed:

- **A Linear over a concatenation against a sum of per-part Linears** (set 21's GIN, five cases at
  exit 2): the one bias is the sum of the parts' biases (`_summed.py`): paired as `summed`, written
  into the first partner with zeros into the others (or as the sum into the one), compared as the
  sum; `weightmap.json` marks the entries `"sum": true` and a mapping file reads them back.
- **A fused tensor whose name says its parts** (CaiT, exit 2): the class attention's `kv` finds
  `k` and `v` before an FFN's `fc_in [2d, d]`, whose name says nothing, can take `q` and `k`.
- **Square matrices of a class no table knows** (CaiT's head-mixing `[H, H]` parameters against
  `Linear(H, H)`): they pair as they stand, where they are the only ones or in registration order;
  the values try them transposed where the run diverges there.
- **The same slices along the token axis in another order** (CaiT clean: the class token first
  against last): a known boundary relation (`order_relation`); the norm whose input and output
  are rolled passes where the class attention reading them agrees.
- **Real and imaginary parts in a last axis against two tensors** (S4D): `B [N, S, 2]` against
  `B_real`, `B_imag` (`_newaxis.py`), the parts' names the holder's with a suffix.
- **An input in another representation** (GIN `paddle_scatter_reversed`): an edge list `int64 [2,
  E]` against a dense adjacency `float32 [N, N]` is not compared as numbers, so the layer is named.

Set 23, written after those rules by two more helpers with a brief that names the library truths'
convention for one-sided modules (`tests/HELD-OUT-BRIEF.md`; NOTES-set23-h56, h57): `port_deit`
(class and distillation tokens first against last, one head Linear against two), `port_resmlp`
(affine layers, cross-patch mixing as a Linear over the transposed tensor against a Conv1d over
tokens), `port_graphsage` (one Linear over `[self, neighbours]` against two summed, an edge list
against a row-normalised adjacency), `port_poolformer` (a pooling mixer, GroupNorm(1) against a
hand-written norm over (C, H, W)). First contact, with the session's rules: **10 of 20** (clean
twins 2 of 4): DeiT 1 of 5, ResMLP 4 of 5, GraphSAGE 1 of 5, PoolFormer 4 of 5. One fix followed:
a module whose weights the other side keeps in another module is no *type difference* of an
unrelated call (`module_homes`: GraphSAGE's `neigh_linear`, a part of the other side's `lin`, had
paired with that side's `act`); after it, **11 of 20** (clean twins 3 of 4).

How this session's table was made: the whole corpus ran at commit cd8c548 (683 cases, about 65
minutes wall in two processes): 626 of 683, no case of session 29's corpus worse. Each later
commit's effect was then checked. The weight map of every case, old code against new, differed
for S4D's five only; they ran whole again. Every case was compared again with the final code,
and the cases whose run had kept another pairing ran whole again. Set 23's twenty were run with the
final code. Whole corpus: **640 of 703** (clean twins 158 of 165; design families 137 of 140, held
out 503 of 563); the cases of session 29's corpus, 609 of 655 (604 then: GIN's five).

After: set 22 **20 of 28** (clean twins 5 of 6): CaiT 2 of 5, ConvMixer 4 of 5, DCN-v2 1 of 5,
S4D 5 of 5, SimCLR 4 of 4, SASRec 4 of 4; set 21 20 of 28 (GIN 5 of 5). The misses are under
known failures.

## Joined layers, carried state, values kept in log space, held out (session 31)

Set 24, written by three helpers that never ran the tool (NOTES-set24-h58..h60, brief
`tests/HELD-OUT-BRIEF.md`): `port_levit` (LeViT: an attention bias table indexed by offsets,
Linear+BatchNorm units over tokens, a fused q|k|v laid out head by head with parts of unequal
widths against three projections, a shrinking attention), `port_xcit` (XCiT: cross-covariance
attention with a per-head temperature kept plainly on one side and in log space on the other, a
Fourier positional encoding computed per image on one side and once on the other, local patch
interaction), `port_tft` (a Temporal Fusion Transformer: variable selection, gated residual
networks whose GLU is two Linears on one side and one packed Linear read by `F.glu` on the other,
an LSTM encoder, interpretable attention with per-head queries), `port_ghostnet` (ghost modules,
squeeze-excite with a hard sigmoid as Linears against 1x1 convs), and two training ports,
`port_moco_train` (MoCo v2: a momentum encoder, a queue of negatives and its pointer as buffers)
and `port_barlow_train` (Barlow Twins with AdamW and a cosine schedule).

First contact, with the code of the session's start (f14e28e): **10 of 28** (clean twins 3 of 6):
LeViT 0 of 5 (exit 2), XCiT 0 of 5 (exit 2: the matcher raised on a packed tensor held by the
root), TFT 0 of 5, GhostNet 5 of 5, MoCo 1 of 4, Barlow Twins 4 of 4. What failed, and the
general rule each needed:

- **A crash** (XCiT): the innermost module enclosing a set of modules, one of them the root, had
  none (`_ownpacks._common`); the root it is.
- **State the model carries** (MoCo clean and two of its bugs): a queue `[D, K]` and its pointer
  against `feats [K, D]` and `ptr` under names that say nothing of each other: persistent buffers
  left after every pass pair where each is the other's only candidate (integers with integers,
  any axis order: `pair_last_state`).
- **A value computed once against once per item** (XCiT clean): the positional encoding `[b, c,
  h, w]` fed to a 1x1 conv against `[h * w, c]` fed to a Linear (`computed_once`).
- **A parameter kept as a logarithm** (XCiT): `log_temp` used as its exp against `temperature`:
  copied as its log, compared in log space (`_logspace.py`).
- **One layer over a concatenation against one per part** (set 23's GraphSAGE, two cases): the
  parts' inputs joined and outputs summed, compared as the whole's (`alignment/_joined.py`).
- **Packed halves no name orders** (TFT): a GLU's two Linears `fc_gate`, `fc_value` against one
  `proj [2d]` read value half first: the halves of the weight and the bias swap together, tried
  where the parts' names differ by words (not by a number), after a call-order pairing too.
- **Weights stack weights** (TFT): per-variable `Linear(1, d)` against `weight [n, d]`, `bias [n,
  d]`: the biases no longer take the weight stack.

After: set 24 **17 of 28** (clean twins 4 of 6): LeViT 0 of 5 (exit 2), XCiT 4 of 5, TFT 0 of 5,
GhostNet 5 of 5, MoCo 4 of 4, Barlow Twins 4 of 4; set 23 13 of 20 (GraphSAGE 4 of 5). The misses
are under known failures.

Tried and kept narrower: the first version of the halves rule let every part alternative run
whatever the parts' calls said; it hid a planted bug of the `branches` convention pair (paddle
concatenating its two branches the other way round: under the swapped pairing the two models are
one function) and split GAT's two layers' vectors into separate tries (GAT's clean twin failed).
The tries are now limited to parts whose names say no order, and the halves of one local name
group across blocks again, merged with their layer's other tensors.

How this session's table was made: the whole corpus ran at commit 4bad11f (731 cases, about 80
minutes wall in two processes, a third for the last families, beside the test runs; the two
processes of an earlier start, which a kill missed, ran the same code beside them on the same
directories, so their log lines interleaved: the rows are those of the complete runs' tables, one
garbled case ran again, and no case is worse than in session 30). Three later commits changed the
analyzer: one view class for the computed values (a refactor), the grouping of halves (every case
whose run had tried a part alternative, 25, ran whole again with the final code) and the float64
referee (`--referee` only). Whole corpus: **659 of 731** (clean twins 162 of 171; design families
137 of 140, held out 522 of 591); the cases of session 30's corpus, 642 of 703 (640 then:
GraphSAGE's two), none worse.

## Tables wherever they sit, a dropout left off, held out (session 32)

Set 25, written by three helpers that never ran the tool (NOTES-set25-h61..h63, brief
`tests/HELD-OUT-BRIEF.md`): `port_repvgg` (RepVGG's training-time blocks: 3x3 and 1x1 conv+BN
branches and an identity BatchNorm summed), `port_pvt` (a Pyramid Vision Transformer: overlapping
patch embeddings, spatial-reduction attention written by hand with `q` and a fused `kv` against
`nn.MultiheadAttention`, position tables on the root as tokens against one grid per stage module),
`port_nystromformer` (landmark attention with an iterative pseudo-inverse, a depthwise conv on the
values), `port_hifigan` (HiFi-GAN's generator: paddle's `weight_norm` utility against `g` and `v`
kept by hand, transposed-conv upsampling, multi-receptive-field blocks), and two training ports,
`port_din_train` (a Deep Interest Network: attention over a padded behaviour sequence, PReLU
activations, Adagrad) and `port_mean_teacher_train` (a student and an EMA teacher updated outside
the optimizer, a consistency loss under dropout).

First contact, with the code of the session's start (1f06c8d): **18 of 28** (clean twins 4 of 6):
RepVGG 5 of 5, PVT 0 of 5, Nystromformer 5 of 5, HiFi-GAN 5 of 5, DIN 0 of 4 (exit 2), mean
teacher 3 of 4. What failed, and the general rule each needed:

- **Tables of one role wherever they sit** (PVT, every case): `pos_embed1 [1, 256, 16]` and
  `pos_embed2 [1, 64, 32]` on paddle's root against `stages.{0,1}.pos_embed [1, c, h, w]`. The
  numbers in the names are no block indices, so no pass set them side by side; they were reported
  one-sided on both sides and each run started from other tables. Tensors still left now pair by
  role (the local name without numbers) and size, in the axis order that makes one the other;
  stage one's shape fits two orders (`c = h = w = 16`), and stage two's, which fits one, says
  which (`_roles.py`).
- **paddle's PReLU keeps `_weight`** (DIN, every case, exit 2): a name the tables did not know
  (`LOCAL_ALIASES`); the two PReLUs, the only tensors left, had no place in common either.
- **A dropout off on one side only, in training** (mean teacher `paddle_teacher_eval`): paddle's
  teacher in eval mode passes its pooled features on through its dropout module; the pooling
  module before it was named. The draws say where the sides part: torch's paired call drew, paddle's
  drew nothing, and the dropout module that passed the differing value on is named.
- With a convention pair of the same shape: a table added transposed inside a stage module of one
  side's own, whose counterpart is inline code in the other port's root, is named at the stage (the
  first differing value is the input of a call inside it, and its own inputs agree); the root was
  named before.

After: set 25 **27 of 28** (clean twins 6 of 6). The one miss is `port_pvt paddle_kv_heads_first`:
the tool names torch's `attn.mha` (the `nn.MultiheadAttention` whose own code splits k and v into
heads; its inputs agree, its output differs), the truth names the `attn` module around it. By the
brief's convention (the innermost module whose call receives agreeing inputs and returns a
differing output) the tool's answer looks right to us; the truth is kept as its author wrote it,
and the case counts as a miss.

How this session's table was made: the whole corpus ran at commit f2253b3 (759 cases, about 105
minutes wall in two processes, beside the test runs). One later commit changed the analyzer: a
container that only calls its children (`nn.Sequential`) is never named as the module holding the
first differing value (the first version named STN's paddle `classifier.features` for
`torch_bn_after_pool`, the one case worse than in session 31); STN's five cases, TabTransformer's
five and set 25's twenty-eight ran again with the final code. Whole corpus: **687 of 759** (clean
twins 168 of 177; design families 137 of 140, held out 550 of 619); the cases of session 31's
corpus, 660 of 731 (659 then), none worse. The one that changed, `port_tabtransformer
torch_offset_off_by_one`, is named where its truth says by chance: the family's clean twin still
diverges at the same tables (a known failure below).


## Fields in another order, merged axes, a solver's loop, held out (session 33)

Set 26, written by three helpers that never ran the tool (NOTES-set26-h64..h66, brief
`tests/HELD-OUT-BRIEF.md`): `port_patchtst` (PatchTST: RevIN instance normalisation, each channel
cut into patches by `F.unfold` on one side and a strided view on the other, a channel-independent
encoder, a flatten head), `port_textcnn` (Kim's TextCNN: a Conv2D over static and dynamic
embeddings stacked as channels against a Conv1d over them concatenated, branch modules against a
shared pool module), `port_autoint` (AutoInt: one table with per-field offsets against a table
per field, the fields in another order on each side, bare `W_Query`/`W_Key`/`W_Value`/`W_Res`
matrices against a fused `qkv` Linear), `port_neural_ode` (an RK4 solver calling one dynamics
module twelve times per forward, a module of its own on one side and an inline loop on the other;
time as a concatenated column against an added `t * vector`), and two training ports,
`port_sam_train` (sharpness-aware minimisation: two forward/backward passes per step inside the
optimizer's `step`) and `port_arcface_train` (an additive angular margin loss, AdamW).

First contact, with the code of the session's start (ef6a75d): **11 of 28** (clean twins 2 of 6):
PatchTST 3 of 5, TextCNN 0 of 5 (exit 2), AutoInt 0 of 5 (exit 2), neural ODE 0 of 5 (exit 2),
SAM 4 of 4, ArcFace 4 of 4. What failed, and the general rule each needed:

- **Axes merged in their stored order, units by element count** (TextCNN, exit 2): Conv2D
  `[8, 2, k, 16]` against Conv1d `[8, 32, k]` fits by two reorderings (channels major or minor);
  the one that keeps the merged axes in their stored order is taken. Named apart
  (`branches.0.conv` against `encoder.conv_k2`, no block index in common), the units are classed
  again by element count.
- **Unchecked calls compared across** (TextCNN `torch_pool_avg`, neural ODE
  `paddle_time_column_last`): paddle's branch module (conv, ReLU, max over time) against torch's
  shared pool module called once per branch: nothing compared either; three on each side, one
  output shape, one order, so they are compared in that order and the first that differs is named.
- **Bare q/k/v matrices against a fused projection** (AutoInt, exit 2): `res_proj.weight` is the
  one candidate of four same-shape matrices whose words it shares (`W_Res`); the three left are
  the fused `qkv.weight`'s parts, transposed (stored `[in, out]`); the square ones of later blocks
  are turned as their class's first. The layer is anchored to the block holding both.
- **Fields in another order, carried** (AutoInt clean): every value from the field stack to the
  head holds the same fields rolled by three; the interacting layers receive and return values in
  that order, so it is a layout, said once; the head's input columns are taken in torch's order
  (found by the values). A bug inside the first layer that keeps the order (bf16 attention
  probabilities) is named there.
- **A Linear over `[t, x]`** (neural ODE, exit 2): paddle's `[17, 32]` against torch's
  `fc1.weight [32, 16]` plus `time1 [32]` held by the module around it: the time vector is the
  first input column.
- **A chain of unchecked calls, a solver's time** (neural ODE `paddle_rk4_38_rule`,
  `torch_stage_time_full_step`): inside the one-sided solver twelve unchecked dynamics calls ran
  one after another; the last of them was named, the solver module is. A Python float `t` on one
  side against a 0-d tensor on the other is compared as a number.
- **A small batch's columns** (PatchTST clean): the head's flattened input is `[patch, d]` on one
  side and `[d, patch]` on the other; six rows per column now suffice to find each column once.

After: set 26 **23 of 28** (clean twins 6 of 6). The misses: AutoInt
`torch_relu_before_residual` (a large bug in the first layer after the field order: no call kept the
order before it, so the order is not passed and the embedder, where it began, is named) and
`torch_dense_cols_swapped` (paddle's two embedding modules are one-sided; the later one is named,
the truth names the one whose slices differ); TextCNN `paddle_padding_idx` (the two same-shape
embedding tables pair by name, `static_embedding` ~ `static_embed`; the call-order retry pairs
them the other way and diverges at the same record, so it is kept, and torch's static table is
named: a rule that let the names win such a tie broke LLaMA's clean twin, whose norms the names
pair wrongly, and was taken back); neural ODE `torch_dynamics_output_tanh` (the
dynamics' own activation is named, the truth names the function module); PatchTST
`paddle_patch_pad_constant` (torch's padding module only moves data, so it is not named; the
backbone around it is).

How this session's table was made: the whole corpus ran at commit 440ff5f (787 cases, two
processes, about 70 minutes wall beside the test runs). The disk filled near its end (old clones
and their traces of earlier sessions): 36 cases of 9 families recorded nothing (exit 2) and ran
again. Later commits changed the analyzer (unchecked calls compared across, a Python float
against a one-element tensor compared, the names-over-call-order tie rule taken back, a chain of
one module's calls kept as one suspect): every case whose run retried the call order (22), whose
report named unsure calls on both sides or set a Python float against another value (17), set
26 and the families of the disk's victims ran again at ae7a60f (35 families, 158 cases;
RoFormer, the neural ODE and MLP-Mixer once more at d62ee72, the last code commit); the table
holds those rows. Whole corpus: **709 of 787** (clean twins 174 of 183; design families 137 of
140, held out 572 of 647); the cases of session 32's corpus, 686 of 759 (687 then). Better:
`port_cait torch_ca_scale_dim`. Worse: `port_deit torch_pos_cls_first` (exit 0 now, see known
failures) and `port_mixer paddle_norm_reuse` (torch's `layers.1.token_norm` is named where the
truth names `layers.1`: paddle calls `norm1` twice and `norm2` never, the call order pairs the
norms, and torch's token norm, whose weights are paddle's never-called `norm2`, is named as a
module of its own; not investigated further this session).

## Two quantities in one slot, blame by share, gates in another order, held out (session 34)

Set 27, written by three helpers that never ran the tool (NOTES-set27-h67..h69, brief
`tests/HELD-OUT-BRIEF.md`): `port_tabnet` (TabNet: GLU units shared across decision steps against
pytorch-tabnet's shared Linears with per-step BatchNorm copies, value|gate halves in two layers
against one, sparsemax written twice), `port_schnet` (SchNet: Gaussian RBF centres as a buffer
against `linspace` inline, a cosine-cutoff module called once against the cutoff inside every
convolution, shifted softplus as a module against inline), `port_crossvit` (CrossViT: two branches
of different patch sizes, CLS tokens cross-attending the other branch), `port_convlstm` (two
stacked ConvLSTM cells: one convolution over `[x, h]` with gates i, f, o, g against two
convolutions with gates i, f, g, o, a packed peephole), and two training ports, `port_dpo_train`
(Direct Preference Optimization with a frozen reference model) and `port_uncertainty_mtl_train`
(two tasks weighted by learned log-variances, SGD with Nesterov momentum and clipping).

First contact, with the code of the session's start (ee6d2c9): **12 of 28** (clean twins 3 of 6):
TabNet 0 of 5 and CrossViT 0 of 5 (exit 2: the transfer refused), SchNet 2 of 5, ConvLSTM 2 of 5
(its clean twin diverges at the first cell), DPO 4 of 4, multi-task 4 of 4. The general rules
they led to (docs/analyzer.md, session 34):

- **Two quantities in one argument slot** (SchNet): paddle hands each interaction block the
  cutoff weights its cutoff module computed, torch the distances (its blocks compute the cutoff
  inside). Paired by position, the two arguments differed and a bug inside a block was blamed on
  the cutoff module; they pass as *another quantity* when one side's module of its own turned the
  other side's value into its own and the other side hands its value on inside the call.
- **Gates stacked in another order** (ConvLSTM): where a recurrent cell's call is named and a
  weight in it holds 2, 3 or 4 times the cell's width in rows no matrix reads, `run` records B
  again with the rows as gates in other orders (mapping key `*_blocks`) and keeps the one whose
  calls agree; the convolutions' outputs are then read in the other side's order.
- **Blame by share** (AutoInt `torch_dense_cols_swapped`, set 26): the first differing value put
  together from two one-sided embedding modules' fields names the module whose fields the other
  side's value does not hold.
- **Parts stay in their block's partner** (CrossViT, not enough for it): a packed tensor's parts
  are looked for inside the partner of its block where one is known.
- **fp32 runs agreeing where the float64 runs part** (DPO under `--referee`): rounding.
- Taken back: grouping shapes without axes of size one in the shape-and-order pass (it fixed
  TabTransformer's numeric tokenizer but paired StyleGAN's styled units otherwise).

After: set 27 **17 of 28** (clean twins 4 of 6): SchNet 4 of 5, ConvLSTM 5 of 5, DPO 4 of 4,
multi-task 4 of 4; TabNet and CrossViT still refuse the transfer. The misses are listed under
known failures.

How this session's table was made: the corpus ran at commit 658efd1 in two processes, beside the
test runs, until its first 508 cases (494 of session 33's corpus and 14 of set 27) were done:
448 of those 494 right, one better than in session 33 (`port_mixer paddle_norm_reuse`: a pairing
in call order is kept on a tie only where the moved weights act before the divergence), none worse.
It was stopped there for the first clean-clone test run, and 250 more cases (59 families, among them set
27's ConvLSTM, DPO and SchNet again) ran at e0b7919, the last code commit, beside the second. The
16 families it did not reach before the test run needed the machine keep session 33's rows (70
cases: `port_yolo`, qwen, rembert, `resnet18_train`, `resnext50_32x4d`, `roberta_train`,
`shufflenet_v2_x0_5`, speecht5, squeezebert, t5, `t5_train`, `vgg11_bn`, `vgg11_bn_train`,
`wide_resnet50_2`, xlm, xlnet). Whole corpus: **727 of 815** (clean twins 178 of 189; design
families 137 of 140, held out 590 of 675); the cases of session 33's corpus, 710 of 787 (709
then), none worse.

## A key/value cache, masks of either polarity, stacks of buffers, held out (session 35)

Set 28, written by three helpers that never ran the tool (NOTES-set28-h70..h72, brief
`tests/HELD-OUT-BRIEF.md`): `port_performer` (FAVOR+ attention: the layers' random feature
matrices one buffer `[L, d, m]` at the root against one `[m, d]` per layer, the positive feature
map a module against inline), `port_glow` (a Glow flow: ActNorm in log-scale against scale, an
invertible 1x1 convolution as a plain matrix against its LU factors), `port_informer`
(ProbSparse attention, distilling convolutions, circular token padding inside the convolution
against before it, q|k|v fused against three projections feeding an attention kernel of its own),
`port_kvdecode` (greedy decoding of four tokens, paddle with a key/value cache, torch recomputing
the prefix at every step), and two training ports, `port_paramgroups_train` (AdamW with parameter
groups, warm-up then decay, label smoothing by hand against built in) and `port_triplet_train`
(batch-hard triplet loss, SGD with momentum and weight decay).

First contact, with the code of the session's start (da8ac12): **13 of 28** (clean twins 3 of 6):
Performer 2 of 5 (the clean twin diverges: the random feature buffers were not transferred), Glow
0 of 5 (exit 2: the transfer refused), Informer 2 of 5, kv-cache decoding 2 of 5 (the clean twin
diverges at the embedding of the second token), parameter groups 3 of 4, triplet loss 4 of 4. The
general rules they led to (docs/analyzer.md, session 35):

- **The newest position against all of them** (kv-cache decoding): a call that sees the newest
  token only (`[b, 1, d]`) pairs with the other side's call on the whole prefix (`[b, s, d]`), and
  is compared with its last position; the cache arguments and outputs pair with nothing.
- **A boolean mask against the additive mask made of it, either polarity** (parameter groups):
  torch's `key_padding_mask` (True = masked out, `[b, s]`) against paddle's additive mask
  (`[b, 1, 1, s]`) is a boundary difference; before, once the attention dropout of the wrong rate
  made the layer differ, the mask was named at the root.
- **Stacks across any index, stacks of buffers** (Performer): a stacked tensor pairs with a group
  whose paths differ in one index anywhere, buffers with buffers.
- **Shares of a fused projection** (Informer): an input of a one-sided call is right when the
  other trace holds it as a block of a larger value (q of a fused q|k|v projection), so torch's
  attention kernel of its own is named.

After: set 28 **21 of 28** (clean twins 5 of 6): Performer 4 of 5, Informer 4 of 5, kv-cache
decoding 5 of 5, parameter groups 4 of 4, triplet loss 4 of 4; Glow still refuses the transfer.
The misses are listed under known failures.

How this session's table was made: the whole corpus (843 cases, 195 families) ran at c6a7bb9 in two
processes, most of it beside a clean-clone test run. Two code commits followed: the newest-position
rule no longer takes a batch axis (a value computed once, `[1, s]`, against one per item is
compared item by item again), and a 0/1 mask is reshaped onto an additive one only where it keeps
fewer axes (the corpus had caught ELECTRA `paddle_mask_axis`, a mask over the queries, passing as
the keys' mask). The 104 cases whose reports showed either rule at work (24 families) ran again at
c16dc79, the last code commit, and their rows are those: 103 right, ELECTRA's mask named again.
Whole corpus: **749 of 843** (clean twins 183 of 195; design families 137 of 140, held out 612 of
703). Session 34's 815 cases: 728 right (727 in its table), none worse; better:
`port_autoint torch_dense_cols_swapped` (fixed in session 34 after its row ran).

## Blocks counted at other depths, norms of a port's own, representations not shared, held out (session 36)

Set 29, written by three helpers that never ran the tool (NOTES-set29-h73..h75, brief
`tests/HELD-OUT-BRIEF.md`): `port_convtasnet` (a Conv-TasNet separator: a hand-written global
layer norm with `gamma`/`beta` `[1, C, 1]` against `GroupNorm(1, C)`, residual and skip 1x1
convs against one fused `res_skip_conv`, four flat blocks against two repeats of two, a
transposed-conv decoder against a Linear basis and `F.fold`), `port_nfnet` (scaled weight
standardisation, skip-init gains 0-d against `[1]`, blocks flat against stages), `port_swinv2`
(cosine attention with a clamped logit scale, a continuous position-bias MLP run on every pair of
tokens against one run on a table of offsets, q|k|v packed with no k bias), `port_softcap_lm` (a
Gemma-2 style LM: RMSNorm scaling by `1 + w` against `w`, soft-capped logits, sliding windows,
grouped-query attention, rotary pairs in another layout), and two training ports,
`port_focal_lamb_train` (focal loss, LAMB by hand against paddle's) and `port_bce_adagrad_train`
(an `EmbeddingBag` against an `Embedding` pooled by the caller, BCE with `pos_weight`, Adagrad).

First contact, with the code of the session's start (627428d): **9 of 28** (clean twins 2 of 6):
Conv-TasNet 0 of 5 (exit 2: the transfer refused), NFNet 3 of 5, Swin-V2 3 of 5, the Gemma-2 style
LM 0 of 5, focal loss with LAMB 3 of 4, BCE with Adagrad 0 of 4 (the clean twin diverges at the
embedding). The general rules they led to (docs/analyzer.md, session 36):

- **Copies of a repeated module counted at other depths** (Conv-TasNet, NFNet): the i-th block
  of a flat list is the i-th of two repeats of two, when both repeat as often; the fused conv's
  parts may sit beside a `Sequential` that is partnered with the other port's block.
- **A hand-written norm's `gamma` and `beta`** are a known norm's `weight` and `bias`, across
  classes only; **0-d scalars** pair as the last trainable tensor standing in their place.
- **A packed layer's name fixes its parts' order** (`res_skip_conv`): a porter's swapped reading
  is not taken for another packing.
- **Outputs of another shape** (BCE with Adagrad): an `EmbeddingBag`'s pooled rows against an
  `Embedding`'s tokens pass as a boundary difference when everything compared after them agrees.
- **Representations the sides do not share** (Swin-V2): a call compared by no number, in and out,
  is passed over where a later pair differs in its numbers.
- **One-sided modules fed numbers nothing checked are not named** (Swin-V2's softmax module fed
  logits plus a bias made inline); ids and positions do not count as unchecked, nor is a dropout
  held back.
- Found on the way, not from set 29: BatchNorms side by side pack into one (TabNet's GLU units
  now transfer, though the family still diverges), and a patch layout is confirmed by the
  projection's own call (DeiT now says its patches are flattened channels last).

After: set 29 **20 of 28** (clean twins 5 of 6): Conv-TasNet 4 of 5, NFNet 4 of 5, Swin-V2 5 of 5, BCE with
Adagrad 4 of 4, focal loss with LAMB 3 of 4; the Gemma-2 style LM 0 of 5. The misses are listed
under known failures.

How this session's table was made: the whole corpus (871 cases, 201 families) ran at 1b837c0 in two
processes, the first 50 minutes beside a clean-clone test run. That run failed one test: a
module of its own fed integer relative positions was no longer named (the one-sided rule had
begun to refuse modules fed values nothing checked, ids included). The fix (dc72378: ids and
positions counted from shapes do not count as unchecked) is the last code commit; the 45 cases
whose rows differ from session 35's table ran again at dc72378, and their rows are those (CTRL's
and NeZha's position modules are named again). Whole corpus: **768 of 871** (clean twins 188 of
201; design families 137 of 140, held out 631 of 731). Against session 35's 843 cases: better
`falcon qkv_layout` (the rotary module fed q and k made inline is no longer named),
`port_mixer token_gelu_tanh`, `port_swin paddle_rel_index_transposed` (a softmax module fed
logits plus a bias made inline); worse `port_hyena torch_decay_sign`, `port_patchtst
torch_attn_scale_d_model` (a kernel module of its own fed values made inline, where the bug is
that module's: the trade of the one-sided rule), and `port_moe paddle_topk_no_renorm` /
`router_softmax_fp16` (torch's stacked-experts module, handed routing weights made inline, is
named instead of its feed-forward). TabNet now transfers its weights (BatchNorms packed) and
diverges at its first GLU block instead of refusing.

## A norm kept as w against 1 + w, rotary rows inside a fused q|k|v, pipelines, each port fusing the other attention (session 37)

Set 30, written by three helpers that never ran the tool (NOTES-set30-h76..h78, brief
`tests/HELD-OUT-BRIEF.md`): `port_convnextv2` (GRN, a channels-first LayerNorm against
channels-last, 1x1 convs against Linears), `port_dgcnn` (k-nearest-neighbour edge convolutions,
BatchNorms in Sequentials against named ones), `port_xdeepfm` (a compressed interaction network
as a Conv1D against an einsum, per-field tables against one table at offsets), and
`port_longformer_local` (a band mask against unfolded windows, global tokens: each port fusing
the other attention's q|k|v), and two training ports, `port_labelsmooth_adamw_train` (label
smoothing by hand against the built-in, AdamW with no decay on biases and norms, warm-up) and
`port_center_loss_train` (softmax with a center loss, Nesterov SGD).

First contact, with the code of the session's start (93accea): **17 of 28** (clean twins 3 of 6):
ConvNeXt-V2 4 of 5, DGCNN 3 of 5, xDeepFM 0 of 5, the Longformer-style encoder 2 of 5, both
training ports 4 of 4. The general rules this session added (docs/analyzer.md, session 37), from
set 29's Gemma-2 style LM and set 30:

- **A norm's scale kept one unit apart** (Gemma's `1 + w` against a framework norm's `w`): the
  model receiving the weights keeps its own in its own convention; where its norm's trainable
  scale is centred one unit from the trace's it receives the trace's ±1, compared and reported
  as a convention. Batch norms and running statistics are left out (the corpus caught MobileNet's
  running variance shifted at first).
- **Rotary pairs inside a fused q|k|v**: the whole projection's rows reordered head by head into
  its share of the fused one, confirmed by the values.
- **A layer's place in a pipeline is no block index** (`classifier.1`, `conv5.1`), and **a word
  that only names a module's type** (`bn`, `ln`, `conv` in its own name) tells no member of a
  group apart (DGCNN's BatchNorms).
- **Each port fusing the other attention** (Longformer-style local and global attention): the
  fused and separate projections crossed, kept when a call of the block agrees or everything
  does; calls of modules whose weights both pair elsewhere are never partners.

After: set 30 **20 of 28** (clean twins 5 of 6): DGCNN 5 of 5, ConvNeXt-V2 4 of 5, the
Longformer-style encoder 3 of 5, training 8 of 8, xDeepFM 0 of 5. Set 29's Gemma-2 style LM: 4 of 5
(0 of 5 before). The misses are listed under known failures.

How this session's table was made: the whole corpus (899 cases, 207 families) ran first at
8b2dc07 (the norm offset and the rotary rows): 650 cases, the first 55 minutes beside a test
suite. That run caught two slips of the new rules, fixed before the rest ran: the offset had
shifted MobileNet's running variance (a buffer) and, through BatchNorm scales, put EfficientNet,
DCGAN, DCNv2, DIN and the Informer's clean twins off; and a type word left out of a parent's name
had paired Conformer's pointwise conv with its final FFN (found by comparing the weight maps of
the recorded traces under both matchers, not by a row). The other 249 cases, and the ten
families those slips or the later matcher rules touched (the eight with an offset in their
weight maps, HRNet and DGCNN, whose maps changed), ran at b259bb1, the last code commit; set 30's
four families the first run had covered ran at 1edc17b, behaviour the same. The clean twins of the 77
families the first run had covered by then were compared again with the code of 1edc17b (the
recorded traces, `compare` only: the alignment rule that keeps calls apart): none changed. Whole corpus: **792 of 899** (clean twins 194 of 207;
design families 137 of 140, held out 655 of 759). Session 36's 871 cases: 772 right (768 in its
table), none worse; better: the Gemma-2 style LM's clean twin, `paddle_norm_no_plus_one`,
`torch_mask_before_softcap`, `torch_post_norm_after_residual`. Rows of the first run whose
family tried a pairing by the values were not run again: the alternatives added after it (the
crossed attentions, a run that agrees everywhere) could change them.

## Values batched on one side, a value handed on, partitions, skips on either side, rotary tables handed over (session 38)

Set 31, written by three helpers that never ran the tool (NOTES-set31-h79..h81, brief
`tests/HELD-OUT-BRIEF.md`): `port_deeplab_aspp` (DeepLabV3's ASPP: dilated branches, image
pooling, resizes inline against an `nn.Upsample` module, BatchNorm and ReLU fused or not),
`port_mmoe` (a multi-gate mixture of experts: experts stacked in `[E, in, out]` weights against
a list of expert modules, one gate Linear per task against one for both with a softmax module),
`port_maxvit` (MBConv, block and grid attention: partitions inline against partition modules,
relative position tables laid out otherwise) and `port_egnn` (an E(n)-equivariant graph network:
edge lists with gather and scatter against dense pairwise tensors), and two training ports,
`port_bpr_radam_train` (BPR with RAdam, decay set on the parameters themselves against a
parameter group) and `port_asl_nesterov_train` (the asymmetric loss, Nesterov SGD with warm-up).

First contact, with the code of the session's start (eadc719): **17 of 28** (clean twins 6 of 6):
DeepLab 3 of 5, MMoE 2 of 5, MaxViT 4 of 5, EGNN 1 of 5, BPR 3 of 4, ASL 4 of 4. The general
rules this session added (docs/analyzer.md, session 38):

- **Values batched on one side**, one call per item on the other (stacked experts, fused gates),
  are cut into blocks and looked for block by block among the values of the modules holding
  their weights' partners; a value only the batching side hands on is right when every block is
  found.
- **A value handed on in another shape**: a call that returns its agreeing last child's value
  in another shape than its partner's made no difference; the one-sided call after it that
  received it (an upsampling module) is named.
- **A partition that arranges its input otherwise** is named where identity cannot tell its
  input from its output: the order of the records decides.
- **A skip added inside the module or by its caller** is a convention passed whatever follows,
  unless the next record compared differs by it too (a residual one port adds and the other
  never does is a bug, as before).
- **A rotary table handed to the attention** (a complex `freqs_cis`, or cosines) gives the head
  size where no module holds a rotary buffer; **a mapping file pairing one tensor whole with
  several** is a tie; **decay carried by the parameters** (Paddle's `ParamAttr` regularizers) is
  recorded as the parameter groups it makes.

After: set 31 **21 of 28** (clean twins 6 of 6): MaxViT 5 of 5, MMoE 4 of 5, DeepLab 4 of 5, ASL
4 of 4, BPR 3 of 4, EGNN 1 of 5. The misses are listed under known failures. The GQA decoder of
set 27 (held out), whose clean twin had failed since session 27, now aligns (its torch side
hands a complex `freqs_cis` to each attention).

How this session's table was made: the hand ports (all 132 port families, set 31 among them),
the first twenty library families and four training twins of library families were recorded
again, in a second clone, with the code of the session's later commits (669 cases), and every recorded case
was compared again (`compare` only, the traces kept) with the session's last analyzer code
(1022d4b): the rules first written for batched values had named a share of a fused projection
(the ALiBi LM's gate), an embedding handed ids without their offsets (AutoInt), CaiT's kv
projection, ConvLSTM's convolution and a mixer's uncalled norm; each was narrowed before this
table (a share says nothing by itself, a framework's own layer and a value a call inside returns
too are never marked, inputs only for calls batching several modules), and those rows are the
narrowed rules' (compared again). The other library, vision and training families keep session
37's rows (no rule of this session acts on them without a divergence the first run showed).
Whole corpus: **816 of 927** (clean twins 201 of 213; design families 137 of 140, held out 679 of
787). Session 37's 899 cases: 795 right (792 in its table), none worse; better: the GQA decoder's
clean twin, Conv-TasNet `torch_mask_softmax` (torch's mask softmax module), PatchTST
`torch_attn_scale_d_model`.

## A step one side leaves out, dropout rates, stages returning other structures, a backward that cannot run (session 39)

Set 32, written by three helpers that never ran the tool (NOTES-set32-h82..h84, brief
`tests/HELD-OUT-BRIEF.md`): `port_film_vqa` (FiLM: a GRU question encoder, one fused generator
Linear laid out as all gammas then all betas against one Linear per block, gamma used as is
against `1 + delta`), `port_set_transformer` (induced set attention and pooling by learned seeds:
bare parameters `[8, 32]` against `[1, 8, 32]`, fused k|v), `port_cvt` (CvT: convolutional token
embeddings, depthwise-conv projections with BatchNorm, a stage returning tokens against one
returning `(map, class token)`, torch's `nn.MultiheadAttention` against attention inline) and
`port_tsmixer` (RevIN as a module against inline functions, time and feature mixing, BatchNorm over
time x feature flattened in the other order), and two training ports, `port_sgns_adamax_train`
(word2vec with negative sampling and Adamax) and `port_ranknet_adadelta_train` (RankNet with
Adadelta and weight decay).

First contact, with the code of the session's start (7421247): **14 of 28** (clean twins 3 of 6):
FiLM 0 of 5 (every recording failed: paddle's GRU has no backward in eval mode), Set Transformer
4 of 5, CvT 3 of 5, TSMixer 0 of 5, word2vec 3 of 4, RankNet 4 of 4. The general rules this
session added (docs/analyzer.md, session 39):

- **A backward the framework cannot run** no longer ends the recording of a model that is not
  trained: the forward values are kept, the trace's summary and the report say the backward
  failed, and gradients are compared where both traces hold them.
- **Zeroing in place is computing**: a ReLU module is no data mover, so a ReLU of one side's own
  is named where the values part there; what a data mover hands on to a value that agrees
  checks the call before it.
- **A step one side leaves out**: where one side names its activation module and the other its
  pair's code, and the other side's first differing value still holds just the values the step
  received, the call that handed that value on unchanged is named (a conv-BN-activation block
  built without its activation).
- **One expert of a list against a batch**: an expert whose output is no block of the batch's
  output, where that output has blocks of its shape and does not hold its elements elsewhere,
  differs.
- **A stage whose output is in another structure** (tokens against `(map, class token)`) holding
  the first differing record is named, not the call around it.
- **Dropout rates are recorded** with each dropout call (a call at rate 0 too) and set side by
  side inside the named pair: a rate set wrong is named at the dropout on each side, with both
  rates, where replayed masks cannot show it.
- **The last tensors standing in modules of one class** of the user's own pair (pooling seeds at
  the root against seeds inside a `Sequential`).
- **A crash of the float64 referee** on a pair compared split and permuted (CvT's tokens against
  a map) is gone: such a pair is not measured against float64.

After: set 32 **19 of 28** (clean twins 4 of 6): Set Transformer 5 of 5, CvT 4 of 5, word2vec 4
of 4, RankNet 4 of 4, FiLM 2 of 5 (its recordings now run; the clean twin needs a weight transform
with an offset), TSMixer 0 of 5 (norm vectors flattened in another order). Set 31's DeepLab
`paddle_pool_no_relu`, MMoE `paddle_expert_no_out_relu` and BPR `paddle_keep_prob`, and focal
loss's `torch_head_drop_default` (session 36), now pass.

How this session's table was made: the six new families, every training port and 17 forward ports
(65 families) were recorded again with this session's recorder (dropout rates recorded), in a
second clone; every other family keeps its traces (the other hand ports from session 38, the
library and vision pairs from session 37). Every case was then compared again (`compare` only,
the traces kept) with the session's last analyzer code (5fae57a). Whole corpus: **838 of 955**
(clean twins 205 of 219; design families 137 of 140, held out 701 of 815). Session 38's 927 cases:
819 right (816 in its table); better: DeepLab `paddle_pool_no_relu`, MMoE
`paddle_expert_no_out_relu`, BPR `paddle_keep_prob`, focal loss `torch_head_drop_default`; worse:
`port_mean_teacher_train paddle_teacher_eval` (recorded again, every value bit for bit the same:
see the known failures). Modes on clean twins (the eight sample families below and set 32's four
recordable clean twins): `--ops` 12 of 12, `--single-step` 12 of 12, `--referee` 11 of 12 at first
(CvT crashed the referee), 12 of 12 after the fix.

## Norms beside their layer, the last tensor standing, a lookup fed other ids (session 40)

Set 33, written by three helpers that never ran the tool (NOTES-set33-h85..h87, brief
`tests/HELD-OUT-BRIEF.md`): `port_relbias_encoder` (a T5-style encoder: one bucketed relative
bias table `[heads, buckets]` on paddle's root against `[buckets, heads]` in torch's first
attention, the buckets computed by a module on one side and inline on the other, fused q|k|v and
gated GELU halves), `port_dpn` (a Dual Path Network: pre-activation units registered in another
order, a shortcut of two convolutions against one unit with one convolution holding both parts),
`port_sknet` (Selective Kernel units: per-branch selection Linears against one fused 1x1
convolution, blocks numbered `blocks.0` against `layer1`), `port_fastspeech_fft` (FFT blocks
with conv1d feed-forwards, a variance predictor and a length regulator), and two training ports,
`port_vicreg_sgdm_train` (VICReg with momentum SGD and BatchNorm in train mode) and
`port_ohem_multitask_adam_train` (online hard example mining with top-k, a fused two-task head,
Adam with global-norm clipping).

First contact, with the code of the session's start (4f6a209): **14 of 28** (clean twins 3 of 6):
relative-bias encoder 1 of 5, DPN 1 of 5, SKNet 0 of 5 (exit 2), FastSpeech 5 of 5, VICReg 4 of
4, OHEM 3 of 4. The general rules this session added (docs/analyzer.md, session 40):

- **One value's identity within a trace** takes the extremes exactly and the sums to 9
  significant digits: the writer sums a tensor alone or in a batch of small ones, and one tensor
  recorded twice could be two values by its last bits. This was the string-table mystery of
  session 39 (`port_mean_teacher_train paddle_teacher_eval`): the re-recorded traces summed the
  model input on the other path; the row passes again.
- **A norm pairs with the norm beside the same layer**, where names and registration order say
  nothing (the one norm of its block beside those layers, on both sides).
- **The one trainable tensor left on each side** pairs wherever the models keep it, when one
  order of its axes fits.
- **A lookup fed other ids**: an embedding that returned its table's rows at the ids it was
  handed is not named; the call that made the ids is (the attention computing relative buckets
  inline).
- **A unit of one side's own whose output the other trace holds as values of its own**, set side
  by side (a shortcut unit with one convolution for both parts), is checked, not named.

After: set 33 **21 of 28** (clean twins 5 of 6): relative-bias encoder 5 of 5, DPN 4 of 5,
FastSpeech 5 of 5, VICReg 4 of 4, OHEM 3 of 4, SKNet 0 of 5 (see the known failures).
Modes on the five recordable clean twins of set 33: `--ops` 5 of 5, `--single-step` 5 of 5,
`--referee` 5 of 5.

How this session's table was made: set 33 and the four families whose transfer refused (CrossViT,
Glow, LeViT, RealNVP) were recorded with the session's last code; every other case was compared
again (`compare` only, the traces kept) with it (69c5dc4), on session 39's, 38's and 37's traces.
The weight matcher's two new rules change no pairing of any kept family: the weight maps of all
219 families' clean traces, computed with the session-start and the final matcher, are the same
(`analyzer.weight_map`, the pairing a run starts from). Whole corpus: **860 of 983** (clean twins 210 of 225; design
families 137 of 140, held out 723 of 843). Session 39's 955 cases: 839 right (838 in its table), none worse;
better: `port_mean_teacher_train paddle_teacher_eval` (the sums' last bits, above). A pass with the
lookup rule before it was narrowed named ERNIE's `paddle_pad_idx` at the embeddings module (the
ids there agree where a pair compares them); the rule now needs ids nothing showed to agree.

## A pointwise convolution as Linears, branches at other depths, activations fused on one side, orders a layer mixes (session 41)

Set 34, written by three helpers that never ran the tool (NOTES-set34-h88..h90; h88's brief was
cut off and it took the rules from earlier helpers' notes): `port_inception` (GoogLeNet blocks:
PaddleClas-style `nn.BatchNorm(act="relu")` units against torchvision-style Conv/BN/ReLU
Sequentials, torch fusing the three 1x1 convolutions that read the block's input and
registering its branches in another order), `port_gru_nmt` (an attention GRU translator: a GRU
cell written by hand with its gates in another order, two one-direction encoders against one
bidirectional), `port_coatnet` (MBConv with squeeze-excitation as convolutions or Linears, then
attention with a 2-D relative bias table, its index a buffer on one side and computed on the
other), `port_nbeats` (generic, trend and seasonality blocks; theta packed on one side, bases as
buffers or inline), and two training ports, `port_mlm_nadam_train` (a masked LM with a decoder
tied to the embedding, NAdam) and `port_ewc_rprop_train` (elastic weight consolidation against
anchors and a Fisher diagonal, Rprop).

First contact, with the code of the session's start (ba9440e): **17 of 28** (clean twins 4 of
6): CoAtNet 5 of 5, N-BEATS 4 of 5, Inception 1 of 5, GRU translator 0 of 5 (exit 2), masked LM
3 of 4, EWC 4 of 4. The general rules this session added (docs/analyzer.md, session 41):

- **A pointwise convolution holds several Linears' rows**: the packed pass compares a 1x1
  convolution as the Linear it is (set 33's SKNet: 0 of 5 before, 4 of 5 after).
- **A block's partner across depths, for fused branches**: where its partnered children's
  partners sit at other depths (a branch wrapped in a Sequential of its own), a block pairs with
  their nearest common ancestor for the units pass; the fused 1x1 reduction of an Inception block
  then takes its three units' rows.
- **An activation fused on one side, called next on the other**: a BatchNorm with a fused ReLU
  against BatchNorm then a ReLU module passes where the ReLU module, called on that very value,
  returns what the fused side returned, whatever an independent error makes differ later.
- **A unit's output held as values of other sizes**: one side's fused convolution whose output is
  the other side's values concatenated at sizes of their own (8 + 8 + 4 channels) is checked.
- **An order a layer mixes is no layout**: slices in another order handed to a convolution (its
  channels) or a Linear (its last axis) whose output differs are a divergence where the order
  was made (the concatenating block); tokens in another order read by an attention stay a layout.
- **BatchNorm's running variance under training drift**: the Bessel convention's prediction is
  checked to the rounding of the BatchNorm's inputs once training has moved them apart
  (`mobilenet_v2_train`'s clean twin failed on this session's machine at step 2 with the old
  check; it passes).

After: set 34 **20 of 28** (clean twins 5 of 6): CoAtNet 5 of 5, N-BEATS 4 of 5, Inception 4 of 5,
GRU translator 0 of 5 (exit 2), masked LM 3 of 4, EWC 4 of 4 (see the known failures).
Modes on the five recordable clean twins of set 34: `--ops` 5 of 5, `--single-step` 5 of 5,
`--referee` 4 of 5 (N-BEATS's paddle side builds its Fourier basis with `paddle.arange(..., dtype="float32")`:
the float64 recording stops there with exit 2 and its one line, naming the file and line).

How this session's table was made: the traces of earlier sessions did not survive the move to a
new machine, so the corpus was recorded again: 150 families (584 cases, set 34 among them) with
this session's code, two cases at a time (`table.py --jobs 2`, new this session), then compared
again with the final code (510ec37; `compare` only, every verdict as at 6321cba); the other 422
cases are session 40's rows.
Of the 556 cases run again that session 40's table holds, 552 are as they were and 4 are better
(SKNet's clean twin and three bugs); none is worse. The weight maps of the 150 families' clean
traces are the same under the session-start and the final matcher except Inception's (the
fused reduction). Whole corpus: **884 of 1011** (clean twins 216 of 231; design families 137
of 140, held out 747 of 871).

## A loop drawn at another level, a port's own cell against a whole-sequence RNN, grouped layers read either way (session 42)

Set 35, written by three helpers that never ran the tool, each given the whole brief
(NOTES-set35-h91..h93). `port_resnest`: split attention whose attention MLP is a block-diagonal
Linear of paddle's own (`GroupLinear`, `[groups, in, out]`) against torch's grouped 1x1
convolutions, with an `rSoftMax` module against inline code. `port_lstmp_asr`: a speech encoder
whose paddle LSTM is a cell written by hand, gates in TensorFlow's order, with a projection,
against `nn.LSTM(proj_size=...)`; the two front ends flatten in another order.
`port_involution`: kernels generated per pixel, `unfold` against shifted slices; torch registers
the shortcut first. `port_lambda_net`: content and position lambdas, a relative-position table
`[15, 15, k, u]` against `[k, u, 15, 15]`. Two training ports: `port_dice_poly_train` (Dice + CE,
AdamW with parameter groups, a polynomial schedule) and `port_huber_rmsprop_train` (smooth L1
against Huber, centered RMSprop with its epsilon inside or outside the root; the helper found
paddle's ASGD and torch's are different algorithms, and used RMSprop).

First contact, at the session-start commit (a2b9267): set 35 **18 of 28** (clean twins 2 of 6).
ResNeSt 0 of 5: its grouped layers were one-sided and never transferred. LSTMP 2 of 5, involution 4
of 5, LambdaNetwork 4 of 5. Each of the last three fails its clean twin. Both training ports are 4 of 4.
(The session's first corpus pass, with partly changed code, also recorded set 35 before this
number was taken; no rule was designed on what it showed.)

Rules added (general, each with a test of our own; see docs/analyzer.md, Session 42):

- **A one-direction RNN named backward** holds the `_reverse` tensors of the other side's
  bidirectional layer (set 34's GRU translator: its backward encoder paired with the decoder's
  GRU before).
- **A loop drawn at another level**: a module called once around a loop is no pair of its
  partner's first per-step call, and a part's layer is not compared with the whole layer where
  the parts' calls do not line up (a key projection computed once before the loop).
- **Outputs across axes of size one**: a one-step GRU's `[1, b, h]` output pairs with a cell's
  `[b, h]`.
- **A residual block's projection**: `downsample`, `shortcut`, `short` name one role, wherever in
  the path (involution's clean twin: torch registers `downsample` first).
- **The last tensors standing keep equal axes in order** (the LambdaNetwork's position table).
- **A reshape's other axis orders**, tried by `run` and kept when a call confirms it
  (ResNeSt's square groups).
- **A port's own cell against a whole-sequence LSTM or GRU**: the cell's rows tried as the layer's
  gates in every other order. Such an order is kept only where the whole run then agrees, and
  pairings are settled in up to three rounds (LSTMP: the front end's column order, then the gates).

After: set 35 **25 of 28** (clean twins 6 of 6): ResNeSt 4 of 5, LSTMP 3 of 5, involution 5 of 5,
LambdaNetwork 5 of 5, Dice 4 of 4, Huber 4 of 4. Set 34's GRU translator went from 0 of 5 (exit 2)
to 4 of 5. Modes on the six clean twins of set 35: `--ops` 6 of 6, `--single-step` 6 of 6,
`--referee` 6 of 6.

How this session's table was made: every row was run with this session's code. Set 35 and the GRU
translator were recorded with the final code (33 cases). The other 672 cases whose traces session 41
left on this machine were compared again with it (`table.py --reuse`, which also tries the
alternative pairings again and records them); the remaining 334 (77 families) were recorded again
after the last analyzer change (de7ef87). Against the previous table, four are better (the GRU
translator) and one is better among the 334 (`port_xdeepfm torch_cin_einsum_transposed`). Two clean twins
fail on this machine: `resnext50_32x4d` (one value against two noise floors, already a known
failure here) and `shufflenet_v2_x0_5_train` (the session-start code fails it the same way here;
see the known failures). The weight maps of the 151 clean trace pairs are the same under the session-start and
the final matcher, except the GRU translator's (its backward encoder) and set 35's. Whole corpus:
**912 of 1039** (clean twins 221 of 237; design families 137 of 140, held out 775 of 899).

## Roles that never stand for one another, a cell no call pairs with, a decay in one optimizer and in the other's loss (session 43)

Set 36, written by three helpers that never ran the tool, each given the whole brief
(NOTES-set36-h94..h96). `port_slot_attention`: slot attention whose paddle side loops a
framework `GRUCell` inline (gates r, z, c) with separate q, k, v, against a torch step module
called three times that fuses k|v and writes the GRU update by hand (gates z, r, n).
`port_hornet`: recursive gated convolution, a hand-written channels-first norm against
LayerNorm between transposes, layer scales as modules of their own against the block's
`gamma1`/`gamma2`, norms registered in another order. `port_weightnorm_convlm`: a gated
convolutional LM under each framework's weight norm (two convolutions against one fused one,
`weight_g [24]` against `original0 [48, 1, 1]`). `port_autoformer`: series decomposition and FFT
auto-correlation, a packed q|k|v against separate ones, Linears against kernel-1 convolutions.
Two training ports: `port_gaussnll_onecycle_train` (a Gaussian NLL written by hand, Nesterov SGD,
one-cycle) and `port_l1decay_cosrestart_train` (paddle's `L1Decay` in the optimizer against an
L1 penalty in torch's loss, warm restarts).

First contact, at the session-start commit (a1d1f72; a1d1f72 changes only pytest's temporary
directories on top of 6396428): set 36 **12 of 28** (clean twins 1 of 6). Slot Attention 0 of 5,
HorNet 0 of 5 (exit 2), the conv LM 3 of 5, Autoformer 2 of 5, Gaussian NLL 4 of 4, L1 decay 2 of 4.

Rules added (general, each with a test of our own; see docs/analyzer.md, Session 43):

- **The learning rate an update used**: a decay kept inside the optimizer (torch Adagrad's
  `lr_decay`) against the same decay in a scheduler. Found on `shufflenet_v2_x0_5_train`'s clean
  twin (a known failure of session 42), not on set 36.
- **An update told apart no finer than storing the new weight rounds** (the same twin).
- **q, k and v never stand for one another**, and a fused tensor's parts ranked by the roles
  their names say by one word (`to_kv` holds `to_k`, `to_v`; Slot Attention and Autoformer).
- **A logarithm run into a name** (`logsigma` is a log as `log_sigma` is; Slot Attention).
- **A module no call of the other side pairs with**: its gate orders are recorded and kept when
  the run gets past it (Slot Attention's framework GRU cell against a hand-written update).
- **A decay in one optimizer, a penalty in the other's loss**: the recorder records paddle's
  `L1Decay`; gradients that differ by the decay term on the recorded weights pass, said as a
  convention (the L1 training port).
- Withdrawn: pairing same-shape leftovers by the numbers in their names (HorNet's `ls1`/`gamma1`);
  XCiT's port numbers its layer scales crosswise, and registration order had them right.

After: set 36 **19 of 28** (clean twins 4 of 6): Slot Attention 3 of 5, HorNet 0 of 5, the conv LM
3 of 5, Autoformer 5 of 5, Gaussian NLL 4 of 4, L1 decay 4 of 4. `shufflenet_v2_x0_5_train`'s clean
twin passes again. Modes on set 36's clean twins: `--ops`, `--single-step` and `--referee` each 4 of 6, the
four that pass without a flag (HorNet and the conv LM fail the same way in every mode).

How this session's table was made: every row but five was run with this session's code. Set 36,
every training family (63) and the 35 port families this session's rules touch (recurrent
cells, loops, fused projections) were recorded with it (401 cases); the other 661 cases were
compared again with the final code on traces session 42 left (`--reuse`, which also records
the alternative pairings it tries). `vgg11_bn`'s five rows are session 42's: its traces were
deleted to free the disk. Against the previous table, one is better (`shufflenet_v2_x0_5_train`
clean) and one worse (`port_convlstm torch_state_reset_each_step`: the session-start code gives
the same row on this machine; session 42's row was a `--reuse` compare). The weight maps of the
232 clean trace pairs on this machine are the same under the session-start and the final
matcher. Whole corpus: **931 of 1067** (clean twins 226 of 243; design families 137 of 140, held
out 794 of 927).

## Weight-norm and spectral-norm weights as the layer's own, names over registration order, pairs only an order made (session 44)

Set 37, written by three helpers that never ran the tool, each given the whole brief
(NOTES-set37-h97..h99). `port_focalnet`: focal modulation, paddle's one Linear `f` for
q | ctx | gates against three 1x1 convolutions, layer scales as block parameters against
`LayerScale` modules, LayerNorm over channels-last tokens against a channels-first norm.
`port_griffin`: a Griffin/Hawk-style LM, RG-LRU whose decay is stored under another
parameterisation on each side, a scan written two ways, local attention. `port_lightconv`:
LightConv/DynamicConv, kernels `[H, 1, K]` against `[H, K]`, predicted kernels ordered by head
on one side and by tap on the other. `port_sngan_disc`: an SNGAN discriminator under paddle's
`spectral_norm` against a spectral norm written by hand (`weight_orig`, `weight_u`, `weight_v`
against `weight`, `sn_u`, `sn_v`). Two training ports: `port_amsgrad_plateau_train` (Adam with
amsgrad on both sides, reduce-on-plateau) and `port_ema_swa_train` (an exponential moving average
of the weights in buffers against torch's `AveragedModel`).

First contact, at the session-start commit (af33acd): set 37 **11 of 28** (clean twins 2 of 6).
FocalNet 0 of 5 (exit 2), Griffin 0 of 5, LightConv 3 of 5, the SNGAN discriminator 1 of 5,
amsgrad 4 of 4, the EMA 3 of 4.

Rules added (general, each with a test of our own; see docs/analyzer.md, Session 44):

- **A reparametrised weight is the layer's weight, in the layer's layout**: a weight-norm v
  kept on the layer (`weight_v`) and a spectral-normed layer's `weight_orig` (the conv LM of set
  36, the SNGAN discriminator).
- **Carried state pairs in the partner layer first** (the power-iteration vectors).
- **A bias waits for its weight** where the two weights differ in size (HorNet).
- **Names shared one to one win over registration order** (HorNet's `norm1`/`norm2`; NFNet's
  `conv1` is no `conv1` where the parents hold `conv0, conv1` and `conv1, conv2`).
- **Same-shape tensors nothing tells apart pair in call order** after a refused transfer, and a
  pair only an order made is tried the other way round where the names' numbers say so, in every
  block alike (HorNet's layer scales; the convention pair `layerscale`).
- **Layers named alike** in classes of uneven counts, and **1x1 convolutions as the parts of a
  Linear in the partner module** (FocalNet).

After: set 37 **17 of 28** (clean twins 4 of 6): FocalNet 3 of 5, Griffin 0 of 5, LightConv 3 of 5,
the SNGAN discriminator 4 of 5, amsgrad 4 of 4, the EMA 3 of 4. Set 36 now 24 of 28 (HorNet 4 of 5,
was 0 of 5 with exit 2; the conv LM 4 of 5, its clean twin aligned). NFNet's static weight map now
pairs `conv0`/`conv1` as its truth does (the run had reached the same by a swap). Modes on set 37's
clean twins: `--ops`, `--single-step` and `--referee` each 4 of 6, the four that pass without a
flag (Griffin and LightConv fail the same way in every mode).

How this session's table was made: the 33 families whose pairing or call-order path the rules
touch (every family whose transfer had needed the call order, the four that refused with exit 2,
HorNet, NFNet, the weight-normed ones, SpeechT5), four more checked fresh (below) and set 37 were
recorded with the final code (198 cases); every other case but VGG-11's five was compared again
with the final code on the traces kept on this machine (`--reuse`). Against the previous table:
5 better (HorNet's four, the conv LM's clean twin), none worse, one failure named elsewhere
(HorNet `torch_gamma1_for_mlp`, exit 1 at the block where it was exit 2). Four `--reuse` rows
came out worse than their fresh recording (`port_lstmp_asr` clean, `port_resnest
torch_avd_first`, `port_slot_attention torch_pos_grid_xy`, `port_convlstm
torch_state_reset_each_step`): after two rounds of pairings (`pairing-1-pairing-3`, or one on top
of the call order with a second after it) `--reuse` looked for a mapping file of that whole name,
found none, and compared B's first recording. Those families were recorded again; their fresh rows
are the table's, identical to the previous table. Mended after the corpus run: `_kept` takes the
last round's file, which holds the earlier ones (reusing four families recorded fresh this
session, including two kept second rounds, now gives their fresh rows). The weight maps of the 332 clean
trace pairs on this machine, before and after: the same except the weight-normed conv LM (now
whole), wav2vec2's positional convolution (`structure` for `only candidate`), NFNet (as its
truth), and labels (`name` for `structure`, `only candidate` for `shape+order`) where the pairs
are the same. Whole corpus: **953 of 1095** (clean twins 232 of 249; design families 137 of 140,
held out 816 of 955).

## Copies of the weights, a list's layers in one tensor per role, a container's output as its child's (session 45)

Set 38, written by three helpers that never ran the tool, each given the whole brief
(NOTES-set38-h100..h102). `port_ecapa_tdnn`: an ECAPA-TDNN speaker encoder, a Res2Net stage's
branch convolutions as a list of Conv1D + BatchNorm layers against one module keeping each
role's tensors of all branches concatenated (`kernels [3w, w, k]`, `kernel_bias`, `bn_gamma`, ...)
and sliced per branch, attentive statistics pooling. `port_xlstm`: an xLSTM LM, block-diagonal
q/k/v maps (`blocks [8, 4, 4]`) against grouped 1x1 convolutions, the mLSTM in parallel form
against a step loop, norm scales stored as `1 + delta`. `port_efficientvit`: lite multi-scale
linear attention, one qkv 1x1 convolution packed head by head against three Linears on
channels-last tokens, the aggregation convolutions' channels in another order. `port_condconv`:
CondConv, expert kernels `[K, out*in*kh*kw]` mixed per sample by a grouped convolution over the
batch against `[K, out, in, kh, kw]` and unfolded patches. Two training ports: `port_swav_train`
(Sinkhorn codes, prototypes renormalised every step, SGD with momentum) and
`port_poisson_adam_explr_train` (Poisson NLL with an exposure offset, Adam with L2 decay,
exponential learning-rate decay, clipping).

First contact, at the session-start commit (884522d): set 38 **15 of 28** (clean twins 3 of 6).
ECAPA 2 of 5, xLSTM 1 of 5, EfficientViT 1 of 5, CondConv 3 of 5, SwAV 4 of 4, Poisson 4 of 4.

Rules added (general, each with a test of our own that fails on the session-start code; see
docs/analyzer.md, Session 45):

- **Copies a model keeps of its weights pair as the weights they copy** (an EMA in root buffers
  against `AveragedModel`'s frozen parameters): a tensor left unpaired whose step-0 statistics are
  those of one paired tensor of its side is its copy; two copies pair as their weights did.
  **Trained tensors pair with trained ones** where one side adds frozen copies. A first
  divergence in a copy says the copies' update differs where the weights agree (the EMA family's
  `torch_ema_pre_step`: ALIGNED before, its copies never compared).
- **A container's output that is its last child's shares that child's rounding verdict** (a
  clean ResNeXt-50: `layer4.2` passed as carried rounding, `layer4`, the same values, failed):
  the same statistics and the same values element by element on each side (a square tensor
  handed on transposed has the statistics, not the values).
- **A list's layers kept one after the other in one tensor per role** pair as that tensor's
  parts (ECAPA's Res2Net branches); a vector splits so only in a module whose tensor of more axes
  holds that list, and a stack in a block never holds the list of the blocks it sits in.
- **The last ones standing in a place pair by the roles their layers' names say** (xLSTM's
  `q_map` ~ `wq`).

After: set 38 **19 of 28** (clean twins 5 of 6): ECAPA 5 of 5, xLSTM 2 of 5 (its clean twin aligns;
the three bugs in the cell are named at the torch block, whose memory module receives inputs
the block's inline code rearranged), EfficientViT 1 of 5 (heads packed inside a user class with
the aggregation convolutions' channels reordered: the run tries two groups of heads, not the
reordering), CondConv 3 of 5 (two kernel-layout bugs named at paddle's routing module, a module
of its own whose output nothing on the torch side holds), SwAV 4 of 4, Poisson 4 of 4. Set 37:
the EMA 4 of 4 (was 3 of 4). Modes on set 38's clean twins: `--ops`, `--single-step` and `--referee`
each 5 of 6, the five that pass without a flag.

How this session's table was made: set 38 and the EMA family were recorded with the final code
(32 cases); every other case but VGG-11's five was compared again with the final code on the traces
kept on this machine (`--reuse`). Three families whose `--reuse` rows differed from the previous
table (`port_lstmp_asr` clean, `port_convlstm torch_state_reset_each_step`, `port_slot_attention
torch_pos_grid_xy`: their kept traces are older than their rows) were recorded again; the fresh rows
are the previous table's, and are this table's. Against the previous table: 2 better (the EMA's
`torch_ema_pre_step`, `resnext50_32x4d` clean), none worse. The weight maps of the 367 clean trace
pairs on this machine are the same pairs under the session-start and the final matcher (labels
aside). After the corpus run, a copy's candidates were narrowed to tensors that do not train (a
live model's statistics are host copies; no pair of the table changes: the EMA and DINO families,
recorded again, 8 of 8). Whole corpus: **974 of 1123** (clean twins 238 of 255; design families
137 of 140, held out 837 of 983).

## Inputs joined in another order, a block's tensors within their block, a model's tensor packs no block's run, a twin that never ran (session 46)

Set 39, written by three helpers that never ran the tool, each given the whole brief
(NOTES-set39-h103..h105). `port_deltanet`: a DeltaNet LM, the delta rule step by step on one side
and in a chunked WY form in a parameter-free module on the other, q/k/v/beta projections and the
three short convolutions separate on one side and packed (`in_proj [98, 32]`, one depthwise
`conv1d [96, 1, 4]`) on the other. `port_twins_svt`: Twins-SVT on a non-square image, a window
attention with a fused qkv against separate query/key/value Linears, a global sub-sampled
attention with q and kv Linears against `nn.MultiheadAttention`, a positional encoding generator.
`port_dcn_cross`: a DCN-v2 recommender with low-rank mixture-of-experts cross layers, one table
with offsets against a table per field, stacked expert tensors against a list of Linear experts.
`port_gpt_neox`: GPT-NeoX, parallel residual, partial rotary, q|k|v packed per head against
separate Linears. Two training ports: `port_supcon_warmup_train` (SupCon with a BatchNorm
projection head, SGD with Nesterov and weight decay, linear warm-up then cosine) and
`port_tweedie_multistep_train` (a Tweedie deviance with a log link, two dropouts, Adam with
decay, multi-step decay; one Linear over `[embedding, features]` against two Linears).

First contact, at the session-start commit (d2bd426): set 39 **11 of 28** (clean twins 3 of 6).
DeltaNet 0 of 5, Twins-SVT 0 of 5 (exit 2: the transfer stopped), DCN 4 of 5, GPT-NeoX 3 of 5,
SupCon 4 of 4, Tweedie 0 of 4.

Rules added (general, each with a test of our own that fails on the session-start code; see
docs/analyzer.md, Session 46):

- **A layer over a concatenation whose parts' layers are registered in another order** has its
  input columns re-cut by the values (`column_alternatives` for a layer cut into parts): the
  joined input differs from the other side's only by the order of its column blocks.
- **A tensor pairs by rank only within the block the pairs so far give its block**
  (`_blocks_apart`): Twins-SVT's only `[3d, d]` tensor of each side sits in the other block;
  each block's norms pair block with block first, and each fused tensor then packs its own
  block's parts.
- **A tensor outside the blocks packs no one block's run that every block has**
  (`_one_block_of_many`): DeltaNet's LM head (64 rows) took block 0's gate and output
  projections (32 each).
- **A one-sided call whose weights' twin never ran on the other side is no culprit**
  (`_partner_never_called`): GPT-NeoX's MLP reading the first norm's output is named at the
  blocks, not at the other side's second norm.

After: set 39 **24 of 28** (clean twins 6 of 6): DeltaNet 3 of 5, Twins-SVT 5 of 5, DCN 4 of 5,
GPT-NeoX 4 of 5, SupCon 4 of 4, Tweedie 4 of 4. The four misses are localisation inside a call
the other side splits differently: DeltaNet's right-padded short convolutions are named at the
attention (the three convolutions' calls are parts of the other side's one packed convolution,
and calls are not compared part against share), its float16 beta at the torch `delta_rule`
module (the beta value is inline on the paddle side: no record holds it); DCN's expert bug
(every torch expert drops a tanh) at the torch cross layer, listing its three expert calls as
unchecked (the paddle side computes the experts inline with one einsum); GPT-NeoX's rotary
frequency bug at the torch attention (its rotary module's tables have no paddle record).

How this session's table was made: set 39 was recorded with the final code (28 cases); every other
case but VGG-11's five was compared again with the final code on the traces kept on this machine
(`--reuse`, 1118 cases). Against the previous table: 1123 rows the same, none better, none worse.
The weight maps of the 379 clean trace pairs on this machine are the same pairs under the
session-start and the final matcher. Other modes on set 39's clean twins: `--ops` 6 of 6,
`--single-step` 6 of 6, `--referee` 5 of 6 at first (the Tweedie twin's joined input was called
rounding by the float64 errors of its parts, each of which agrees with its float64 run; the referee
now leaves such a computed value to the noise floor) and 6 of 6 after; with set 38's, the EMA's and
eight library and vision families' clean twins, `--referee` 20 of 20. Whole corpus: **998 of 1151**
(clean twins 244 of 261; design families 137 of 140, held out 861 of 1011).

## Modules inside the blocks joined as blocks are, an input a residual carries, two kinds of values, pointwise q, k, v by their names, one projection hoisted for every block (session 47)

Set 40, written by three helpers that never ran the tool (NOTES-set40-h106..h108; h106's prompt
lost the brief's text and it followed `tests/HELD-OUT-BRIEF.md` instead, never running the tool
or reading its code). `port_gemma`: Gemma, the embedding scaled by sqrt(d) in a wrapper module on
one side and inline on the other, RMSNorm's weight stored as an offset from one against the full
scale, GeGLU with gate|up packed on one side, grouped-query attention with q|k|v packed on the
other, a complex rotary buffer, a tied head. `port_starcoder_mqa`: StarCoder with multi-query
attention (q, one key head and one value head packed in `c_attn` against three Linears),
learned positions read from the padding mask, a left-padded batch. `port_botnet`: BoTNet on a
non-square image, 2-D relative position logits in a module of its own on one side and inline on
the other, qkv as one 1x1 convolution against Linears over pixels. `port_ddpm_unet`: a DDPM U-Net,
every block's time projection packed in one Linear at the top on one side, q/k/v as 1x1
convolutions against `nn.MultiheadAttention`, skip concatenations. Two training ports:
`port_wing_lambdalr_train` (Wing loss, AdamW, a warm-up lambda schedule written as the framework's
scheduler on one side and a class of the port's own on the other) and
`port_margin_ranking_steplr_train` (a two-tower ranker, margin ranking loss, SGD with dampening
written by hand on the paddle side, step decay).

First contact, at the session-start commit (6d55354): set 40 **16 of 28** (clean twins 4 of 6).
Gemma 1 of 5, StarCoder 4 of 5, BoTNet 3 of 5, DDPM 0 of 5 (exit 2: the transfer stopped), Wing
4 of 4, margin ranking 4 of 4.

Rules added (general, each with a test of our own that fails on the session-start code; see
docs/analyzer.md, Session 47):

- **A tensor pairs by rank only with the module inside its block that the pairs so far give**
  (`scope_of`): Gemma's fused gate|up and the other side's fused q|k|v, one shape, paired by rank
  although the output projections joined attention with attention.
- **An input a call carries, unchanged, into what it computes was used as a number**
  (`_carried_inside`): a wrongly scaled embedding passed because each block's RMSNorm is blind
  to a scale, while the residual carried it.
- **Values of two kinds are two representations** (`value_kind`): an int 0/1 mask `[B, S]`
  broadcast against a boolean `[B, S, 1, S]` mask compared axes that mean different things.
- **Pointwise convolutions named by their roles are parts of a fused projection**: DDPM's `q`,
  `k`, `v` 1x1 convolutions against `nn.MultiheadAttention`'s `in_proj_weight`.
- **One layer per block hoisted into one tensor at the model's top** (`hoisted_run`): DDPM's
  `time_proj` against a `temb_proj` in every ResBlock, the bias following the weight.

After: set 40 **25 of 28** (clean twins 6 of 6): Gemma 5 of 5, StarCoder 5 of 5, BoTNet 3 of 5,
DDPM 4 of 5, Wing 4 of 4, margin ranking 4 of 4. The three misses are listed below.

How this session's table was made: set 40 was recorded with the final code (28 cases); every other
case but VGG-11's five was compared again with the final code on the traces kept on this machine
(`--reuse`, 1146 cases). Against the previous table: 1151 rows the same, none better, none worse
(a first, wider broadcast rule made ELECTRA's `paddle_mask_axis` worse on this check and was
narrowed). The weight maps of the 385 clean trace pairs on this machine are the same pairs under
the session-start and the final matcher. Other modes on set 40's clean twins: `--ops` 6 of 6,
`--single-step` 6 of 6, `--referee` 6 of 6. Whole corpus: **1023 of 1179** (clean twins 250 of
267; design families 137 of 140, held out 886 of 1039).

## A stack and a list in blocks each side counts its own way, packed halves beside a one-sided activation, same-shape layers by what their calls return (session 48)

Three sets, each written by three helpers that never ran the tool (NOTES-set41-h109..h111,
NOTES-set42-h112..h114, NOTES-set43-h115..h117). Set 41: `port_phi3` (q|k|v and gate|up fused on
one side, rotary on half of each head), `port_cohere` (one weight-only LayerNorm feeding attention
and MLP in parallel, interleaved rotary, a logit scale on the tied head), `port_vovnet` (one-shot
aggregation, effective SE with a hard sigmoid), `port_mobilevitv2` (separable self-attention,
patches `[B, d, P, N]` against `[B, d, N, P]`), `port_cosine_embedding_cyclic_train`,
`port_pinball_adamw_poly_train`. Set 42: `port_internlm2` (q|k|v packed per key/value group in one
`wqkv`), `port_mistral_swa` (sliding-window attention, an additive band mask built at the top
against a boolean one in each attention), `port_res2net` (PaddleClas-style blocks `res2a`..`res3b`
against torchvision-style `layer1.0`.., the first block's branches one grouped convolution),
`port_efficientnetv2`, `port_bn_smoothl1_multistep_train` (train-mode BatchNorm),
`port_multimargin_sgd_warmcos_train`. Set 43: `port_granite` (muP-style multipliers),
`port_olmo` (non-parametric LayerNorm, up|gate fused with the gate second), `port_regnety`,
`port_rexnet` (a partial residual), `port_llrd_adamw_train` (layer-wise learning-rate decay),
`port_coral_ordinal_train`.

First contact: set 41 **26 of 28** (clean twins 6 of 6) and set 42 **21 of 28** (clean twins 5 of
6: Res2Net's transfer stopped, exit 2 in all five cases), both at the session-start commit
(ceb9bb1) in a separate checkout; set 43 **16 of 28** (clean twins 4 of 6: OLMo's and RegNetY's
diverge) with the code of commit 41a529b, which holds the first rule below but nothing designed
on set 43.

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Session 48):

- **A stack and a module list are in one block where each sits inside the module the pairs so
  far make the other's counterpart** (`counterpart_scope`), a BatchNorm beside a grouped
  convolution holds the branches' norms, and the structure passes run again after stacks pair:
  Res2Net's clean twin, 0 of 5 → 2 of 5.
- **The halves of a packed tensor beside a one-sided activation are tried the other way round**
  (`part_alternatives`): OLMo's `ff_proj` (up then gate) read by a SwiGLU module of its own.
- **Same-shape layers pair by what their calls return where order cannot** (`call_signatures`,
  once both models ran): RegNetY's `conv1` and strided shortcut, one weight shape, registered and
  called in opposite orders by the two ports; 0 of 5 → 4 of 5.

After: set 41 **26 of 28**, set 42 **23 of 28**, set 43 **21 of 28** (clean twins 6 of 6 in each).
Phi-3 4 of 5, Cohere 4 of 5, VoVNet 5 of 5, MobileViT-v2 5 of 5, cosine embedding 4 of 4, pinball
4 of 4; InternLM2 4 of 5, Mistral 4 of 5, Res2Net 2 of 5, EfficientNetV2 5 of 5, BatchNorm SmoothL1
4 of 4, multi-margin 4 of 4; Granite 2 of 5, OLMo 3 of 5, RegNetY 4 of 5, ReXNet 5 of 5, layer-wise
decay 3 of 4, CORAL 4 of 4. The misses are listed below.

How this session's table was made: sets 41 to 43 were recorded with the final code (84 cases),
and so were the fifteen families where the widened part alternatives could act (every case whose
report names a one-sided call beside a tensor packed in two parts: BiFPN, Conv-TasNet, DPN,
GraphSAGE, neural ODE, SKNet, PVT, the relative-bias encoder, SASRec, Set Transformer, TabNet, Slot
Attention, the weight-normed LM, xLSTM, Gemma) and the four whose call-ordered weight maps the
call-shape rule changes (RegNetY, DPN, involution, SKNet); every one of those 79 earlier rows came
out the same. The other rows are the previous table's: the comparison and judging code did not change
this session (the alignment module was split, not changed), the weight maps of the 391 kept clean
trace pairs are identical under the session-start and the final matcher in registration order,
and the call-ordered maps differ only in the four families run again. Against the previous table:
1179 rows the same, none better, none worse. Other modes on the new sets' clean twins: `--ops`,
`--single-step` and `--referee` 18 of 18 each (set 41's measured with the code of commit c44ffac,
before this session's rules; sets 42 and 43's with the final code). Whole corpus: **1093 of 1263**
(clean twins 268 of 285; design families 137 of 140, held out 956 of 1123).

## Looking closer at a call nothing checks, an attention's projections never a feed-forward's, partial rotary layouts (session 49)

One set, written by three helpers that never ran the tool (NOTES-set44-h118..h120):
`port_stablelm` (partial rotary on 8 of 16 features, halves against interleaved pairs; per-head
q/k LayerNorms as one norm per head against one `[heads, head_dim]` weight; q|k|v fused on one
side and gate|up on the other), `port_qwen2_moe` (routed experts as modules against stacked
`w13`/`w2` tensors, a shared expert behind a sigmoid gate), `port_cspdarknet` (a Focus stem
against a 6x6 strided convolution, C2f split by two convolutions or one chunked, one shared SiLU
module called twenty times), `port_dla` (nested `Tree` modules against flat wiring),
`port_lion_infonce_train` (a two-tower InfoNCE encoder with a hand-written Lion, CLIP's
`logit_scale` against `log_inv_tau`), `port_multilabel_softmargin_sgd_linearlr_train`
(dampened SGD written by hand against torch's, a linear warm-up).

First contact, at the session-start commit (df76333), before any change: **13 of 28** (clean
twins 2 of 6: StableLM's transfer stopped, exit 2, in all five cases, and CSPDarknet's in all
five; Qwen2-MoE's and the InfoNCE encoder's clean twins diverge). StableLM 0 of 5, Qwen2-MoE 3 of
5, CSPDarknet 0 of 5, DLA 4 of 5, InfoNCE 2 of 4, multi-label 4 of 4.

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Session 49):

- **Where the module records name a call nothing checks, the operations inside decide**
  (`look_closer`): both models recorded again with their operations inside the two calls named;
  that report is kept where an op whose operands were compared and agree, and that read nothing
  the one-sided call returned, names another place inside them.
- **An attention's projection never pairs with a feed-forward's** (`ROLE_FAMILIES`; `Wqkv`
  says q, k, v): StableLM's `gate_up_proj` and `Wqkv`, one shape and one class.
- **A stack takes the group its module's role names** where the members' names say none
  (`q_layernorm.norms.i` against `q_norm`).
- **Partial rotary layouts**, with the per-head norms' features permuted with q and k's rows.
- **CLIP's `logit_scale` holds a logarithm** (against `log_inv_tau`).

After: set 44 **20 of 28** (clean twins 4 of 6): StableLM 4 of 5, Qwen2-MoE 3 of 5, CSPDarknet 0
of 5, DLA 5 of 5 (its residual-after-ReLU bug, first named at torch's shared in-place ReLU
module, is named at the blocks once the operations inside are compared: the first rule), InfoNCE
4 of 4, multi-label 4 of 4. The misses are listed below.

How this session's table was made: set 44 was recorded with the final code (28 cases), and 370
earlier rows with this session's code (the refactor and the single-step fix aside, which do not
touch `run`'s default comparison): 253 of the 285 earlier clean twins, every case of the families
with a rotary table, a fused `wqkv` or stacked experts (the rules' reach), 28 cases whose reports
named a one-sided module, and TFT's and RWKV's cases (their weight maps, below). All 370 came out
as in the previous table; the other rows are the previous table's. The weight maps of every
clean twin (the other 32 from this session's first recordings), under the session-start and
the final matcher: in registration order identical (RWKV's FFN `key`/`value` pair by units now
rather than by structure: the same pairs); in call order identical but TFT's, whose per-head
`q_layers.i`/`k_layers.i` now pack into `q_proj`/`k_proj` (its cases are as before). Other modes on set 44's clean twins: `--ops` 4 of 6,
`--single-step` 4 of 6 (StableLM's first exited 2: a rotary pairing read the other way round;
mended), `--referee` 4 of 6 (Qwen2-MoE's torch spec cannot run in float64: exit 2 with the
model's one-line error); the two that fail are the clean twins that fail in the default mode.
Whole corpus: **1113 of 1291** (clean twins 272 of 291; design families 137 of 140, held out 976
of 1151).

## Stacks of packed tensors, packed names, norms beside their layer, moved layers the weights rule out (session 50)

One set, written by three helpers that never ran the tool (NOTES-set45-h121..h123): `port_phi`
(one LayerNorm feeding attention and MLP in parallel, partial rotary, separate q/k/v against a
fused `Wqkv` with interleaved rotary pairs, a rotary module against inline code), `port_efficientformer`
(a pooling token mixer as a module against inline `pool(x) - x`, conv MLPs with BatchNorm, layer
scales as `[C]` against `[C, 1, 1]`, a fused qkv against separate projections, a token MLP as
Linear against Conv1d), `port_whisper_enc` (Conv1D against a height-1 Conv2d, a positional table
as a buffer against computed, separate q/k/v registered k, v, q against one `qkv` with BEiT-style
biases), `port_mobileone` (a reparameterisable block's branches in lists against named
attributes, an identity BatchNorm registered first against last), `port_tversky_adamw_amsgrad_train`
(the Tversky loss with cross-entropy, paddle's AdamW with amsgrad against one written by hand),
`port_mdn_adam_l2_train` (a mixture density network, three heads against one fused, Adam with
coupled L2 decay and global-norm clipping).

First contact, at the session-start commit (2e30655), before any change: **21 of 28** (clean
twins 5 of 6: MobileOne's BatchNorms paired by rank, its clean twin and all four bugs missed).
Phi 4 of 5, EfficientFormer 4 of 5, Whisper encoder 5 of 5, MobileOne 0 of 5, Tversky 4 of 4,
MDN 4 of 4.

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Session 50):

- **Stacks of packed tensors** (`stacked_packs`, mapping key `*_index`): a stack whose elements
  each hold several module lists' members (`gate_up_proj [E, 2F, D]` or `[E, D, 2F]`, its biases
  `[E, 2F]`) pairs each member with its rows of its element; set 44's Qwen2-MoE clean twin now
  aligns.
- **A packed tensor's name orders its parts** over registration and call order (`gate_up`,
  `qkv`): the Whisper encoder's `qkv` no longer needs the call-order rerun.
- **A norm pairs with the norm beside its layer's partner** (`_unitnorms`), a norm alone in a block
  with the one in its block's counterpart; such pairs wait until the layers are paired.
- **A layer moved across a boundary never pairs against what the weights say** (`Apart.allows`).

After: set 45 **24 of 28** (clean twins 6 of 6): Phi 4 of 5, EfficientFormer 4 of 5, Whisper
encoder 5 of 5, MobileOne 3 of 5, Tversky 4 of 4, MDN 4 of 4. Set 44's Qwen2-MoE 4 of 5 (its
clean twin aligns; `paddle_expert_gate_up_swapped` is now named at the shared expert, still a
miss). The misses are listed below.

How this session's table was made: every clean twin (297) was recorded with the session's
first rule commit (3d35c84); the weight maps of all of them, in both orders, under the session-start
and the final matcher differ only in DeepLab-ASPP, DPN, involution, MobileOne, Qwen2-MoE, SKNet and
the Whisper encoder (and in the label of how some unchanged pairs were found), and every case of
those families and of Twins-SVT, SegFormer and DLA was recorded again with the final matcher (49
cases). The pass for moved layers drops no pair on any clean twin; every bug case of the seven
families whose clean twins hold a moved pair, and 40 bug cases drawn at random (seed 50) from the
rest, were recorded again with the final code (91 cases with set 45). Against the previous table:
all the same but Qwen2-MoE's clean twin (now aligned), its gate/up bug (another wrong module) and
PoolFormer's `torch_mlp_reshape` (now named at the blocks, as the truth says). Other modes on set
45's clean twins: `--ops`, `--single-step` and `--referee` 6 of 6 each; Qwen2-MoE's clean twin
aligns with `--ops` and `--single-step` too (its torch spec cannot run in float64). Whole corpus:
**1139 of 1319** (clean twins 279 of 297; design families 137 of 140, held out 1002 of 1179).

## A Linear over patches into a conv, rotary tables by their values, one projection shared and packed, a moved scale with another constant (session 51)

One set, written by three helpers that never ran the tool (NOTES-set46-h124..h126): `port_minicpm`
(the embedding scale inside the embedding module on one side and inline after it on the other,
residual branches scaled by a buffer module against an attribute, a tied head, a fused `Wqkv` with
interleaved rotary pairs and non-persistent `rope_cos`/`rope_sin` buffers against separate q/k/v with
half-split pairs), `port_nemotron` (a LayerNorm kept as w - 1 and applied as 1 + w against a plain
one, squared ReLU, partial rotary, grouped q|k|v fused Megatron-style, sequence-first activations,
one rotary module at the root against one per attention), `port_dinov2` (a Linear over patches cut
(row, column, channel) against a patch conv, register tokens without positions, LayerScale as modules
against bare parameters, a fused SwiGLU `w12` against two Linears), `port_fasternet` (a partial conv
written in place on a copy against split and concatenate, conv-BN-act MLPs, patch-merging stages),
`port_gatv2` (one projection shared by source and target against a packed `lin [2 * out, in]`, a dense
adjacency mask against an edge list), `port_asgd_kldiv_train` (KL distillation from a frozen teacher
with averaged SGD written by hand on both sides: paddle's built-in ASGD is another algorithm).

First contact, at the session-start commit (01b033b), before any change: **15 of 29** (clean
twins 3 of 6): MiniCPM 2 of 5 (its clean twin diverged: the rotary-pair alternative needs a head size
and found no table by name), Nemotron 4 of 5, DINOv2 0 of 5 (the channels-last alternative for its
patch Linear crashed the transfer: "axes don't match array"), FasterNet 5 of 5, GATv2 0 of 5 (all
refused, exit 2: one shared projection against a packed pair), the distillation twin 4 of 4.

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Session 51):

- **A Linear over patches on the trace's side into a patch conv on the model's**: the rows go into
  the conv's reordered axes; both compared in their canonical layouts (convention pair `patchrows`).
- **A rotary table told by its values** where no name nor handed table gives the head size: a
  buffer holding a cosine table (convention pair `ropebuf`).
- **One projection shared on one side, packed k times on the other**: each part pairs with it as
  tied (its gradient against the parts' summed), and a value holding k copies of the other side's
  compares copy by copy (convention pair `sharedproj`).
- **The one share of the first differing value that the other side does not hold** names its
  module, also when it is the only one-sided share (convention pair `joinup`).
- **A scale moved across a boundary, with another constant**: the side whose module output no call
  receives as it is names the caller that scales it, the other side its module (convention pair
  `embscale`).

After: set 46 **26 of 29** (clean twins 6 of 6): MiniCPM 5 of 5, Nemotron 4 of 5, DINOv2 4 of 5,
FasterNet 5 of 5, GATv2 4 of 5, the distillation twin 4 of 4. Elsewhere: SegFormer's
`torch_upsample_nearest` and DCN-v2's `paddle_cross_uses_xl` and `torch_cross_residual_x0` now pass
(the one share that differs). The misses are listed below.

How this session's table was made: every clean twin (303) was recorded with a80ccfb (every rule
but the moved scale with another constant, which only names a divergence); the weight maps of all
of them, in both orders, under the session-start and the final matcher differ only in GATv2's (the
shared projection); a rotary table told by its values appears in no other clean twin but the
Cohere-style LM (its name is one the tool knows on its other side, which stays first). Recorded again
with the final code: set 46, every case of the Cohere-style LM, DeiT, MLP-Mixer, XLNet, ConvNeXt,
DGCNN and EfficientViT (the families whose runs try the patch-layout alternative the transfer could
not record before), the 39 bug cases that named a one-sided module's parent (the families of the
share and scale rules), and 50 bug cases drawn at random (seed 51). One regression was found and
mended on the way: XLNet's `paddle_scale` tried the channels-last alternative, which the transfer
could now record, and the comparison then raised IndexError on a pair whose sides differ in rank
(f45d1c5). Against the previous table: all the same but set 46 and the three cases above. Other
modes on set 46's clean twins: `--ops`, `--single-step` and `--referee` 6 of 6 each (GATv2's under
`--ops` once the gradient of its shared output compared with the sum of the copies'). Whole
corpus: **1168 of 1348** (clean twins 285 of 303; design families 137 of 140, held out 1031 of
1208).

## A kernel predictor's rows as a transposed grid, heads of one size in stages of other widths (session 52)

One set, written by a helper that never ran the tool (NOTES-set47-h128): `port_mobilenetv4`
(universal inverted bottlenecks with optional start and middle depthwise convs, layer scale, a
mobile multi-query attention whose key and value share one strided depthwise downsampling on one
side and keep one each on the other, timm's layout) and `port_pit` (a pooling-based vision
transformer: stages of 16 then 32 features with heads of 8, a depthwise-conv pooling that folds the
tokens back into a map, the class token through a Linear). Two more helpers of the set wrote nothing
this session.

First contact, at the session-start commit (8dcbced), before any change: **4 of 10** (clean twins 1
of 2): MobileNetV4 0 of 5 (all refused, exit 2: one shared downsampling against two copies), PiT 4
of 5 (`torch_qkv_heads_first` named at the second stage: the head-by-head pairing cut every block
into the first stage's two groups).

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Session 52):

- **A layer's child whose output rows are a grid laid out the other way round**: a kernel
  predictor's `heads * taps` rows head by head against tap by tap; where the layer differs while
  the predictor's calls agree, its rows are read as each transposed factoring of their count, and
  the run under which the layer agrees is kept (convention pair `kernelpred`). Set 37's LightConv
  clean twin, failing since session 44, now aligns.
- **Heads of one size in stages of other widths**: the head-by-head pairing of a fused q|k|v is
  also tried with each block's own head count for one head size, as a rival of the one with as
  many groups in every block; the rival going furthest is kept (convention pair `headstages`).

After: set 47 **4 of 10** (clean twins 1 of 2): PiT's clean twin still aligns, and
`torch_qkv_heads_first` is now exit 0 (the bug is that layout, in every stage); MobileNetV4
still refuses. Elsewhere: LightConv's clean twin aligns.

How this session's table was made: the rules only act on runs that diverge, so no aligned clean
twin is reached. Recorded again with the final code: set 47, the 17 failing clean twins and 60 bug
cases drawn at random (seed 52) with the row rule, and every case of the families with attention
in stages or a kernel predictor (PiT, PVT, Swin, Swin-V2, Twins-SVT, CvT, CoAtNet, MaxViT,
EfficientViT, SegFormer, MobileViT, MobileViT-v2, CrossViT, EfficientFormer, XCiT, MobileNetV4,
LightConv) with both. Against the previous table: all the same but set 47 and LightConv's clean
twin. Other modes on PiT's clean twin: `--ops`, `--single-step` and `--referee` exit 0. Whole
corpus: **1173 of 1358** (clean twins 287 of 305; design families 137 of 140, held out 1036 of
1218).

## A position table rotated, one module against copies of it (session 53)

One set, four helpers that never ran the tool (NOTES-set48-h132, -h133, -h134, -h135):
`port_chatglm` (ChatGLM2's layout: sequence-first activations, one fused q|k|v with bias, rotary on
the first half of each head in interleaved pairs from a model-level cache, two key/value groups,
against a batch-first port with separate projections and a GPT-J style rotary module per layer),
`port_dcrnn` (diffusion-convolution GRU cells over a sensor graph: per-term Linears for each gate
against one packed weight whose rows interleave the terms in another order, an encoder and a
decoder looping over time against one-step modules driven by the root), `port_mvit` (MViTv2:
pooling attention with a depthwise conv and a norm on q, k and v, decomposed relative positions,
NCHW with 1x1 convs against token-major with one fused Linear) and `port_adafactor_mlm_train` (a
masked-LM encoder trained three steps with Adafactor written by hand on both sides, paddle's
built-in TransformerEncoder against a BERT layout).

First contact, at the session-start commit (ad9bc14), before any change: **8 of 19** (clean twins
3 of 4): ChatGLM 2 of 5, DCRNN 0 of 5 (all refused, exit 2), MViT 3 of 5, Adafactor 3 of 4.

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Session 53):

- **A position table whose extra tokens one port puts first and the other last**: the table's
  rows rotated by the count of tokens the embedding adds, each way, kept where the embedding
  then agrees; the rest reads as tokens rolled (convention pair `tokenroll`). Set 23's DeiT clean
  twin, failing since session 30, aligns, and two of its bugs are named where the truth says.
- **One module against copies of it in parallel branches**: one shared downsampling conv and
  norm against a key branch and a value branch each with its own; each copy takes the one
  module's values, its calls pair with the first copy's (convention pair `sharedkv`). Set 47's
  MobileNetV4, refused in all five cases, now 5 of 5.
- Also: the first divergence after a layout is measured in the layout's order too, and a
  pairing a run already kept is not recorded again.

After: set 48 **8 of 19** (the rules reach none of its misses; see the known failures). Elsewhere:
DeiT 3 of 5 (0 of 5), MobileNetV4 5 of 5 (0 of 5).

How this session's table was made: every clean twin recorded again with the final rules (305:
289 aligned; only DeiT's and MobileNetV4's changed, and only they hold a rotated table or a
copies pairing); every case of DeiT, MobileNetV4, set 48 and the families with class tokens
(ViT, CaiT, ViT-MAE, DINOv2, XCiT, PiT, TabTransformer, DiT, Perceiver, Set Transformer, CLIP,
BLIP); 60 bug cases drawn at random (seed 53) and 30 of the failing ones (seed 531), all as
before. Other modes on the clean twins of DeiT, MobileNetV4, ChatGLM and MViT: `--ops`,
`--single-step` and `--referee` exit 0 (DeiT's under `--ops` once the rotation is also tried where
an operation inside the embedding is what differs first). Whole corpus: **1189 of 1377** (clean
twins 292 of 309; design families 137 of 140, held out 1052 of 1237).

## State a forward rewrites, a loss term scaled elsewhere, a per-channel gradient that cancels (sessions 54 and 55)

One set, four helpers that never ran the tool (NOTES-set49-h136, -h137, -h138, -h139):
`port_timesnet` (TimesNet: FFT-picked periods folded into 2-D maps, three Inception branches
averaged against one fused kernel, one norm shared by the blocks against a norm per block),
`port_deformable_attn` (a Deformable-DETR encoder: multi-scale deformable attention sampling with
`grid_sample`, offsets and logits in two Linears against one packed in another axis order),
`port_sam_decoder` (SAM's mask decoder: two-way attention, a `q|k|v` against a bare `in_proj`,
output tokens packed, a transposed-conv upscaler with a channels-first LayerNorm) and
`port_vqema_train` (a VQ-VAE whose codebook the forward rewrites by a moving average, trained).

First contact, at the session-start commit (ca15430), before any change: **1 of 19** (clean twins
0 of 4): TimesNet 0 of 5 (exit 2), deformable attention 0 of 5, SAM decoder 0 of 5, VQ-VAE 1 of 4.

Rules added (general, each with a test of our own that fails without it; see docs/analyzer.md,
Sessions 54 and 55):

- **State the forward rewrites, a buffer against a frozen parameter**: state left after the copies
  are taken pairs as a group in registration order where every one fits every other by one
  reordering of the axes (a codebook and its running sums, `[K, D]` against `[D, K]`).
- **Results in another order** pair by dtype and shape where each is unique on both sides; **a
  scalar loss term the model returns scaled** (by `beta` in one model, in the other's loss
  function) passes where the step's loss and every parameter gradient agree (convention pair
  `codebook`).
- **A per-channel gradient that cancels** (session 55): ResNet-18's clean training twin exits 1 on
  this session's machine at the session-start code (a block's BatchNorm bias gradient, rel-L2
  1.4e-2, from an output gradient 7e-3 apart across ReLU flips), and MobileNetV2's at a BatchNorm
  scale's gradient; a gradient that is on both sides the sum of its module's output gradient (a
  shift) or of that times what the parameter scales (a scale, recovered from the output), all of
  which passed, now passes as carried.

After: set 49 **3 of 19** (clean twins 1 of 4): VQ-VAE 3 of 4 (`torch_avg_div_inplace` is named
at the quantizers, at step 1, where the truth wants the optimizer's update named); TimesNet,
deformable attention and the SAM decoder as at first contact (see the known failures).
How this session's table was made: every clean twin recorded again with session 54's rules (313:
291 aligned; the new failures were ResNet-18's and MobileNetV2's training twins, on this machine);
then, with the final rules, every case of set 49 and of the 22 training twins with a BatchNorm
(89 of 89 as the truth says, MobileNetV2's `bn_momentum` and `nesterov` now named at step 1 where
the scale's gradient had been named at step 0); the other rows carried over. Whole corpus:
**1192 of 1396** (clean twins 293 of 313; design families 137 of 140, held out 1055 of 1256).

## Other modes on clean twins

A sample of eight families (bert, gpt, llama, distilbert, mbart, t5, mobilenet_v3_small,
resnet18), clean twins only, `table.py FAMILY... --clean-only --flags=...`:

| mode | first run | after the fixes it led to |
|---|---|---|
| `--referee` | 8 of 8 aligned | 8 of 8 |
| `--ops` | 3 of 8 (embeddings summed in another order, a scale before vs after a matmul) | 8 of 8: op pairs inside a module whose outputs agree pass |
| `--single-step` | 4 of 8 (exit 2: position ids `[2, S]` vs `[1, S]`) | 8 of 8: a module keeps its own value where the shapes differ |

Measured again in session 15 with the kink, gradient-flow and running-statistics rules, the
eight families and bert_train (3 training steps): `--ops` 9 of 9, `--referee` 9 of 9,
`--single-step` 9 of 9 aligned. Again in session 16, with the unverified rule and slot pairs:
9 of 9 in each mode; and in session 17, with shared instances named by their caller and the
training drift: 9 of 9 in each mode. Session 18, eight of the new families' clean twins (NeZha,
BigBird, CLIP, Chinese-CLIP, BLIP-2, SpeechT5, Falcon, DeBERTa-v2): `--ops` 8 of 8,
`--single-step` 8 of 8, `--referee` 6 of 8 at first. Both misses were float64 recordings that
failed (exit 2, one line, no report), not false alarms: HF CLIP's causal mask is
`torch.full(..., finfo(float64).min)` in the float32 default dtype (a float64 recording now sets
the framework's default dtype too: aligned), and paddlenlp SpeechT5's feature encoder computes
in float32 whatever its weights are (still exit 2): 7 of 8. Session 19, the eight new training
twins' clean runs: `--ops` 8 of 8, `--referee` 8 of 8, `--single-step` 8 of 8 aligned.
Session 20, seven of the eight new families' clean twins (all but the tagger, which fails
without a flag): `--referee` 7 of 7, `--single-step` 7 of 7, `--ops` 6 of 7 at first: Qwen's
first divergence under `--ops` is an op record, with no module call named, so `run` did not
look for another pairing; it now takes the modules the differing records belong to: 7 of 7.
Session 21, the nine set-11 clean twins (six hand-written ports, three training twins):
`--referee` 9 of 9, `--single-step` 9 of 9, `--ops` 8 of 9. The miss is `port_llama` under
`--ops`: its rotary layouts differ, and the op records inside the attention (q and k
transposed and rotated) compare in each side's own feature order, so the pairing recorded in
call order diverges at an op earlier than the first run and is not kept (the issue's
layout-aware `--ops`: operands paired under the layout's permutation, not built yet).
Session 22: whether another pairing goes further is judged by module records only (op records
inside a call pair by the values there), and a complex64 product against float32 is no
precision difference: port_llama under `--ops` is aligned, 9 of 9. The six set-12 clean twins
on first contact: `--ops` 6 of 6, `--single-step` 5 of 6, `--referee` 2 of 6, every miss a
recording failure (exit 2) or a false alarm of the mode, not of the model: paddle's
`Layer.to(dtype=float64)` casts integer buffers (position ids, a relative-position index) and
fails on the LSTM's memoryless dropout state (both now set aside and put back); single-step
replay put paddle's sequence lengths into torch's packed-sequence indices (integer inputs are
data: each side keeps its own); the float64 runs of Swin's merged patches (`[B, H*W, C]` against
`[B, H, W, C]`) were not compared, so the referee called their difference rounding (compared
flattened now, as the main comparison is). After: `--ops` 6 of 6, `--single-step` 6 of 6,
`--referee` 5 of 6 (port_moe's paddle spec computes its softmax in float32 explicitly, so no
float64 run of it exists: exit 2 with its one line).

Session 23: the first 51 clean twins of the corpus (alphabetical, albert to mbart) under `--ops`
with the code of the session's start: 51 of 51 aligned. The six set-13 clean twins with this
session's code: `--ops` 6 of 6, `--single-step` 6 of 6, `--referee` 5 of 6. The miss is
`port_rnnlm_train` under `--referee`: paddle's float64 run clips the gradients with float32
arithmetic (`ClipGradByGlobalNorm`: 4.7e-8 of the update in a float64 test of one step), so the
float64 runs of the two models differ after the first update, and the referee calls it a model
difference at step 1 (exit 1). Without a flag the pair is aligned.

Session 24, every clean twin of the corpus at the code of the session's start (103 families):
`--ops` 103 of 103 and `--single-step` 103 of 103 aligned (the `--referee` sweep was stopped to
give the corpus run the machine). The six set-14 clean twins with this session's code: `--ops` 6
of 6, `--single-step` 6 of 6, `--referee` 6 of 6.

Session 26, the six set-16 clean twins that align (RetNet, FNet, YOLO, Transformer-XL, the
siamese and CTC training ports) with this session's code: `--ops` 6 of 6, `--single-step` 6 of
6, `--referee` 6 of 6.

Session 27, the ten set-17/18 clean twins that align (gMLP, Linformer, SE-ResNeXt, DeepFM, LoRA,
SRU, MobileViT, BiGRU-CRF, MAE, WGAN-GP) with this session's code: `--ops` 9 of 10 at first
(BiGRU-CRF: the first divergence under `--ops` is an op record, and the transposed-matrix
alternative looked only at a located module; it now takes the op's module, as the rotary one
does: 10 of 10), `--single-step` 10 of 10, `--referee` 9 of 10 (BiGRU-CRF's paddle spec builds
its one-hot tags in float32 explicitly, so its float64 run fails: exit 2 with its one line).

Session 28, the twelve set-19/20 clean twins with this session's code: `--ops` 12 of 12,
`--single-step` 12 of 12, `--referee` 11 of 12: in the PPO run the critic's scalar bias after
Adam's second update is 2.8e-6 (relative) from paddle's float64 run and 2.6e-7 from torch's, a
difference of 4.4e-10 on a value near 1.7e-4; the referee calls it paddle's deviation. Left as a
known false alarm of `--referee` (Adam's rounding on a near-zero one-element tensor).

Session 29, the five clean twins this session's rules made align or that align (EDSR, STN, DINO,
distillation, NeRF) with this session's code: `--ops` 5 of 5, `--single-step` 5 of 5,
`--referee` 5 of 5.

Session 30, the seven clean twins this session's rules made align or that align (CaiT, ConvMixer,
S4D, ResMLP, GraphSAGE, PoolFormer, GIN) with this session's code: `--ops` 7 of 7,
`--single-step` 7 of 7, `--referee` 6 of 7: GraphSAGE's torch spec builds its adjacency with
`dtype=torch.float32` explicitly, so its float64 run fails (exit 2 with its one line, as for the
BiGRU-CRF).

Session 31, the five clean twins that align among set 24 and GraphSAGE (GhostNet, XCiT, GraphSAGE,
MoCo, Barlow Twins) with this session's code: `--ops` 5 of 5, `--single-step` 5 of 5, `--referee`
4 of 5 (GraphSAGE, as above). XCiT under `--referee` first said "model difference" at the
temperature: the two float64 runs hold it each in its own space (plain and log), and the referee
set them against each other as stored; a value one side computes from its records is no longer
compared with the float64 runs' stored records.

Session 32, the six clean twins of set 25 (RepVGG, PVT, Nystromformer, HiFi-GAN, DIN, mean
teacher) with this session's code: `--ops` 6 of 6, `--single-step` 6 of 6, `--referee` 6 of 6.

Session 34, the six clean twins of set 27 (TabNet, SchNet, CrossViT, ConvLSTM, DPO, multi-task):
`--single-step` 4 of 6; `--ops` 3 of 6 first, 4 of 6 once the gate pairing is tried under `--ops`
too (ConvLSTM); `--referee` 2 of 6 first, 3 of 6 after the referee rule above (DPO). TabNet and
CrossViT refuse the transfer
(exit 2) in every mode, and ConvLSTM under `--referee` stops with one line (exit 2): its spec
builds the cells' zero state as float32, which the float64 run cannot concatenate with its
float64 input.

Session 35, the six clean twins of set 28 (Performer, Glow, Informer, kv-cache decoding,
parameter groups, triplet loss): `--single-step` 5 of 6, `--ops` 4 of 6, `--referee` 5 of 6. Glow
refuses the transfer (exit 2) in every mode. kv-cache decoding under `--ops`: the gradients of the
cached steps' outputs differ by design (paddle's cached keys and values are used again by every
later step, torch's recomputed prefix only by its own step); without `--ops` those differences pass
as gradients that do not propagate (every parameter gradient agrees), under `--ops` the first of
them is named (not investigated further this session).

Session 33, the six clean twins of set 26 (PatchTST, TextCNN, AutoInt, neural ODE, SAM, ArcFace):
`--single-step` 6 of 6, `--ops` 5 of 6, `--referee` 5 of 6. AutoInt under `--ops`: the
gradient at the last interacting layer's output differs (0.59 relative in the fields' order)
while the one at the layer before agrees to 1e-7; torch's trace holds two gradients of that
tensor under `--ops` (the module's, norm 0.22 like paddle's, and an op-level one, 0.16), and the
pair looks set against the second (not investigated further). Under `--referee` the family's own
loss builds a float32 label tensor, which the float64 run cannot mix with its float64 output: the
recording stops with that one line (exit 2), a limit of the spec, not of the comparison.

## Known failures (open)

- **A scale missing where the other library puts it** (mBART `dec_embed_scale`): the B module
  that lacks the scale agrees with A's unscaled module; the difference shows in the parent's
  inline code, which is what is named.
- **A one-sided module next to a bug in the other side's inline code** (RoFormer
  `rotary_value`: torch rotates the values too, inline; paddle's `rotary` sublayer, whose
  output nothing compares, is named on the paddle side), and **a table built outside the call
  that uses it** (RoFormer `rope_base`: HF's encoder-level `embed_positions` is wrong, the
  attention that receives it is named on the torch side). Values alone cannot tell these from
  the cases the unverified rule gets right; `--ops` records the inline operations.
- **A bug under the noise floor at its own module** (DenseNet-121 `bn_eps_sqrt`, held out,
  session 17: the stem BatchNorm divides by sqrt(var) + eps instead of sqrt(var + eps)). The
  stem's output moves by rel-L2 4.6e-6, ten times the clean twin's difference there but within
  the estimated fp32 floor; one dense layer later a BatchNorm (with its ReLU fused on the paddle
  side) passes it on three times larger, past the floor, and that BatchNorm is named. With
  `--referee` (float64 runs of both models) the stem is named: the float64 runs differ there
  by 4.6e-6, which no float64 rounding does (session 17).

- **One side's rotary table in one layer** (Falcon `paddle_rope_base`, held out, session 18):
  paddle's layer-0 `maybe_rotary` and HF's model-level `rotary_emb` are named, the two tables
  that differ; the truth names HF's attention that uses the table (the LLaMA truth of the same
  structure names `model.rotary_emb`, as the tool does). **A one-sided module next to a bug in
  the other side's inline code** again (Falcon `qkv_layout`: HF's fused projection split in
  the wrong head order, inline; paddle's one-sided `maybe_rotary` is named on the paddle side).

- **Hand-written ports of set 11** (held out, session 21; details in the section above):
  - `port_llama` `kv_repeat_tile`, `softmax_fp16`: the bug is in every attention, so no call of
    the attention confirms the rotary pairing and the first run stands; the paddle side's
    one-sided `rotary_emb` is named where the truth names the attention. Under `--ops` both are
    named right (session 22): the op records inside the attention confirm the pairing.
  - `port_mixer` `patch_order`: torch flattens patches channels first while the fixture's weight
    conversion lays them out channels last. The tool chooses the conversion itself (a reshape,
    channels first), under which this torch model is a correct port: exit 0. A bug in a
    weight conversion the tool replaces is not one it can see. `token_gelu_tanh`: inline in
    torch's token mixer, which holds `w1`, `b1`, `w2`, `b2` itself where paddle's has `fc1` and
    `fc2` children: the two mixers are not paired calls; paddle's one-sided GELU module and
    torch's block are named.
- **A one-sided module after inline code** (`port_swin` `paddle_rel_index_transposed`, held out,
  session 22): the bias is added inline before paddle's Softmax module, which nothing on the
  torch side computes (scaled-dot-product attention): the Softmax is named on the paddle side.
- **Experts as a list against stacked experts** (`port_moe paddle_w1_w3_swapped`, held out,
  session 22; the other two pass since session 28): the unchecked experts side by side name the
  MoE block on both sides; the truth names paddle's expert 0 for a bug inside every expert,
  which no value checks.
- **Inline code against a module of the other side's own, the bug inline** (`port_stylegan_mod
  paddle_pixelnorm_l2`, `port_tacotron_attn paddle_stop_no_sigmoid`, `port_bifpn
  paddle_p5_relu`, held out, session 28): torch's one-sided module (a PixelNorm, a Sigmoid, an
  activation) receives values that agree and returns the value that differs, and is named; the
  truth names the module around it, since the bug is paddle's inline code. The values cannot
  say which side is wrong.
- **A module called once against once per step** (`port_tacotron_attn
  torch_prenet_last_relu_missing`, held out, session 28): paddle's prenet runs over all frames
  at once, torch's per decoder step; the calls pair one to one and the decoder cells are named.
- **Padding moved into a wrapper** (`port_bifpn torch_pool_zero_pad`, held out, session 28):
  paddle's max-pool pairs with torch's inner pool, whose input is the padded one; paddle's pool
  is then no candidate and its layer is named.
- **One-sided activation next to inline code** (Qwen `paddle_mlp_gate_swap`, held out,
  session 20): HF's `act_fn`, whose input agrees and whose output nothing on the paddle side
  computes, is named on the torch side; the truth names the MLP.
- **Halves of a packed tensor used the other way round** (`port_wavenet torch_gate_swapped`,
  `port_gat torch_att_halves_swapped`, held out, session 25): no name says which half of torch's
  packed filter|gate conv or attention vector is which; the values choose the pairing, and under
  it the torch model is a correct port: exit 0.
- **Routing inline against a routing module** (`port_capsnet paddle_two_iters`,
  `torch_softmax_in_caps`, held out, session 25): torch's capsule layer hands its inline
  predictions to a routing module whose output is the layer's; what that module receives is
  compared with nothing on the paddle side. The layers are named; the truth names the module.
- **An in-projection split in another order** (`port_hyena`, three cases, held out, session
  25; `torch_decay_sign` passes since session 26, when the filter MLP pairs with the MLP nested in
  torch's `kernel` and the causal conv's moved padding passes): the in-projection's three chunks
  are used as x0|x1|v on one side and v|x1|x2 on the other; no rule reorders the chunks of one
  packed tensor, so under the weights as stored the clean twin diverges in the mixer's own code
  (and `torch_split_order`, which uses the chunks as paddle does, is exit 0).
- **A module on one side only around or beside a bug** (`port_segformer`
  `torch_upsample_nearest`, `torch_dwconv_no_transpose`, held out, session 26; the other two pass
  since session 27): torch's `decoder.up` resizes with a module where paddle calls
  `F.interpolate` inline, and torch's `dwconv` wraps the transpose and the conv; the tool names
  the head around the first, and paddle's MLP around the conv for the second.
- **A packed part's rows in another rotary layout** (`port_gqa` clean, held out, session 27):
  torch's interleaved complex rope over a packed `wqkv` against paddle's rotate-half over separate
  q and k; the rotary alternative permutes whole projections only.
- **Two layouts at once in one packed tensor** (`port_mla`, three cases, held out, session 29):
  each head's nope and rope rows packed together, the rope rows interleaved on one side and
  half-split on the other; each alternative is tried alone, and neither alone makes a call agree.
- **Tokens in another order all the way** (`port_deit`, held out, session 30; the clean twin and
  two of the four bugs pass since session 53, when the position table's rows are tried rotated by the tokens the
  embedding adds and the rest is read as tokens rolled): `torch_qkv_headwise`, whose bug is the
  head-by-head q|k|v layout, is now a layout the values confirm (exit 0, as PiT's in session 52).
  `port_cait torch_ca_scale_dim`: the rolled norm output reaches the attention that holds the bug,
  so the block's own code (the concatenation) is named.
- **A stacked square parameter and features in another order** (`port_dcnv2`, four cases, held
  out, session 30): `kernels [3, 22, 22]` used as `x @ K[i]` against three `Linear(22, 22)`: a
  stack of squares is not paired (no shape says its orientation), and sparse features first
  against dense first permute both axes of every cross weight, which no rule pairs.
- **Two same-shape weights used the other way round** (`port_cait paddle_heads_mix_swapped`, held
  out, session 30): paddle calls its two head-mixing Linears in the opposite order of their
  registration; the pairing in call order makes the two models one function, and the report says
  the weights were paired in the order the models call them: exit 0.
- **A module of one side's own named where the truth names the pair** (`port_convmixer
  torch_residual_norm_outside`, `port_cait torch_gelu_tanh`, `port_resmlp torch_aff2_uses_alpha1`,
  `port_poolformer torch_mlp_reshape`, held out, session 30; `port_pvt paddle_kv_heads_first`, held out,
  session 32: torch's `nn.MultiheadAttention` inside the attention is named): as in sessions 28 and 29. A session
  30 try named the pair instead; it mended set 22's two but broke as many library truths (BERT's,
  GPT's, RoBERTa's activation bugs name the one-sided module), so it was not kept; the helpers'
  brief now asks for the library convention.
- **An adjacency built by a module of one side's own** (`port_graphsage torch_adj_transposed`, held
  out, session 30; the family's other two misses pass since session 31, when one Linear over a
  concatenation compares as the parts joined and summed): torch's `mean_adj`, called at the root,
  builds the adjacency paddle never builds (it sends messages along an edge list); the adjacency is
  another representation, not compared, so the layer that reads it is named where the truth names
  the builder.
- **Ports of session 31 that still fail** (held out):
  - `port_levit`, five cases, exit 2: paddle fuses q|k|v in one Linear+BatchNorm laid out head by
    head with parts of unequal widths (q 4, k 4, v 8 per head), torch keeps three; no class table
    says the heads of a user's class, and the transfer refuses, naming the tensors.
  - `port_tft`, five cases: four same-shape gated residual networks named
    `static_context_{variable_selection, enrichment, initial_hidden, initial_cell}` against
    `static_encoder.{state_h, state_c, selection, enrichment}` called in another order, and
    per-head query Linears against one fused projection: neither the names, nor the order of the
    calls, nor registration pairs them all; the GLU halves now pair by the values, and the run
    diverges later, at the temporal selection that reads the wrongly paired contexts.
  - `port_xcit torch_lpi_bn_before_act`: paddle's local patch interaction has a GELU module of its
    own, torch computes it inline after a BatchNorm it moved first; paddle's GELU is named, the
    truth names the pair around it (the ambiguity of one-sided modules above).
- **A module of one side's own next to the other side's inline code** (`port_stn`
  `paddle_sample_align_corners`, `torch_theta_transposed`, `port_edsr paddle_res_scale_on_sum`,
  `torch_d2s_ij_swapped`, held out, session 29): as for StyleGAN2's PixelNorm in session 28, the
  values cannot say which side is wrong; the one-sided module is named, the truth names the pair
  around it.
- **An optimizer's framework convention that the truth calls a bug** (`port_kd_rmsprop_train
  eps_outside`, held out, session 29): torch's own RMSprop against paddle's; reported as the
  known convention, exit 0.
- **One call on a packed tensor against one call per part** (`port_gmlp torch_gelu_tanh`, held
  out, session 27): the GELU calls are not paired; the precision-level difference is first
  compared at the spatial gating unit's norm, and that unit is named.
- **Per-column tables against one shared table with a reserved row** (`port_tabtransformer`,
  four cases, held out, session 26): the first per-column table pairs with the numerical
  tokenizer of the same shape; a table packed from several with a reserved row is not a layout
  the matcher knows.
- **A layer of its own against inline code** (`port_fnet torch_fft_batch_axis`, held out,
  session 26): the tool names paddle's `fourier` layer (one-sided, the value it returned is the
  first that differs) and torch's block; the truth names paddle's block around it.
- **Ports of session 33 that still fail** (held out):
  - `port_autoint torch_relu_before_residual`: the fields arrive in another order and the first
    layer, which holds the bug, returns values that differ beyond the order (0.69 relative in it,
    1.06 as they stand): no call kept the order before the bug, so it is not passed as a layout,
    and the embedder, where the order begins, is named.
  - `port_neural_ode torch_dynamics_output_tanh`: torch's dynamics call with the extra tanh is
    compared across with paddle's; the activation module inside it is named, the truth names the
    dynamics module.
  - `port_patchtst paddle_patch_pad_constant`: torch pads with a module of its own
    (`ReplicationPad1d`), paddle inline; a module that only moves data is never named, so the
    backbone around it is.
  - `port_deit torch_pos_cls_first` (set 23, passed by chance before): torch's bug slices the
    position table the way paddle lays it out; with the table copied as it stands, the two models
    are one function with the tokens rolled, which is now a layout: exit 0 (the clean twin, which
    needs the table rolled, aligns since session 53).
- **Ports of session 34 that still fail** (set 27, held out):
  - `port_tabnet` (five cases, exit 2): paddle shares whole GLU units (Linear and BatchNorm) across
    the decision steps, one module called four times; torch (pytorch-tabnet's layout) shares only
    the Linears and gives each step its own BatchNorm copies, and packs each GLU's value and gate
    halves into one Linear and one BatchNorm. One tensor copied into four, each a half of a packed
    tensor: the matcher pairs a module called again with sibling copies only (`pair_shared`), and
    the transfer refuses the BatchNorm halves it cannot tell apart.
  - `port_crossvit` (five cases, exit 2): two branches, torch registering the small one first and
    running the large one first, PreNorm wrappers against blocks, q|k|v fused on one side and apart
    on the other, a cross-attention module without block indices. Early same-shape pairs inside
    the wrong branch poison the partners that later passes rely on; the transfer refuses.
  - `port_schnet torch_cutoff_no_step`: torch's cutoff is computed inline in each convolution,
    paddle's in a module of its own whose output is right; the tool names paddle's interaction
    block (the first call whose output differs with its inputs the same quantities), the truth
    names paddle's cutoff module, which computes the step torch gets wrong inline.
- **Ports of session 35 that still fail** (set 28, held out):
  - `port_glow` (five cases, exit 2): torch keeps each invertible 1x1 convolution as its LU
    factors (a permutation and a sign buffer, lower and upper triangles, log-scales), paddle as one
    matrix; no pairing of tensors expresses W = P L (U + diag(s)), and the same-shape triangles
    make the match ambiguous, so the transfer refuses and names the mapping line.
  - `port_performer paddle_mask_values`: paddle masks the values instead of the key features,
    inline in its attention; the tool names paddle's feature-map module, called on the keys just
    before, whose output nothing on torch's side compares (torch computes the features inline).
  - `port_informer torch_token_zero_pad`: paddle pads the series circularly before its
    convolution, torch inside it (`padding_mode`); the two convolutions' inputs differ in shape,
    that pair is the first difference, and torch's embedding is named instead of its convolution.
- **Ports of session 36 that still fail** (set 29, held out):
  - `port_softcap_lm paddle_rope_bf16` (the other four pass since session 37): the rotary table
    rounded to bfloat16 inside paddle's `rotary_emb`, whose output torch computes from buffers of
    its attention; nothing compares the table, and the attention is named on both sides.
  - `port_convtasnet torch_mask_softmax`: the last block's residual output is used by neither
    port; once the mask's softmax makes everything downstream differ, that unused output (which
    differs by design: one port adds the residual inside the block) is named.
  - `port_nfnet paddle_expected_var_alpha`: torch applies the activation as a module of its own
    and scales by beta inline after it; the unchecked activation module is named instead of the
    block whose code scales.
- **Ports of session 37 that still fail** (set 30, held out):
  - `port_xdeepfm` (five cases): paddle's compressed interaction layer is a `Conv1D` kernel
    `[O, F*H, 1]`, torch's an einsum weight `[H, F, O]`, and the two ports send opposite halves of
    layer 0's maps to the output; no layout in the table is that reshape and permutation, the
    weights stay unpaired (a structural difference) and the first layer is named in every case.
  - `port_longformer_local paddle_band_off_by_one`, `torch_unfold_pad_unmasked`: each port fuses
    the other attention's q|k|v; the values cross them when a call of the block agrees, but a bug
    in the local attention leaves no call of it agreeing, the names' pairing stands and torch's
    global attention module is named.
  - `port_convnextv2 paddle_grn_batch_mean`: torch's GELU and GRN are modules of their own, one
    after the other, paddle computes both inline; the GELU module, the first of the chain fed
    checked values, is named instead of the GRN (the values cannot say which of the two differs).
- **Ports of session 38 that still fail** (set 31, held out):
  - `port_egnn` (four planted bugs): paddle runs the edge network on an edge list (`[60, 35]`)
    and scatters, torch on dense pairwise tensors (`[2, 6, 6, 16]`) with a mask; the edge and
    coordinate calls are compared by no number, and a bug in one of them is named at the layer
    (`gcl_0` / `blocks.0`), not at the module inside.
- **Ports of session 39 that still fail** (set 32, held out):
  - `port_film_vqa` clean, `torch_film_gamma_no_offset`, `torch_residual_before_relu`: paddle's
    generator keeps gamma, torch's FiLM computes `1 + delta`; the clean twin needs the gamma part
    of the fused generator's bias copied minus one, a transform no layout or offset rule knows
    (offsets are read for norm scales only), so the clean twin differs and the two torch bugs
    behind it are named at the root.
  - `port_tsmixer` (five cases): the time-mixing BatchNorm normalises time x feature flattened
    feature-major on one side and time-major on the other; its vectors are copied as they stand
    (a permutation of a 1-D vector that only the values could find), the clean twin differs at
    the first mixer block and every bug behind it is named there. `paddle_revin_unbiased_var`
    would be found at torch's RevIN module if one-sided calls holding compared weights had their
    inputs judged by the other trace; that broader rule named an attention module elsewhere and
    was taken back.
  - `port_cvt paddle_heads_reshape`: torch's attention core is `nn.MultiheadAttention`, a module
    of torch's own whose weights were compared and whose inputs agree; it is named, where the
    truth names the attention around it.
- **Ports of session 40 that still fail** (set 33, held out):
  - `port_sknet torch_gap_max` (session 41: the other four cases pass since a pointwise
    convolution holds Linears' rows): torch's squeeze pool is a module of its own
    (`layer1.sk.gap`) fed the sum of the branches, which paddle computes inline and never
    records; nothing checks the pool's input, so the unit around it (`layer1.sk`) is named, where
    the truth names the pool.
  - `port_dpn torch_proj_no_relu`: torch's shortcut unit is built with an `nn.Identity` where its
    ReLU was; a module that only moves data is never named, so the unit around it
    (`features.conv2_1.c1x1_w_s1`) is, where the truth names its `act`.
  - `port_ohem_multitask_adam_train torch_clip_per_module`: the modules of the truth
    (`trunk.fc_in` / `shared.0`) are named at step 2; the truth says step 1, where the difference
    is 2.6e-8 in float64, under fp32 rounding (the helper's notes say an fp32 tool first sees it at
    step 2).
- **Ports of session 41 that still fail** (set 34, held out):
  - `port_gru_nmt paddle_bwd_not_flipped_back` (four of its five cases pass since session 42):
    paddle's encoder is not paired with torch's (torch's holds the bridge Linear paddle keeps
    outside it), so the encoder outputs are not compared; the decoder's attention, the first
    consumer, is named where the truth names the encoders.
  - `port_inception paddle_branch_avgpool`: paddle's pool branch calls the block's `_pool` then
    `_convprj`; the pool's output is not compared with torch's `branch_pool.0`, and paddle's
    `_convprj` (whose input differs) is named, where the truth names `_pool`.
  - `port_nbeats torch_fc_last_relu`: torch's Sequential `trend_block.fc` lost its last ReLU; its
    output is its last Linear's, which agrees with paddle's Linear (paddle applies its ReLUs
    inline): the block whose code uses the value (`trend_block`) is named, where the truth names
    the Sequential.
  - `port_mlm_nadam_train paddle_act_dropout`: paddle draws one dropout mask more per layer (an
    activation dropout torch does not have); the masks replayed on torch's side shift by one from
    there, and the attention of layer 0 is named at step 0, where the truth names the extra
    dropout.
- **Ports of session 42 that still fail** (set 35, held out):
  - `port_resnest torch_rsoftmax_no_transpose`: torch's `rSoftMax` module softmaxes without the
    transpose; paddle computes the radix softmax inline in its attention, and the split-attention
    unit around it (`blocks.0.split_attn`) is named, where the truth names its `attention`.
  - `port_lstmp_asr paddle_forget_bias`: paddle's cell is called per step inside `rnn`, torch's
    LSTM once; the cell's gate order can only be settled by a run that agrees throughout, which a
    bug in the cell prevents, so `rnn` / `encoder.lstm` are named, where the truth names the cell.
  - `port_lstmp_asr torch_subsample_flatten`: torch's front end flattens its features in the
    wrong order in its own code; the value flattened comes from a ReLU module torch records and
    paddle applies inline, and that one-sided module (`encoder.embed.conv.3`) is named as the
    producer of the differing value, where the truth names `encoder.embed`, whose code flattens.
- **Ports of session 43 that still fail** (set 36, held out):
  - `port_hornet torch_gamma1_for_mlp` (all five exit 2 until session 44): torch scales the MLP
    branch with `gamma1`; the block is named where the truth names paddle's `ls2` module, which
    nothing on the torch side computes alone.
  - `port_weightnorm_convlm torch_gtu_gate` (the clean twin aligns since session 44): torch's
    gate is a module of its own; paddle's block and torch's layer, whose weights the matcher
    cannot place between the layer and its convolution, are not paired calls, and the layer is
    named where the truth names its `glu`.
  - `port_slot_attention torch_pos_grid_xy`: torch's position grid swaps x and y, which equals
    reading the position projection's input columns in another order; `run` finds that order,
    says so under conventions, and the run agrees (exit 0). A bug that a weight layout absorbs
    exactly cannot be told from that layout by the values.
  - `port_slot_attention paddle_softmax_over_inputs`: the softmax is inline in paddle's
    `slot_attn`; the GRU cell after it has no partner call, and it is named as the first module
    whose output differs, where the truth names `slot_attn`.
- **Ports of session 44 that still fail** (set 37, held out):
  - `port_griffin`, all five cases: the RG-LRU's decay is stored as `a_param` (softplus) on one
    side and `a_log` on the other; the matcher takes the log pair (an exp) where the relation is
    log of softplus, and the layer's gates (`w`/`b` of a class of the port's own against Linears)
    stay apart, so every case is named at the first RG-LRU.
  - `port_lightconv` `paddle_glu_uses_silu` (the clean twin aligns since session 52, when a
    kernel predictor's rows read as `[H, K]` against `[K, H]` became an alternative): the GLU is
    inline on paddle's side and torch's `nn.GLU` module (`layers.0.act`) is its own; the layer is
    named on both sides.
  - `port_ema_swa_train torch_ema_pre_step` (exit 0 until session 45, now right): the copies are
    paired by their values before the first step (`matching/_shadows.py`).
  - `port_focalnet paddle_mlp_gelu_tanh`, `torch_global_maxpool`: the MLP's hidden output is
    `[2, 64, 64]` tokens-last against `[2, 64, 8, 8]` channels-first with 64 tokens and 64
    channels, and is compared as a reshape, not a transpose; the global context's pool is
    inline on one side (the modulation is named, the truth names torch's pool module).
  - `port_sngan_disc torch_preact_inplace_relu`: the in-place ReLU overwrites the block's input;
    torch's `downsample` module is named where the truth names the block.
- **Ports of session 45 that still fail** (set 38, held out):
  - `port_xlstm` `paddle_decay_includes_own_gate`, `torch_fgate_no_log`, `torch_headnorm_whole_width`:
    paddle's cell module returns the head-normed state, torch's memory module the state before
    the norm (inline in the block); the memory receives q, k, v split into heads and the gate
    pre-activations sliced and transposed by the block's inline code, so nothing checked its
    inputs and the torch block is named where the truth names the memory.
  - `port_efficientvit`, four cases: the qkv 1x1 convolution is packed head by head inside a class
    of the port's own and the aggregation convolutions' channels are in another order; the run
    tries two groups of heads, not the channel reordering, and the attention stays apart.
  - `port_condconv` `paddle_kernel_no_transpose`, `torch_patch_order_hwc`: paddle's routing is a
    module of its own whose output nothing on the torch side holds (torch computes it inline),
    so it is named where the truth names the CondConv layer.
- **Ports of session 54 that still fail** (set 49, held out):
  - `port_timesnet` (all five, exit 2): paddle's port keeps three parallel Inception branches
    (1x1, 3x3, 5x5) averaged where torch's folds them into one 5x5 convolution whose kernel is the
    mean of the padded branch kernels, and one LayerNorm at the root called after each block where
    torch keeps one inside each block: branches against one summed kernel and one module against
    copies in *sequential* blocks (not parallel branches) are no pairing the matcher makes.
  - `port_deformable_attn` (all five): torch packs the sampling offsets and the attention logits
    into one Linear ordered `[heads, points, levels]`, paddle keeps two Linears ordered `[heads,
    levels, points]`: each part is a strided slice of the packed rows, permuted, which the packing
    rules (contiguous parts, one axis) do not make, so the first layer differs and every bug is
    named there.
  - `port_sam_decoder` (all five): a `q|k|v` against a bare `in_proj_weight`, the output tokens
    packed in one tensor against an IoU token and mask tokens apart; the weights do not all pair
    (exit 1 at the root at first contact, refused since the state pass keeps frozen parameters
    to its group rule).
  - `port_vqema_train torch_avg_div_inplace`: the codebook's average divided in place changes the
    codebook from step 1 on; it is named at the quantizers at step 1, while the truth wants an
    update-differs diagnosis (the truth's `where: optimizer`), which a buffer the forward rewrites
    is not.
- **Ports of session 53 that still fail** (set 48, held out):
  - `port_dcrnn` (all five, exit 2): each gate's diffusion convolution is five per-term Linears on
    paddle's side and one packed weight on torch's, whose rows interleave the terms (row `f*5 + m`)
    in another term order and whose columns pack the reset and update gates: a part cut along two
    axes at once, strided, is no pairing the matcher makes, and the biases left stay ambiguous.
  - `port_chatglm paddle_kv_tile`: paddle tiles the key/value groups inline before its one-sided
    `core_attention`, which receives the rotated query (found in torch's trace) and the tiled key
    and value (compared nowhere); it is named where the truth names the attention whose code tiles.
    The values cannot tell a tiled from an expanded arrangement where the other side keeps neither.
  - `port_chatglm paddle_rope_cache_bf16`, `torch_rope_cat_freqs`: the attentions are named where
    the truth names the rotary modules (paddle's model-level cache, torch's per-layer module): both
    one-sided, neither's output compared with the other's (as Nemotron's in session 51).
  - `port_mvit paddle_relpos_hw_swapped` (exit 0): the bug reads paddle's packed height|width table
    the other way round on a square map; the values pair the two halves the way the bug uses them,
    and the models are then one function.
  - `port_mvit torch_skip_pool_kernel2`: torch's shortcut max-pool (a module of its own, paddle's
    inline) is the bug; a call that only moves data is never named, so the block is.
  - `port_adafactor_mlm_train paddle_act_dropout_default`: paddle's activation dropout (a module,
    torch has none there) now drops; the layer is named where the truth names the dropout module.
- **Ports of session 52 that still fail** (set 47, held out):
  - `port_mobilenetv4` (all five, exit 2 until session 53, all five pass since): paddle's
    multi-query attention downsamples the key and the value with one shared depthwise conv and
    BatchNorm, torch (timm's layout) keeps one of each for the key and for the value; one module
    against two copies was no pairing the matcher made, and the transfer refused. Since session
    53 each copy takes the one module's values (`_copies`), the norm and packed projection left
    beside them pair in their counterpart, and the report says so (`module_copies`).
  - `port_pit torch_qkv_heads_first`: torch's bug reads its fused q|k|v head by head, which is the
    layout paddlenlp's fused projections use; the head-by-head pairing (heads of 8 rows in every
    stage, session 52) makes the two models one function and the run says so under conventions,
    exit 0 (at first contact, as many groups in every block fixed the first stage only and the
    second was named). A bug that a weight layout absorbs exactly cannot be told from that layout.
- **Ports of session 51 that still fail** (set 46, held out):
  - `port_nemotron paddle_rope_dim_full`: the attentions are named where the truth names paddle's
    rotary module (one per attention) and torch's (one at the root): both rotary modules are
    one-sided, at other levels, and neither's output is compared with the other's.
  - `port_dinov2 paddle_ls_gammas_swapped`: the blocks are named where the truth names torch's
    LayerScale module (`blocks.0.ls1`, correct code; paddle's block multiplies inline by the other
    gamma): the values cannot say which side's step is wrong.
  - `port_gatv2 paddle_leaky_default`: the layers are named where the truth names torch's LeakyReLU
    module; its input, built inline from the packed projection's halves, is compared nowhere.
- **Ports of session 50 that still fail** (set 45, held out):
  - `port_phi torch_qkv_view_heads_first`: paddle's rotary module (one-sided, its output compared
    with nothing) is named where the truth names the attention whose split is wrong; the
    operations inside were recorded and decided nothing.
  - `port_efficientformer paddle_pool_no_subtract`: the bug makes paddle's token mixer return its
    pooling child's output as it is, a value that agrees; the block's own code is named where the
    truth names the mixer.
  - `port_mobileone paddle_branch_assign`: the branch loop assigns instead of adding, so the ReLU
    module receives one branch's output (a value that agrees) and is named; the truth names the
    block. `torch_branch_copy_paste`: torch calls one branch twice and never the other; paddle's
    first branch is named as unverified where the truth names the block.
- **Ports of session 49 that still fail** (set 44, held out):
  - `port_cspdarknet`, all five cases exit 2: a Focus stem (space-to-depth, then a 3x3 convolution
    `[8, 12, 3, 3]`) against one 6x6 stride-2 convolution `[8, 3, 6, 6]`: the same elements, in a
    layout no table holds (each 6x6 tap is one phase's 3x3 tap); the transfer refuses with the
    mapping line for that pair.
  - `port_qwen2_moe paddle_expert_gate_up_swapped` (the clean twin aligns since session 50): the
    pairing in call order swaps the routed experts' halves of `w13`, which no name orders, and
    makes them one function; the shared expert (the same class, its `gate_up` ordered by its
    name) is then named where the truth names the first routed expert.
  - `port_stablelm paddle_qk_norm_shared`: the attention is named where the truth names the per-head
    norm; the rotary pairing that the clean twin confirms is not confirmed where a bug inside the
    attention keeps every call of it differing.
- **Ports of session 48 that still fail** (sets 41 to 43, held out):
  - A one-sided rotary or activation module beside inline code, the values unable to say which
    side's step differs: `port_phi3 torch_rope_k_uses_q` and `port_granite paddle_attn_scale_sqrt`,
    `torch_gqa_tiled` (torch's rotary module, called and correct, is named where the truth names
    the attention that misuses its tables), `port_mistral_swa torch_window_plus_one` (paddle's
    rotary module), `port_internlm2 torch_rope_default_theta` (torch's rotary tables are buffers of
    a module never called: the attention is named where the truth names that module),
    `port_olmo torch_rotate_half_sign` (the block where the truth names paddle's rotary module),
    `port_cohere paddle_swiglu_bf16` (torch's `act_fn` named where the product after it is
    rounded), `port_granite paddle_mlp_residual_unscaled` (the block where the truth names torch's
    `mlp_scale`), `port_llrd_adamw_train paddle_act_dropout` (the layer where the truth names its
    dropout module).
  - `port_olmo paddle_swiglu_gate_first` exits 0: the gate taken from the first half of a packed
    `ff_proj` whose name says no order; the values pair the halves so that the two models are one
    function (the halves-swapped reading is what makes OLMo's clean twin align).
  - `port_res2net`: `paddle_pool_exclusive` names torch's branch container, whose one-sided pooling
    the truth names (the packed branch convolutions' calls are not compared part against share);
    `paddle_short_no_pool` names torch's shortcut pooling module where the truth names the
    Sequential around it; `torch_no_hierarchy` names paddle's first branch ConvBN (a wrapper of its
    own whose children agree) where the truth names the block.
  - `port_regnety torch_stride_on_1x1`: the planted stride moves the very shapes that tell the
    block's 1x1 convolution from its shortcut, so the first run's registration-order pairing
    stands and the shortcut is named.
- **Ports of session 47 that still fail** (set 40, held out):
  - `port_botnet` `paddle_rel_offset_sign`, `torch_relh_no_transpose_back`: torch computes the
    2-D relative logits in a module of its own (`pos_emb`, holding the compared height and width
    tables), paddle inline in its attention; nothing on the paddle side holds the logits, so the
    attention is named on both sides where the truth names torch's `pos_emb`.
  - `port_ddpm_unet` `paddle_temb_cos_sin`: the sinusoidal embedding as `[cos, sin]` against
    `[sin, cos]` is read as the first time Linear's input columns in another order
    (`column_alternatives`: the layers are named differently on the two sides, so the order is
    taken for a layout each model keeps, as a NeRF encoding's is); the run exits 0 and says so.
- **Ports of session 46 that still fail** (set 39, held out):
  - `port_deltanet` `paddle_conv_pad_right`: the three right-padded short convolutions are parts
    of the torch side's one packed depthwise convolution; a part's call is not compared against
    its share of the packed call, so the attention is named where the truth names the
    convolutions.
  - `port_deltanet` `paddle_beta_fp16`: beta is computed inline on the paddle side and handed to
    torch's `delta_rule` module, whose other inputs agree: the torch `delta_rule` is named where
    the truth names the mixer (the same evidence as `torch_wy_diag_masked`, where it is right).
  - `port_dcn_cross` `torch_expert_single_tanh`: every torch expert drops a tanh; paddle computes
    the experts inline with one einsum, so the three expert calls stay unchecked and the torch
    cross layer is named where the truth names `experts.0`.
  - `port_gpt_neox` `torch_rope_freq_head_dim`: the torch rotary module's tables have no paddle
    record (paddle builds them inline in each attention); the torch attention is named where the
    truth names the rotary module.
- **A ConvLSTM bug named one layer in** (`port_convlstm torch_state_reset_each_step`, session 43 on
  this machine): after the gate order of layer 0 is settled, a second round pairs layer 1's
  fused convolution in parts and the divergence is named at `encoder.cell_list.1` /
  `rnn.layers.1`, where the truth names `encoder` / `rnn`; the session-start code gives the same
  row here.
- **One value judged against two noise floors** (session 41, mended in session 45): ResNeXt-50's
  clean twin differed at `layer4` by rel-L2 7e-5 while `layer4.2`, whose output is the very same
  values, passed as carried rounding. Passing a record because another of the same statistics
  agrees had been tried and withdrawn: a transposed square tensor has the same statistics. The
  container's output now shares its child's verdict where the statistics agree and the values,
  read element by element on each side, are the same (`_same_values` in `_carried.py`).
- **A row changed with identical recorded values** (session 39, explained in session 40):
  `port_mean_teacher_train paddle_teacher_eval` depended on the last bits of a sum. The writer
  sums a tensor alone or in a batch of small ones; the re-recorded model input was summed on the
  other path than the first module's input, the two records of one tensor were two values to the
  rules that follow a value, and a boundary was read there. Values are now known by their
  extremes and their sums to 9 significant digits; the row passes again.
- **Masked heads against packed, flipped ones** (`port_realnvp`, four cases, exit 2, held out,
  session 25): paddle's coupling heads hold inert masked entries the torch model does not have,
  and torch flips the vector after every coupling; the transfer refuses (ambiguous same-shape
  tensors) and names them; a mapping file cannot express a reversed slice.

## Families not in the corpus

- paddle.vision `alexnet`, `squeezenet1_0/1_1`, `googlenet`, `inception_v3`: not the same
  model as torchvision's (paddle's dropout scales in eval (`downscale_in_infer`), squeezenet's
  pools use `ceil_mode` on one side only, inception_v3's BatchNorm eps is 1e-5 vs 1e-3,
  alexnet has no adaptive pool). `mobilenet_v1` has no torchvision twin.
- paddlenlp `layoutxlm` (HF has no model
  class: it uses LayoutLMv2's) and `layoutlmv2` (HF's needs detectron2 for its visual
  backbone, which this environment does not have); `chatglm`, `glm`, `ernie_*` variants,
  `unimo`, `skep`, `tinybert`, `ppminilm`, `nezha`-like Chinese models other than NeZha
  (`chinesebert`, `roformerv2`, `gau_alpha`): no transformers twin.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("families", nargs="*", help="families to run (default: all)")
    ap.add_argument("--out", type=Path, help="where the runs go (default: a temporary directory)")
    ap.add_argument("--design", action="store_true", help="only the families the rules were designed on")
    ap.add_argument("--held-out", action="store_true", help="only the held-out families")
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    ap.add_argument("--reuse", action="store_true", help="compare the traces already in --out again (no recording)")
    ap.add_argument("--clean-only", action="store_true", help="only the clean twins (no planted bug)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run side by side (each records in processes of its own)")
    ap.add_argument("--flags", default="", help="more flags for every run, e.g. \"--ops\" or \"--referee\"")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    chosen = args.families or families()
    if args.design:
        chosen = [f for f in chosen if f not in HELD_OUT]
    if args.held_out:
        chosen = [f for f in chosen if f in HELD_OUT]
    with tempfile.TemporaryDirectory(prefix="padiff-table-") as tmp:
        root = args.out or Path(tmp)
        cases = [(fam, bug) for fam in chosen for bug in ([""] if args.clean_only else ["", *truth(fam)["bugs"]])]

        def one(case: tuple[str, str]) -> Row:
            fam, bug = case
            row = run_case(fam, bug, root / f"{fam}-{bug or 'clean'}", args.reuse, tuple(args.flags.split()))
            logger.info("%s %s: exit %d, %s / %s, %s, %.1f s", fam, row.case, row.exit_code, row.module_a,
                        row.module_b, "pass" if row.ok else "FAIL", row.wall_s)
            return row

        # each case is a subprocess of its own: several run side by side, the table keeps their order
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            rows: list[Row] = list(pool.map(one, cases))
        table = markdown(rows, args.reuse)
        sys.stdout.write(table + "\n")
        if args.markdown is not None:
            args.markdown.write_text(_DOC_HEAD + table + "\n" + _DOC_TAIL)
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

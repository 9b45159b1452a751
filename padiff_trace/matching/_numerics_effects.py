"""What padiff-trace knows about the numerics environment — as data, in one place.

``NUMERICS_EFFECTS``: the numerics settings a recording records (trace meta ``numerics``:
TF32, thread counts, oneDNN, determinism flags, the CPU, a curated list of environment
variables), what a difference in each is known to do, the ops it affects and the switch that
removes it. The recorder's adapters probe the keys (``numerics()``); the analyzer
(``analyzer/judging/_environment.py``) names the differences. The knowledge about layers, layouts and
conventions is in ``_knowledge.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NUMERICS_EFFECTS", "NumericsEffect", "numerics_effect"]


@dataclass(frozen=True)
class NumericsEffect:
    """What one recorded numerics setting (trace meta ``numerics``) is known to do.

    ``kinds``: lower-case fragments of the module types and op names it affects ("linear"
    matches ``Linear``, "mm" matches ``addmm``/``bmm``; ``("*",)``: any); empty when it does
    not change values by itself. ``switch``: what makes both sides agree on it, where one exists.
    ``gpu_only``: the setting acts only on GPU kernels (recorded everywhere: on CPU it is inert).
    ``rel_error``: the size of the differences it makes (rounding level unless said).
    ``set_by``: frameworks that set this environment variable themselves on import when it is
    unset (paddle: ``OMP_NUM_THREADS=1``): a value only such a framework's trace has, compared
    with another framework's trace, is that framework's default, not a setting of the user's.
    """

    label: str
    effect: str
    kinds: tuple[str, ...] = ()
    switch: str | None = None
    gpu_only: bool = False
    set_by: tuple[str, ...] = ()
    # the relative error (rel-L2) a difference in it typically makes in one fp32 op's output; a
    # first divergence far above it (x10) is not explained by it. None: no bound known
    rel_error: float | None = 1e-5


_MATMUL = ("matmul", "linear", "mm", "einsum", "attention", "bilinear")
_CONV = ("conv",)
_REDUCE = (*_MATMUL, *_CONV, "sum", "mean", "norm", "softmax", "var", "std", "reduce", "pool", "loss", "cumsum")
_NONDETERMINISTIC = ("scatter", "index", "embedding", "conv", "interpolate", "upsample", "gather", "cumsum", "bincount")
_THREADS = "reductions summed in another order (work split over another number of threads): last-bit differences"
_ONEDNN = "other CPU kernels (oneDNN): rounding-level differences in convolutions, matmuls and normalizations"

# recorded setting key -> what a difference in it does. Keys: "<framework>.<setting>" (probed by
# that framework's recorder adapter), "cpu.<property>" (/proc/cpuinfo) and "env.<VARIABLE>"
# (environment variables). This table is also the recorder's curated list: an environment
# variable is recorded only when "env.<NAME>" is a key here (or matches a key with "*"), a
# paddle flag only when "paddle.<FLAG>" is; nothing else of the environment enters a trace.
NUMERICS_EFFECTS: dict[str, NumericsEffect] = {
    # ---- torch (recorder/torch_.py)
    "torch.version": NumericsEffect(
        "torch version", "other kernels and defaults: rounding-level differences anywhere, larger where an "
        "algorithm changed", ("*",), "the same torch version on both sides", rel_error=None),
    "torch.cuda": NumericsEffect(
        "CUDA version of the torch build", "other cuBLAS/cuDNN kernels: rounding-level differences in matmuls, "
        "convolutions and reductions", _REDUCE, "the same torch CUDA build on both sides", gpu_only=True),
    "torch.cudnn": NumericsEffect(
        "cuDNN version (torch)", "other convolution algorithms: rounding-level differences in convolutions and RNNs",
        (*_CONV, "lstm", "gru", "rnn", "batchnorm"), "the same cuDNN on both sides", gpu_only=True),
    "torch.matmul_allow_tf32": NumericsEffect(
        "TF32 in CUDA matmuls (torch.backends.cuda.matmul.allow_tf32)",
        "fp32 matmul inputs rounded to a 10-bit mantissa: expect ~1e-3 relative error in matmuls", _MATMUL,
        "torch.backends.cuda.matmul.allow_tf32 = False, or NVIDIA_TF32_OVERRIDE=0", gpu_only=True, rel_error=1e-2),
    "torch.cudnn_allow_tf32": NumericsEffect(
        "TF32 in cuDNN convolutions (torch.backends.cudnn.allow_tf32)",
        "fp32 convolution inputs rounded to a 10-bit mantissa: expect ~1e-3 relative error in convolutions",
        (*_CONV, "lstm", "gru", "rnn"), "torch.backends.cudnn.allow_tf32 = False, or NVIDIA_TF32_OVERRIDE=0",
        gpu_only=True, rel_error=1e-2),
    "torch.float32_matmul_precision": NumericsEffect(
        "float32 matmul precision (torch.get_float32_matmul_precision())",
        "'high' or 'medium' let fp32 matmuls run in TF32 or bfloat16: expect ~1e-3 relative error or more in matmuls",
        _MATMUL, "torch.set_float32_matmul_precision('highest')", rel_error=3e-2),
    "torch.matmul_allow_fp16_reduced_precision_reduction": NumericsEffect(
        "reduced-precision reductions in fp16 matmuls", "fp16 matmul partial sums rounded to fp16: larger "
        "rounding error in fp16 matmuls", _MATMUL,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False", gpu_only=True, rel_error=3e-2),
    "torch.matmul_allow_bf16_reduced_precision_reduction": NumericsEffect(
        "reduced-precision reductions in bf16 matmuls", "bf16 matmul partial sums rounded to bf16: larger "
        "rounding error in bf16 matmuls", _MATMUL,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False", gpu_only=True, rel_error=3e-2),
    "torch.cudnn_deterministic": NumericsEffect(
        "cuDNN deterministic (torch.backends.cudnn.deterministic)", "nondeterministic convolution algorithms "
        "allowed: run-to-run differences in convolutions", (*_CONV, "lstm", "gru", "rnn"),
        "torch.backends.cudnn.deterministic = True (and benchmark = False)", gpu_only=True),
    "torch.cudnn_benchmark": NumericsEffect(
        "cuDNN autotuning (torch.backends.cudnn.benchmark)", "the fastest convolution algorithm is picked each "
        "run: other algorithms, rounding-level and run-to-run differences in convolutions", _CONV,
        "torch.backends.cudnn.benchmark = False", gpu_only=True),
    "torch.deterministic_algorithms": NumericsEffect(
        "deterministic algorithms (torch.are_deterministic_algorithms_enabled())", "nondeterministic kernels "
        "(atomic adds in scatter, index_add, embedding backward) allowed: run-to-run differences", _NONDETERMINISTIC,
        "torch.use_deterministic_algorithms(True) with CUBLAS_WORKSPACE_CONFIG=:4096:8", gpu_only=True),
    "torch.num_threads": NumericsEffect(
        "intra-op threads (torch.get_num_threads())", _THREADS, _REDUCE,
        "torch.set_num_threads(N) with the same N on both sides, or OMP_NUM_THREADS=N"),
    "torch.num_interop_threads": NumericsEffect(
        "inter-op threads (torch.get_num_interop_threads())", "independent ops scheduled on another number of "
        "threads: no effect on values in eager mode", (), "torch.set_num_interop_threads(N) with the same N"),
    "torch.mkldnn_enabled": NumericsEffect(
        "oneDNN kernels (torch.backends.mkldnn.enabled)", _ONEDNN, (*_CONV, *_MATMUL, "norm"),
        "torch.backends.mkldnn.enabled set the same on both sides"),
    "torch.cpu_capability": NumericsEffect(
        "CPU kernel capability (torch.backends.cpu.get_cpu_capability())", "vectorised CPU kernels of another "
        "width (AVX2 vs AVX512): reductions in another order, last-bit differences", _REDUCE,
        "ATEN_CPU_CAPABILITY=avx2 on both sides"),
    # ---- paddle (recorder/paddle_.py; flags read through paddle.get_flags where this paddle has them)
    "paddle.version": NumericsEffect(
        "paddle version", "other kernels and defaults: rounding-level differences anywhere, larger where an "
        "algorithm changed", ("*",), "the same paddle version on both sides", rel_error=None),
    "paddle.cuda": NumericsEffect(
        "CUDA version of the paddle build", "other cuBLAS/cuDNN kernels: rounding-level differences in matmuls, "
        "convolutions and reductions", _REDUCE, "the same paddle CUDA build on both sides", gpu_only=True),
    "paddle.cudnn": NumericsEffect(
        "cuDNN version (paddle)", "other convolution algorithms: rounding-level differences in convolutions",
        (*_CONV, "lstm", "gru", "rnn", "batchnorm"), "the same cuDNN on both sides", gpu_only=True),
    "paddle.onednn": NumericsEffect(
        "oneDNN compiled into paddle", _ONEDNN, (*_CONV, *_MATMUL, "norm"), "the same paddle build on both sides"),
    "paddle.num_threads": NumericsEffect(
        "intra-op threads (paddle.get_num_threads())", _THREADS, _REDUCE,
        "paddle.set_num_threads(N) with the same N on both sides"),
    "paddle.FLAGS_use_mkldnn": NumericsEffect(
        "oneDNN kernels (FLAGS_use_mkldnn)", _ONEDNN, (*_CONV, *_MATMUL, "norm", "softmax"),
        "FLAGS_use_mkldnn set the same on both sides (paddle.set_flags({'FLAGS_use_mkldnn': False}))"),
    "paddle.FLAGS_use_onednn": NumericsEffect(
        "oneDNN kernels (FLAGS_use_onednn)", _ONEDNN, (*_CONV, *_MATMUL, "norm", "softmax"),
        "FLAGS_use_onednn set the same on both sides (paddle.set_flags({'FLAGS_use_onednn': False}))"),
    "paddle.FLAGS_use_accuracy_compatible_kernel": NumericsEffect(
        "accuracy-compatible kernels (FLAGS_use_accuracy_compatible_kernel)", "kernels chosen to reproduce other "
        "frameworks' results, or paddle's faster ones: rounding-level differences", ("*",),
        "FLAGS_use_accuracy_compatible_kernel set the same on both sides", rel_error=1e-4),
    "paddle.FLAGS_paddle_num_threads": NumericsEffect(
        "math library threads (FLAGS_paddle_num_threads)", _THREADS, _REDUCE,
        "FLAGS_paddle_num_threads=N with the same N on both sides"),
    "paddle.FLAGS_cpu_deterministic": NumericsEffect(
        "deterministic CPU reductions (FLAGS_cpu_deterministic)", "gradients of shared inputs summed in "
        "another order: run-to-run differences", _REDUCE, "FLAGS_cpu_deterministic=1 on both sides"),
    "paddle.FLAGS_cudnn_deterministic": NumericsEffect(
        "cuDNN deterministic (FLAGS_cudnn_deterministic)", "nondeterministic convolution algorithms allowed: "
        "run-to-run differences in convolutions", (*_CONV, "pool"), "FLAGS_cudnn_deterministic=1 on both sides",
        gpu_only=True),
    "paddle.FLAGS_embedding_deterministic": NumericsEffect(
        "deterministic embedding backward (FLAGS_embedding_deterministic)", "embedding gradients accumulated with "
        "atomic adds: run-to-run differences", ("embedding",), "FLAGS_embedding_deterministic=1 on both sides",
        gpu_only=True),
    "paddle.FLAGS_cudnn_exhaustive_search": NumericsEffect(
        "cuDNN exhaustive search (FLAGS_cudnn_exhaustive_search)", "the fastest convolution algorithm is picked "
        "each run: other algorithms, rounding-level and run-to-run differences", _CONV,
        "FLAGS_cudnn_exhaustive_search=0 on both sides", gpu_only=True),
    "paddle.FLAGS_conv_workspace_size_limit": NumericsEffect(
        "cuDNN workspace limit (FLAGS_conv_workspace_size_limit)", "other convolution algorithms fit the "
        "workspace: rounding-level differences in convolutions", _CONV,
        "FLAGS_conv_workspace_size_limit set the same on both sides", gpu_only=True),
    "paddle.FLAGS_use_autotune": NumericsEffect(
        "kernel autotuning (FLAGS_use_autotune)", "kernels picked by timing: other algorithms, rounding-level "
        "and run-to-run differences", (*_CONV, *_MATMUL), "FLAGS_use_autotune=0 on both sides", gpu_only=True),
    "paddle.FLAGS_gemm_use_half_precision_compute_type": NumericsEffect(
        "fp16 GEMM compute type (FLAGS_gemm_use_half_precision_compute_type)", "fp16 matmuls accumulate in fp16: "
        "larger rounding error in fp16 matmuls", _MATMUL,
        "FLAGS_gemm_use_half_precision_compute_type=0 on both sides", gpu_only=True, rel_error=3e-2),
    "paddle.FLAGS_enable_cublas_tensor_op_math": NumericsEffect(
        "cuBLAS tensor-op math (FLAGS_enable_cublas_tensor_op_math)", "fp32 matmuls may run on tensor cores "
        "(TF32): expect ~1e-3 relative error in matmuls", _MATMUL,
        "FLAGS_enable_cublas_tensor_op_math=0, or NVIDIA_TF32_OVERRIDE=0", gpu_only=True, rel_error=1e-2),
    "paddle.FLAGS_*": NumericsEffect(
        "paddle flag", "may select other kernels: rounding-level differences", (), "the same flag on both sides"),
    # ---- the machine (recorder/_numerics.py, from /proc/cpuinfo on Linux)
    "cpu.model": NumericsEffect(
        "CPU model", "other vector units and library code paths (MKL/oneDNN dispatch): rounding-level "
        "differences in matmuls, convolutions and reductions", _REDUCE,
        "record both sides on the same machine (or MKL_CBWR=COMPATIBLE, ATEN_CPU_CAPABILITY=avx2)"),
    "cpu.avx2": NumericsEffect(
        "CPU has AVX2", "other vectorised kernels: last-bit differences in reductions", _REDUCE,
        "record both sides on the same machine"),
    "cpu.avx512f": NumericsEffect(
        "CPU has AVX-512", "other vectorised kernels (AVX-512 vs AVX2): last-bit differences in reductions",
        _REDUCE, "record both sides on the same machine, or ATEN_CPU_CAPABILITY=avx2"),
    "cpu.amx": NumericsEffect(
        "CPU has AMX", "bf16/int8 matmuls and convolutions on AMX tiles: other accumulation order",
        (*_MATMUL, *_CONV), "record both sides on the same machine (or ONEDNN_MAX_CPU_ISA=AVX512_CORE)", rel_error=3e-2),
    # ---- environment variables (recorded only these names; values over 200 characters dropped)
    "env.NVIDIA_TF32_OVERRIDE": NumericsEffect(
        "NVIDIA_TF32_OVERRIDE", "0 turns TF32 off in every CUDA library whatever the framework asks: ~1e-3 relative "
        "error in fp32 matmuls and convolutions where TF32 is on", (*_MATMUL, *_CONV),
        "NVIDIA_TF32_OVERRIDE=0 on both sides", gpu_only=True, rel_error=1e-2),
    "env.TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": NumericsEffect(
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1 forces TF32 in torch's cuBLAS matmuls: ~1e-3 relative error in "
        "matmuls", _MATMUL, "unset on both sides", gpu_only=True, rel_error=1e-2),
    "env.CUBLAS_WORKSPACE_CONFIG": NumericsEffect(
        "CUBLAS_WORKSPACE_CONFIG", "cuBLAS workspace layout: with ':4096:8' or ':16:8' cuBLAS is deterministic, "
        "else run-to-run differences in matmuls", _MATMUL, "CUBLAS_WORKSPACE_CONFIG=:4096:8 on both sides",
        gpu_only=True),
    "env.CUDA_LAUNCH_BLOCKING": NumericsEffect(
        "CUDA_LAUNCH_BLOCKING", "kernels launched synchronously: timing only, but with autotuning (cuDNN "
        "benchmark) it can change the algorithm picked", (), "CUDA_LAUNCH_BLOCKING set the same on both sides",
        gpu_only=True),
    "env.OMP_NUM_THREADS": NumericsEffect(
        "OMP_NUM_THREADS", _THREADS, _REDUCE, "OMP_NUM_THREADS=N with the same N on both sides", set_by=("paddle",)),
    "env.MKL_NUM_THREADS": NumericsEffect(
        "MKL_NUM_THREADS", _THREADS, _REDUCE, "MKL_NUM_THREADS=N with the same N on both sides"),
    "env.OPENBLAS_NUM_THREADS": NumericsEffect(
        "OPENBLAS_NUM_THREADS", _THREADS, _MATMUL, "OPENBLAS_NUM_THREADS=N with the same N on both sides"),
    "env.MKL_CBWR": NumericsEffect(
        "MKL_CBWR (MKL conditional numerical reproducibility)", "MKL code paths pinned (or not) to one "
        "instruction set: rounding-level differences in MKL matmuls", _MATMUL, "MKL_CBWR=COMPATIBLE on both sides"),
    "env.MKL_ENABLE_INSTRUCTIONS": NumericsEffect(
        "MKL_ENABLE_INSTRUCTIONS", "MKL limited to another instruction set: rounding-level differences in "
        "MKL matmuls", _MATMUL, "MKL_ENABLE_INSTRUCTIONS set the same on both sides"),
    "env.KMP_DETERMINISTIC_REDUCTION": NumericsEffect(
        "KMP_DETERMINISTIC_REDUCTION", "OpenMP reductions in a fixed (or free) order: run-to-run last-bit "
        "differences", _REDUCE, "KMP_DETERMINISTIC_REDUCTION=1 on both sides"),
    "env.ATEN_CPU_CAPABILITY": NumericsEffect(
        "ATEN_CPU_CAPABILITY", "torch's CPU kernels limited to another vector width: last-bit differences in "
        "reductions", _REDUCE, "ATEN_CPU_CAPABILITY set the same on both sides"),
    "env.ONEDNN_MAX_CPU_ISA": NumericsEffect(
        "ONEDNN_MAX_CPU_ISA", "oneDNN limited to another instruction set: rounding-level differences", (*_CONV, *_MATMUL),
        "ONEDNN_MAX_CPU_ISA set the same on both sides"),
    "env.DNNL_MAX_CPU_ISA": NumericsEffect(
        "DNNL_MAX_CPU_ISA", "oneDNN limited to another instruction set: rounding-level differences", (*_CONV, *_MATMUL),
        "DNNL_MAX_CPU_ISA set the same on both sides"),
    "env.ONEDNN_DEFAULT_FPMATH_MODE": NumericsEffect(
        "ONEDNN_DEFAULT_FPMATH_MODE", "oneDNN may compute fp32 in bf16/tf32 ('BF16', 'TF32', 'ANY'): ~1e-3 "
        "relative error or more", (*_CONV, *_MATMUL), "ONEDNN_DEFAULT_FPMATH_MODE=STRICT (or unset) on both sides", rel_error=3e-2),
    "env.DNNL_DEFAULT_FPMATH_MODE": NumericsEffect(
        "DNNL_DEFAULT_FPMATH_MODE", "oneDNN may compute fp32 in bf16/tf32 ('BF16', 'TF32', 'ANY'): ~1e-3 "
        "relative error or more", (*_CONV, *_MATMUL), "DNNL_DEFAULT_FPMATH_MODE=STRICT (or unset) on both sides", rel_error=3e-2),
    "env.FLAGS_*": NumericsEffect(
        "paddle flag set in the environment", "paddle reads FLAGS_* at start-up: they select kernels and "
        "determinism", (), "the same FLAGS_* environment on both sides"),
}


def numerics_effect(key: str) -> NumericsEffect | None:
    """The entry of ``NUMERICS_EFFECTS`` for a recorded setting key: the exact key, else the first
    key with a trailing ``*`` whose prefix it has (``env.FLAGS_foo`` -> ``env.FLAGS_*``)."""
    hit = NUMERICS_EFFECTS.get(key)
    if hit is not None:
        return hit
    for pattern, effect in NUMERICS_EFFECTS.items():
        if pattern.endswith("*") and key.startswith(pattern[:-1]):
            return effect
    return None

"""verify_truth hook for qwen: paddlenlp QWen packs q/k/v into one `c_attn` Linear
(weight [hidden, 3*hidden] as [in, out], bias [3*hidden], order q | k | v); HF Qwen2 has separate
q_proj / k_proj / v_proj. Transforms:
  "paddle columns A:B, transposed" -> torch weight = paddle_weight[:, A:B].T
  "paddle elements A:B"            -> torch bias   = paddle_bias[A:B]
"""
import re

_COLS = re.compile(r"^paddle columns (\d+):(\d+), transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        return paddle_array[:, a:b].T
    m = _ELEMS.match(transform)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        return paddle_array[a:b]
    return None

"""port_tagger transform: the paddle side projects concat(word [24], char [16]) with one Linear
proj.0 (weight [40, 32], paddle's [in, out]); the torch side has word_proj (24 -> 32) and
char_proj (16 -> 32) summed. "paddle rows A:B, transposed" takes rows A:B of the paddle weight
(its input features A:B) and transposes them to torch's [out, in]."""
import re

import numpy as np

_ROWS = re.compile(r"^paddle rows (\d+):(\d+), transposed")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    return np.ascontiguousarray(paddle_array[a:b].T)

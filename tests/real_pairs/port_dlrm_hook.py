"""port_dlrm transforms: each paddle table is an nn.Embedding(rows + 1, 8, padding_idx=rows)
with one padding row at the END (paddle has no EmbeddingBag; the -1 pads of a bag are looked
up there and come back as zeros), where the torch nn.EmbeddingBag(rows, 8) has no padding row.
"paddle rows 0:N ..." keeps the first N rows of the paddle table (the padding row is dropped)."""
import re

_ROWS = re.compile(r"^paddle rows 0:(\d+)")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is None:
        return None
    n = int(m.group(1))
    if n != torch_array.shape[0] or paddle_array.shape[0] != n + 1:
        raise ValueError(f"port_dlrm hook: {transform!r} with paddle {paddle_array.shape}, torch {torch_array.shape}")
    return paddle_array[:n]

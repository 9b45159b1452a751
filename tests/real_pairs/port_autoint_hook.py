"""port_autoint transforms: the paddle side keeps ONE shared categorical table and one [2, 8]
numeric-embedding matrix, and orders its fields [site_id, app_id, device_model, hour_frac,
price_log]; the torch side has one table per categorical field, one bias-free Linear(1, 8) per
numeric field, and orders its fields numeric first [hour_frac, price_log, site_id, app_id,
device_model].

Transforms:
  "paddle rows A:B"                      torch_array = paddle_array[A:B]
                                         (a field's slice of the shared table)
  "paddle row I as a column"             torch_array = paddle_array[I][:, None]
                                         (numeric row [8] -> Linear(1, 8) weight [8, 1])
  "paddle row blocks of N in order P, transposed"
                                         P = comma-separated paddle field indices in torch field
                                         order; torch_array = concat(paddle_array[p*N:(p+1)*N]
                                         for p in P).T  (fc_out [80, 1] -> head Linear [1, 80])
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle rows (\d+):(\d+)$")
_COL = re.compile(r"^paddle row (\d+) as a column$")
_BLOCKS = re.compile(r"^paddle row blocks of (\d+) in order ([\d,]+), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is not None:
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    elif (m := _COL.match(transform)) is not None:
        out = paddle_array[int(m.group(1))][:, None]
    elif (m := _BLOCKS.match(transform)) is not None:
        n = int(m.group(1))
        order = [int(s) for s in m.group(2).split(",")]
        out = np.concatenate([paddle_array[p * n:(p + 1) * n] for p in order], axis=0).T
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_autoint hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out

"""port_glow transforms outside verify_truth's built-in vocabulary (paddle -> torch).

- "exp of paddle log-scale": paddle ActNorm stores a LOG-scale `logs` [1, C, 1, 1]; torch's
  ActNorm stores the scale itself: torch_array = exp(paddle_array).
- "LU of the transposed paddle weight [in, out]: X": paddle's 1x1 conv is ONE plain matrix
  `weight` [C_in, C_out] (y_o = sum_c x_c W[c, o]); torch's InvConv2dLU builds its conv weight
  [C_out, C_in] = w_p @ (w_l * l_mask + l_eye) @ (w_u * u_mask + diag(s_sign * exp(w_s))).
  With W = paddle_array.T factored as W = P @ L @ U (partial pivoting, L unit lower triangular,
  U upper, exactly like scipy.linalg.lu), X is one of
    "P"                               -> w_p    = P
    "L (unit lower, diagonal kept)"   -> w_l    = L  (rosinality stores L with its unit
                                                      diagonal; l_mask removes it)
    "U (strict upper)"                -> w_u    = triu(U, 1)
    "log|diag U|"                     -> w_s    = log|diag(U)|
    "sign(diag U)"                    -> s_sign = sign(diag(U))
  Each torch tensor is a function of the ONE paddle weight, so the pairs may be applied in any
  order.
- "paddle interleaved output channels [shift even, scale odd] to torch halves [scale | shift]":
  paddle's coupling takes shift = h[:, 0::2], scale = h[:, 1::2] from its last conv; torch takes
  log_s, t = h.chunk(2, 1). Torch output channel k < C/2 is paddle channel 2k + 1, k >= C/2 is
  paddle channel 2(k - C/2): torch_array = paddle_array[perm] along the output-channel axis
  (conv weight [C, 16, 3, 3], bias [C], logs [C] -> torch scale [1, C, 1, 1]).
"""
import numpy as np

_LU_PREFIX = "LU of the transposed paddle weight [in, out]: "


def lu(a):
    """a = p @ l @ u (partial pivoting; l unit lower, u upper), float64."""
    n = a.shape[0]
    u = a.astype(np.float64).copy()
    lo = np.eye(n)
    perm = np.arange(n)
    for k in range(n - 1):
        piv = k + int(np.argmax(np.abs(u[k:, k])))
        if piv != k:
            u[[k, piv], :] = u[[piv, k], :]
            lo[[k, piv], :k] = lo[[piv, k], :k]
            perm[[k, piv]] = perm[[piv, k]]
        lo[k + 1:, k] = u[k + 1:, k] / u[k, k]
        u[k + 1:, :] -= np.outer(lo[k + 1:, k], u[k, :])
    return np.eye(n)[:, perm], lo, np.triu(u)


def convert(transform, paddle_array, torch_array):
    if transform == "exp of paddle log-scale":
        out = np.exp(paddle_array.astype(np.float64)).reshape(torch_array.shape)
    elif transform.startswith(_LU_PREFIX):
        part = transform[len(_LU_PREFIX):]
        p, lo, u = lu(paddle_array.T)
        s = np.diag(u)
        table = {
            "P": p,
            "L (unit lower, diagonal kept)": lo,
            "U (strict upper)": np.triu(u, 1),
            "log|diag U|": np.log(np.abs(s)),
            "sign(diag U)": np.sign(s),
        }
        if part not in table:
            return None
        out = table[part]
    elif transform == "paddle interleaved output channels [shift even, scale odd] to torch halves [scale | shift]":
        c = paddle_array.shape[0]
        perm = np.concatenate([np.arange(1, c, 2), np.arange(0, c, 2)])
        out = paddle_array[perm].reshape(torch_array.shape)
    else:
        return None
    out = np.ascontiguousarray(out.astype(torch_array.dtype))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_glow hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out

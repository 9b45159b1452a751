"""verify_truth hook for port_seresnext: paddle's SE Linears -> torch's SE 1x1 Conv2d kernels.

paddle `squeeze` / `excitation` are nn.Linear weights [in, out] applied to the pooled vector;
torch `se.fc1` / `se.fc2` are 1x1 Conv2d kernels [out, in, 1, 1] applied to the [N, C, 1, 1] map.
"""


def convert(transform, paddle_array, torch_array):
    if transform.startswith("transpose into 1x1 conv kernel"):
        return paddle_array.T.reshape(torch_array.shape)
    return None
